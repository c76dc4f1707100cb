import type { Command } from 'commander';
import { registerServiceOptions, type ServiceFlags } from '../../config/service.js';
import { RUN_DEFAULTS } from '../../defaults.js';
import {
  registerContractOption,
  registerMappingOptions,
  registerOpenPeriodOptions,
  type MappingFlags,
} from '../common/mapping-options.js';
import { numberOption } from '../common/option-parsers.js';
import { addOptions, ALLOW_NO_ACCOUNTS_OPTION, type OptionRow } from '../common/option-table.js';
import { SHAPE_LIMIT_OPTIONS } from '../common/shape-limits.js';

// The options of `migrate validate`, one table (--help comes from it), then the mapping file's and the service's,
// which push shares. resolve.ts reads what commander parsed, nowhere else.

/** What commander hands the action: the table's options, the mapping file's and the service's, parsed. */
export interface ValidateFlags extends ServiceFlags, Omit<MappingFlags, 'dir'> {
  json?: boolean;
  errorsCsv?: string;
  remote?: boolean;
  sandbox?: boolean;
  allowNoAccounts?: boolean;
  show?: string;
  concurrency: number;
}

const REMOTE =
  "also send every locally valid account to the service's validate endpoint; its errors are mapped back to file, " +
  'line and column';
const SHOW =
  'for these external account numbers (comma-separated): the rows read, the records a shape made of them, and the ' +
  'requests push would send';

// prettier-ignore
const VALIDATE_OPTIONS: readonly OptionRow[] = [
  { group: 'Output', flags: '--json',
    help: 'print one JSON document { ok, accounts, errors } instead of the readable report' },
  { group: 'Output', flags: '--errors-csv <file>', help: 'also write every error as a CSV row (file mode 0600)' },
  { group: 'Service', flags: '--remote', help: REMOTE },
  { group: 'Service', flags: '--sandbox',
    help: 'with --remote: validate against the built-in sandbox instead of the service' },
  ALLOW_NO_ACCOUNTS_OPTION,
  { group: 'Output', flags: '--show <accounts>', help: SHOW },
  { group: 'Tuning', flags: '--concurrency <n>', default: RUN_DEFAULTS.remoteValidateConcurrency,
    parse: numberOption('--concurrency', { min: 1, max: 64 }),
    help: 'with --remote: most requests in flight at once' },
  ...SHAPE_LIMIT_OPTIONS,
];

/** Adds the table's options, then the mapping file's and the service's, to the validate command. */
export function registerValidateFlags(command: Command): Command {
  return registerServiceOptions(
    registerContractOption(registerOpenPeriodOptions(registerMappingOptions(addOptions(command, VALIDATE_OPTIONS)))),
  );
}
