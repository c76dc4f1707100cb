import { type Command, InvalidArgumentError, Option } from 'commander';
import { registerServiceOptions, type ServiceFlags } from '../../config/service.js';
import { RUN_DEFAULTS } from '../../defaults.js';

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

interface StatusOption {
  flags: string;
  help: string;
  group: 'Selection' | 'Service' | 'Output' | 'Tuning';
  parse?: (value: string) => number;
  default?: string | number;
}

function count(name: string, max: number): (value: string) => number {
  return (value) => {
    const number = Number(value);
    if (!Number.isInteger(number) || number < 0 || number > max)
      throw new InvalidArgumentError(`${name} must be a whole number from 0 to ${max} (got "${value}").`);
    return number;
  };
}

export const STATUS_OPTIONS: readonly StatusOption[] = [
  {
    flags: '--state <dir>',
    help: 'state directory holding the results ledger (without one: the service view only)',
    group: 'Selection',
    default: RUN_DEFAULTS.stateDir,
  },
  {
    flags: '--ledger <url>',
    help: 'the results ledger in PostgreSQL (postgresql://...; else MIGRATE_LEDGER_URL)',
    group: 'Selection',
  },
  { flags: '--offline', help: 'the ledger only: no request to the service, no credentials needed', group: 'Service' },
  {
    flags: '--account <external_account_number>',
    help: "one account's whole story: ledger history, service status (v2 and v1), records",
    group: 'Selection',
  },
  { flags: '--json', help: 'print one JSON document on stdout (every account as a row)', group: 'Output' },
  {
    flags: '--max-rows <n>',
    help: 'accounts listed per section (counts are always complete)',
    group: 'Output',
    parse: count('--max-rows', 1_000_000),
    default: 20,
  },
  {
    flags: '--max-status-checks <n>',
    help: 'v2 status requests at most, one per open account',
    group: 'Tuning',
    parse: count('--max-status-checks', 1_000_000),
    default: 500,
  },
];

/** Adds the table's options, then the service's, to the status command. */
export function registerStatusFlags(command: Command): Command {
  for (const row of STATUS_OPTIONS) {
    const option = new Option(row.flags, row.help).helpGroup(`${row.group}:`);
    if (row.parse !== undefined) option.argParser(row.parse);
    if (row.default !== undefined) option.default(row.default);
    command.addOption(option);
  }
  return registerServiceOptions(command);
}
