import { type Command, Option } from 'commander';
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
}

export function addOptions(command: Command, rows: readonly OptionRow[]): Command {
  for (const row of rows) {
    const option = new Option(row.flags, row.help).helpGroup(`${row.group}:`).default(row.default);
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
