import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { InvalidArgumentError } from 'commander';
import type { ServiceFlags } from '../config/service.js';
import { STEP_NAMES, type PushStep } from '../engine/index.js';
import { UsageError } from '../errors.js';

// push's options as commander gives them, and the parsers of its operator options: messages give the flag, what is
// expected and what was given.

/** The options of `migrate push <dir>` (push-flags.ts registers them). */
export interface PushCommandOptions extends ServiceFlags {
  dir: string;
  state: string;
  supplier?: string;
  config?: string;
  contract?: string;
  concurrency: number;
  rate?: number;
  retryErrored?: boolean;
  wait: boolean;
  waitTimeout: number;
  lostCreateChecks: number;
  batchBytes: number;
  firstAnswerTimeout: number;
  checkPreviouslyAdded: boolean;
  forceAddToCurrentStatement: boolean;
  sandbox?: boolean;
  json?: boolean;
  dryRun?: boolean;
  limit?: number;
  accounts?: string;
  only?: ReadonlySet<PushStep>;
  maxErrors?: { count: number } | { percent: number };
  logFile?: string;
  moveLedgerToService?: boolean;
  retryInvalid?: readonly string[];
  quiet?: boolean;
  progressInterval?: number;
  metricsFile?: string;
  metricsInterval: number;
  allowNoAccounts?: boolean;
  ledger?: string;
  ledgerTimeout?: number;
}

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
  const names = value
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '');
  const unknown = names.filter((name) => STEP_NAMES[name] === undefined);
  if (names.length === 0 || unknown.length > 0) {
    throw new InvalidArgumentError(
      `--only takes a comma-separated list of ${Object.keys(STEP_NAMES).join(', ')} (got "${value}").`,
    );
  }
  return new Set(names.map((name) => STEP_NAMES[name] as PushStep));
}

/** --retry-invalid CODE[,CODE...]: the service's error codes (letters, digits, _ . -). */
export function parseCodes(value: string): readonly string[] {
  const codes = value
    .split(',')
    .map((code) => code.trim())
    .filter((code) => code !== '');
  if (codes.length === 0 || codes.some((code) => !/^[A-Za-z0-9_.-]+$/.test(code)))
    throw new InvalidArgumentError(
      `--retry-invalid takes the service's error codes, comma-separated (e.g. invalid_import_supplier) (got ` +
        `"${value}").`,
    );
  return codes;
}

/** --max-errors N or N%: failures tolerated in this run. */
export function parseMaxErrors(value: string): { count: number } | { percent: number } {
  const match = /^(\d+(?:\.\d+)?)(%?)$/.exec(value.trim());
  const number = Number(match?.[1]);
  if (match && match[2] === '%' && number <= 100) return { percent: number };
  if (match && match[2] === '' && Number.isInteger(number)) return { count: number };
  throw new InvalidArgumentError(
    `--max-errors takes a whole number of failures (e.g. 25) or a percentage from 0% to 100% (e.g. 2%) (got ` +
      `"${value}").`,
  );
}

/** --accounts A,B,C or --accounts @file (one external account number per line; blank lines and # comments skipped). */
export async function readAccountsOption(value: string, cwd: string): Promise<ReadonlySet<string>> {
  let items: string[];
  if (value.startsWith('@')) {
    const file = value.slice(1);
    let text: string;
    try {
      text = await readFile(resolve(cwd, file), 'utf8');
    } catch (error) {
      throw new UsageError(
        `--accounts @${file}: cannot read the file (${(error as NodeJS.ErrnoException).code ?? 'error'}); give a ` +
          `file with one external account number per line`,
        'accounts_file_unreadable',
      );
    }
    items = text
      .split(/\r?\n/)
      .map((line) => line.trim())
      .filter((line) => line !== '' && !line.startsWith('#'));
  } else {
    items = value
      .split(',')
      .map((item) => item.trim())
      .filter((item) => item !== '');
  }
  if (items.length === 0)
    throw new UsageError(`--accounts ${value}: no external account number given`, 'accounts_empty');
  return new Set(items);
}
