import { type Command, InvalidArgumentError } from 'commander';
import { registerServiceOptions, type ServiceFlags } from '../../config/service.js';
import { RUN_DEFAULTS } from '../../defaults.js';
import { addOptions, type OptionRow } from '../option-table.js';

// The options of `migrate status`, one table: --help is generated from it (the group and the line of help), and
// resolve.ts reads what commander parsed, nowhere else. The service's options are the ones push and validate share.

/** What commander hands the action: the table's options and the service's, parsed. */
export interface StatusFlags extends ServiceFlags {
  state: string;
  ledger?: string | undefined;
  offline?: boolean | undefined;
  account?: string | undefined;
  json?: boolean | undefined;
  maxRows: number;
  maxStatusChecks: number;
}

function count(name: string, max: number): (value: string) => number {
  return (value) => {
    const number = Number(value);
    if (!Number.isInteger(number) || number < 0 || number > max)
      throw new InvalidArgumentError(`${name} must be a whole number from 0 to ${max} (got "${value}").`);
    return number;
  };
}

const LEDGER_HELP = 'state directory holding the results ledger (without one: the service view only)';
const STORY_HELP = "one account's whole story: ledger history, service status (v2 and v1), records";
const [maxRows, maxChecks] = [count('--max-rows', 1e6), count('--max-status-checks', 1e6)];

const STATUS_OPTIONS: readonly OptionRow[] = [
  ['--state <dir>', 'Selection', LEDGER_HELP, undefined, RUN_DEFAULTS.stateDir],
  ['--ledger <url>', 'Selection', 'the results ledger in PostgreSQL (postgresql://...; else MIGRATE_LEDGER_URL)'],
  ['--offline', 'Service', 'the ledger only: no request to the service, no credentials needed'],
  ['--account <external_account_number>', 'Selection', STORY_HELP],
  ['--json', 'Output', 'print one JSON document on stdout (every account as a row)'],
  ['--max-rows <n>', 'Output', 'accounts listed per section (counts are always complete)', maxRows, 20],
  ['--max-status-checks <n>', 'Tuning', 'v2 status requests at most, one per open account', maxChecks, 500],
];

/** Adds the table's options, then the service's, to the status command. */
export function registerStatusFlags(command: Command): Command {
  return registerServiceOptions(addOptions(command, STATUS_OPTIONS));
}
