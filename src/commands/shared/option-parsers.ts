import { InvalidArgumentError } from 'commander';
import { STEP_NAMES, type PushStep } from '../../engine/index.js';

// Parsers of option values, for commander: a bad value is commander's usage error (exit 2), whose message gives the
// flag, what is expected and what was given.

export type MaxErrors = { count: number } | { percent: number };

/** `name`'s parser of a whole number from 1 to `max`. */
export function positiveInt(name: string, max: number): (value: string) => number {
  return (value) => {
    const number = Number(value);
    if (!Number.isInteger(number) || number < 1 || number > max)
      throw new InvalidArgumentError(`${name} must be a whole number from 1 to ${max} (got "${value}").`);
    return number;
  };
}

/** --only create,notes,...: the steps of the run. */
export function parseSteps(value: string): ReadonlySet<PushStep> {
  const names = listOf(value);
  if (names.length === 0 || names.some((name) => STEP_NAMES[name] === undefined))
    throw new InvalidArgumentError(
      `--only takes a comma-separated list of ${Object.keys(STEP_NAMES).join(', ')} (got "${value}").`,
    );
  return new Set(names.map((name) => STEP_NAMES[name] as PushStep));
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
