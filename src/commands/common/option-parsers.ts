import { InvalidArgumentError } from 'commander';
import { STEP_NAMES, type PushStep } from '../../engine/index.js';
import { parseSize } from '../../shape/index.js';

// Parsers of option values, for commander: a bad value is commander's usage error (exit 2), whose message gives the
// flag, what is expected and what was given.

export type MaxErrors = { count: number } | { percent: number };

/**
 * The options' one number parser: `name`'s value as a number from `min` to `max` (a whole number unless `fractions`).
 */
export function numberOption(
  name: string,
  range: { min: number; max?: number; fractions?: boolean },
): (value: string) => number {
  const { min, max = Infinity, fractions = false } = range;
  const bounds = max === Infinity ? `of at least ${min}` : `from ${min} to ${max}`;
  const what = `${fractions ? 'a number' : 'a whole number'} ${bounds}`;
  return (value) => {
    const number = value.trim() === '' ? NaN : Number(value);
    if (!Number.isFinite(number) || number < min || number > max || (!fractions && !Number.isInteger(number)))
      throw new InvalidArgumentError(`${name} must be ${what} (got "${value}").`);
    return number;
  };
}

/** A calendar date YYYY-MM-DD (--today, --open-period-start). */
export function parseDate(value: string): string {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(value) || Number.isNaN(Date.parse(value)))
    throw new InvalidArgumentError(`expected a date YYYY-MM-DD, got ${JSON.stringify(value)}.`);
  return value;
}

/** `name`'s parser of a size (512MB, 2GB, 1.5GiB) in bytes, at least `least` bytes. */
export function sizeOption(name: string, least: number): (value: string) => number {
  return (value) => {
    const bytes = parseSize(value);
    if (bytes === undefined || bytes < least)
      throw new InvalidArgumentError(
        `${name} takes a size with its unit, KB, MB, GB or TB (powers of 1000) or KiB, MiB, GiB or TiB, of at least ` +
          `${least / 1e6}MB (e.g. 512MB or 2GB) (got "${value}").`,
      );
    return bytes;
  };
}

/** --only create,notes,...: the steps of the run. */
export function parseSteps(value: string): ReadonlySet<PushStep> {
  const names = listOf(value);
  const steps = names.flatMap((name) => STEP_NAMES[name] ?? []);
  if (names.length === 0 || steps.length < names.length)
    throw new InvalidArgumentError(
      `--only takes a comma-separated list of ${Object.keys(STEP_NAMES).join(', ')} (got "${value}").`,
    );
  return new Set(steps);
}

/** --retry-invalid CODE[,CODE...]: the service's error codes (letters, digits, _ . -). */
export function parseCodes(value: string): readonly string[] {
  const codes = listOf(value);
  if (codes.length === 0 || codes.some((code) => !/^[A-Za-z0-9_.-]+$/.test(code)))
    throw new InvalidArgumentError(
      `--retry-invalid takes the service's error codes, comma-separated (e.g. invalid_import_supplier) (got ` +
        `"${value}").`,
    );
  return codes;
}

/** --max-errors N or N%: failures tolerated in this run. */
export function parseMaxErrors(value: string): MaxErrors {
  const match = /^(\d+(?:\.\d+)?)(%?)$/.exec(value.trim());
  const number = Number(match?.[1]);
  if (match && match[2] === '%' && number <= 100) return { percent: number };
  if (match && match[2] === '' && Number.isInteger(number)) return { count: number };
  throw new InvalidArgumentError(
    `--max-errors takes a whole number of failures (e.g. 25) or a percentage from 0% to 100% (e.g. 2%) (got ` +
      `"${value}").`,
  );
}

/** A comma-separated list, its items trimmed, empty ones dropped. */
function listOf(value: string): string[] {
  return value
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '');
}
