import { type Command, Option } from 'commander';

// A command's options as one table (docs/architecture.md, `commands/`): per option its flags, its --help group and
// line, and for a value its parser and default. Commander's registration, and so --help, come from it.

export type OptionRow = [
  flags: string,
  group: string,
  help: string,
  parse?: (value: string) => unknown,
  value?: unknown,
];

export function addOptions(command: Command, rows: readonly OptionRow[]): Command {
  for (const [flags, group, help, parse, value] of rows) {
    const option = new Option(flags, help).helpGroup(`${group}:`).default(value);
    command.addOption(parse === undefined ? option : option.argParser(parse));
  }
  return command;
}
