import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { SHELLS } from '../../src/cli/completion.js';
import { HELP_TOPICS } from '../../src/cli/help-topics.js';
import { createProgram } from '../../src/cli/main.js';

// docs/commands.md against the program itself: every command and sub-command has its entry (a list item starting
// "- `migrate COMMAND"), the entry names every flag of the command, its synopsis (the entry's first code span) no flag
// the command does not have; the help topics and the completion's shells are named. A flag added, renamed or removed
// without the page fails here.

const root = join(import.meta.dirname, '..', '..');
const page = readFileSync(join(root, 'docs', 'commands.md'), 'utf8');
const program = createProgram(() => undefined);

/** Every command the program runs, sub-commands as `ledger copy`, with the command itself. */
function commandsOf(parent: Command, prefix = ''): Array<{ path: string; command: Command }> {
  return parent.commands.flatMap((command) => {
    const path = `${prefix}${command.name()}`;
    return command.commands.length > 0 ? commandsOf(command, `${path} `) : [{ path, command }];
  });
}

/** The list item of `migrate PATH`: its first line and the indented lines under it. */
function entryOf(path: string): string | undefined {
  const lines = page.split('\n');
  const first = lines.findIndex((line) => new RegExp(`^- \`migrate ${path}(?=[\\s\`])`).test(line));
  if (first === -1) return undefined;
  const rest = lines.slice(first + 1);
  const end = rest.findIndex((line) => !line.startsWith('  '));
  return [lines[first], ...rest.slice(0, end === -1 ? rest.length : end)].join('\n');
}

const flagsIn = (text: string): string[] => text.match(/--[a-z][a-z0-9-]*/g) ?? [];
const longFlags = (command: Command): string[] =>
  command.options.flatMap((option) => (option.long === undefined ? [] : [option.long]));

const commands = commandsOf(program);

describe('docs/commands.md names what the program knows', () => {
  it('has every command', () => {
    expect(commands.length).toBeGreaterThan(10);
    expect(commands.filter(({ path }) => entryOf(path) === undefined).map(({ path }) => path)).toEqual([]);
  });

  it.each(commands.map(({ path, command }) => [path, command] as const))(
    '%s: every flag in its entry, no other in its synopsis',
    (path, command) => {
      const entry = entryOf(path) ?? '';
      const named = new Set(flagsIn(entry));
      expect(longFlags(command).filter((flag) => !named.has(flag))).toEqual([]);
      const synopsis = /`(migrate [^`]*)`/.exec(entry)?.[1] ?? '';
      const known = new Set([...longFlags(command), '--help']);
      expect(flagsIn(synopsis).filter((flag) => !known.has(flag))).toEqual([]);
      for (const argument of command.registeredArguments) {
        const shown = argument.required ? `<${argument.name()}>` : `[${argument.name()}`;
        expect(synopsis, argument.name()).toContain(shown);
      }
    },
  );

  it('names every help topic, every completion shell and the program\u2019s own flags', () => {
    const help = entryOf('help') ?? '';
    for (const topic of HELP_TOPICS) expect(help).toContain(topic);
    const completion = entryOf('completion') ?? '';
    for (const shell of SHELLS) expect(completion).toContain(shell);
    for (const flag of longFlags(program)) expect(page).toContain(`migrate ${flag}`);
  });
});
