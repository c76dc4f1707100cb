import { type Command, Option } from 'commander';
import { SETTING_ENV } from '../../config/precedence.js';
import { RUN_DEFAULTS } from '../../defaults.js';
import { ALLOW_NO_ACCOUNTS } from '../../intake/accounts-present.js';

// A command's options as one table (docs/architecture.md, `commands/`): per option its flags, its --help group and
// line, and for a value its parser and default. Commander's registration, and so --help and the completion, come
// from it.

export interface OptionRow {
  flags: string;
  /** The heading --help lists it under (the headings of cli/help.ts). */
  group: 'Service' | 'Selection' | 'Output' | 'Tuning';
  help: string;
  parse?: (value: string) => unknown;
  default?: unknown;
  /** The environment variable that gives the value when the flag is not given (commander's Option.env). */
  env?: string;
}

export function addOptions(command: Command, rows: readonly OptionRow[]): Command {
  for (const row of rows) {
    const option = new Option(row.flags, row.help).helpGroup(`${row.group}:`).default(row.default);
    if (row.env !== undefined) option.env(row.env);
    command.addOption(row.parse === undefined ? option : option.argParser(row.parse));
  }
  return command;
}

/** push's and validate's option for an export that only adds records to accounts imported earlier. */
export const ALLOW_NO_ACCOUNTS_OPTION: OptionRow = {
  group: 'Selection',
  flags: ALLOW_NO_ACCOUNTS,
  help: 'the accounts file may hold no account: the export only adds post-import records to accounts imported earlier',
};

/** The results ledger's place, one help text for every command that reads or writes it. */
export const STATE_OPTION: OptionRow = {
  group: 'Selection',
  flags: '--state <dir>',
  default: RUN_DEFAULTS.stateDir,
  help: 'state directory holding the results ledger (one per migration cohort)',
};

/** The results ledger in PostgreSQL instead of a state directory's SQLite file. */
export const LEDGER_OPTION: OptionRow = {
  group: 'Selection',
  flags: '--ledger <url>',
  help: `the results ledger in PostgreSQL (postgresql://...; else ${SETTING_ENV.ledger}) instead of --state`,
};
