import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { TEACHING } from '../../src/cli/help.js';
import { createProgram } from '../../src/cli/main.js';

// Every command's --help starts with its purpose, groups its options and ends with examples;
// every example parses with the real program (actions replaced, so nothing runs).
const root = fileURLToPath(new URL('../..', import.meta.url));
const help = (command: string): string =>
  spawnSync(process.execPath, ['bin/migrate.js', command, '--help'], { cwd: root, encoding: 'utf8' }).stdout;

const COMMANDS = ['validate', 'push', 'status', 'report', 'sandbox'];

/** An example's argv: the words before a pipe, after `migrate`. */
const argvOf = (example: string): string[] => example.split('|')[0]!.trim().split(/\s+/).slice(1);

describe('--help teaches', () => {
  it.each(COMMANDS)('%s: purpose first, options grouped, at least two examples last', (command) => {
    const text = help(command);
    const teaching = TEACHING[command]!;
    expect(text.split('\n')[0]).toBe(teaching.purpose);
    expect(teaching.purpose.length).toBeLessThanOrEqual(100);
    expect(text).toMatch(/^(Service|Selection|Output|Tuning):$/m);
    const examples = text.slice(text.indexOf('\nExamples:\n')).trim().split('\n').slice(1);
    expect(examples.length).toBeGreaterThanOrEqual(2);
    for (const line of examples) expect(line).toMatch(new RegExp(`^ {2}migrate ${command}\\b`));
    expect(text.trimEnd().split('\n').at(-1)).toMatch(/^ {2}migrate /);
  });

  it('every example parses with the real program', async () => {
    for (const [command, teaching] of Object.entries(TEACHING)) {
      for (const [example] of teaching.examples) {
        const program = createProgram(() => undefined);
        const ran: string[] = [];
        for (const sub of program.commands) sub.action(() => void ran.push(sub.name()));
        await program.parseAsync(['node', 'migrate', ...argvOf(example)]);
        expect(ran, example).toEqual([command]);
      }
    }
  });

  it('a wrong example would not parse', async () => {
    const program = createProgram(() => undefined);
    for (const sub of program.commands) sub.action(() => undefined);
    program.configureOutput({ writeErr: () => undefined });
    for (const sub of program.commands) sub.configureOutput({ writeErr: () => undefined });
    await expect(program.parseAsync(['node', 'migrate', 'status', 'ACME', '--max-rows', 'lots'])).rejects.toThrow(
      /--max-rows/,
    );
  });

  it("sandbox: the rehearsal's settings apart from the switches that exist for the project's tests", () => {
    const text = help('sandbox');
    const group = (name: string): string => {
      const start = text.indexOf(`\n${name}:\n`);
      expect(start, name).toBeGreaterThan(-1);
      const rest = text.slice(start + name.length + 3);
      return rest.slice(0, rest.search(/\n\S/));
    };
    const testOnly = group('Test-only switches (a service misbehaving on purpose)');
    for (const flag of ['--echo-credentials', '--html-rate', '--trickle-ms', '--no-request-log'])
      expect(testOnly).toContain(flag);
    expect(group('Faults (rehearsals)')).toContain('--latency-ms');
    expect(group('Faults (rehearsals)')).not.toContain('--echo-credentials');
    expect(group('Listening')).toContain('--port');
    // Every switch is in a group of its own: none is left under a bare "Options:" but --help.
    const options = text.indexOf('\nOptions:\n');
    const ungrouped = options === -1 ? '' : (text.slice(options).split('\n\n')[0] ?? '');
    expect(ungrouped.match(/--[a-z-]+/g) ?? []).toEqual(['--help']);
  });
});
