import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';

// The shape engine's temporary directory held to its limit (--shape-temp-limit). The engine bounds its own spill
// files (max_temp_directory_size), but not its database file, where the loaded sources and the sorted views are
// written, nor the sources' canonical copies: a view that grows without end (a cross join) would fill the disk through
// the database file. So the whole directory is measured a few times a second, and past the limit the engine's queries
// are interrupted; the error they end with is then told as the disk limit's (engine-limits.ts).

const EVERY_MS = 200;

export interface TempWatch {
  /** The directory went past its limit and the engine was interrupted. */
  readonly exceeded: boolean;
  stop(): void;
}

/** The bytes the files under `dir` take (allocated blocks: a sparse database file counts what it holds). */
export function directoryBytes(dir: string): number {
  let bytes = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const file = path.join(dir, entry.name);
    try {
      bytes += entry.isDirectory() ? directoryBytes(file) : statSync(file).blocks * 512;
    } catch {
      // Removed while measured (a spill file the engine dropped): it takes nothing now.
    }
  }
  return bytes;
}

/** Calls `stop` while the files under `dir` take more than `limit` bytes; checked every 200 ms until stopped. */
export function watchTempDir(dir: string, limit: number, stop: () => void): TempWatch {
  const watch = { exceeded: false, stop: () => clearInterval(timer) };
  const timer = setInterval(() => {
    let bytes: number;
    try {
      bytes = directoryBytes(dir);
    } catch {
      return;
    }
    if (bytes <= limit) return;
    // Again at every check while past the limit: a query started after the last interrupt is stopped too.
    watch.exceeded = true;
    stop();
  }, EVERY_MS);
  timer.unref();
  return watch;
}
