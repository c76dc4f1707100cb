import type { Command } from 'commander';
import { registerServiceOptions, type ServiceFlags } from '../../config/service.js';
import { numberOption } from '../common/option-parsers.js';
import { addOptions, LEDGER_OPTION, STATE_OPTION, type OptionRow } from '../common/option-table.js';

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

const STORY_HELP = "one account's whole story: ledger history, service status (v2 and v1), records";
const [maxRows, maxChecks] = [
  numberOption('--max-rows', { min: 0, max: 1e6 }),
  numberOption('--max-status-checks', { min: 0, max: 1e6 }),
];

// prettier-ignore
const STATUS_OPTIONS: readonly OptionRow[] = [
  STATE_OPTION,
  LEDGER_OPTION,
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
