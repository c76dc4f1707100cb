// Sizes of the shape engine's memory and temporary disk as an operator writes them (--shape-memory 512MB,
// "shape_temp_limit": "20GB"): the units of the engine's own settings, KB, MB, GB and TB in powers of 1000, KiB, MiB,
// GiB and TiB in powers of 1024, so that 1GB means here what it means in DuckDB's documentation.

const UNITS: Readonly<Record<string, number>> = {
  b: 1,
  kb: 1e3,
  mb: 1e6,
  gb: 1e9,
  tb: 1e12,
  kib: 2 ** 10,
  mib: 2 ** 20,
  gib: 2 ** 30,
  tib: 2 ** 40,
};

const SIZE = /^(\d+(?:\.\d+)?)\s*([a-z]+)$/i;

/** The bytes of a size such as `512MB`, `1.5GB` or `2GiB`; undefined when it is not one (a unit is required). */
export function parseSize(text: string): number | undefined {
  const match = SIZE.exec(text.trim());
  const unit = UNITS[match?.[2]?.toLowerCase() ?? ''];
  if (match === null || unit === undefined) return undefined;
  const bytes = Math.floor(Number(match[1]) * unit);
  return Number.isSafeInteger(bytes) && bytes > 0 ? bytes : undefined;
}

/** A size as an operator would write it: in GB from 1GB up, else in MB; whole where it is, else to one decimal. */
export function formatSize(bytes: number): string {
  const [unit, scale] = bytes >= 1e9 ? ['GB', 1e9] : ['MB', 1e6];
  return bytes % scale === 0 ? `${bytes / scale}${unit}` : `${(bytes / scale).toFixed(1)}${unit}`;
}
