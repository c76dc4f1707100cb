import { type Command, InvalidArgumentError } from 'commander';
import { registerServiceOptions, type ServiceFlags } from '../../config/service.js';
import { RUN_DEFAULTS } from '../../defaults.js';
import { addOptions, type OptionRow } from '../shared/option-table.js';

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
  /** --run-config (added to every command of a cohort). */
  runConfig?: string | undefined;
  /** --state was given (flag or run configuration), not the default: a ledger must be there. */
  stateGiven?: boolean | undefined;
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

// prettier-ignore
const STATUS_OPTIONS: readonly OptionRow[] = [
  { group: 'Selection', flags: '--state <dir>', help: LEDGER_HELP, default: RUN_DEFAULTS.stateDir },
  { group: 'Selection', flags: '--ledger <url>',
    help: 'the results ledger in PostgreSQL (postgresql://...; else MIGRATE_LEDGER_URL)' },
  { group: 'Service', flags: '--offline', help: 'the ledger only: no request to the service, no credentials needed' },
  { group: 'Selection', flags: '--account <external_account_number>', help: STORY_HELP },
  { group: 'Output', flags: '--json', help: 'print one JSON document on stdout (every account as a row)' },
  { group: 'Output', flags: '--max-rows <n>', parse: maxRows, default: 20,
    help: 'accounts listed per section (counts are always complete)' },
  { group: 'Tuning', flags: '--max-status-checks <n>', parse: maxChecks, default: 500,
    help: 'v2 status requests at most, one per open account' },
];

/** Adds the table's options, then the service's, to the status command. */
export function registerStatusFlags(command: Command): Command {
  return registerServiceOptions(addOptions(command, STATUS_OPTIONS));
}
