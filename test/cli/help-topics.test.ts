import { spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import type { Command } from 'commander';
import { OPTION_VALUES } from '../../src/cli/completion.js';
import { createProgram } from '../../src/cli/main.js';
import { ExitCode } from '../../src/errors.js';

// `migrate help environment`, `migrate help exit-codes` and `migrate completion SHELL`, through the real binary.
const root = fileURLToPath(new URL('../..', import.meta.url));
const run = (args: string[]) =>
  spawnSync(process.execPath, ['bin/migrate.js', ...args], { cwd: root, encoding: 'utf8' });
const scratch = mkdtempSync(join(tmpdir(), 'completion-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sourceFiles(path) : path.endsWith('.ts') ? [path] : [];
  });
}

describe('migrate help TOPIC', () => {
  it('environment names every MIGRATE_ variable the code reads (but the tests\u2019 own) and the standard ones', () => {
    const result = run(['help', 'environment']);
    expect(result.status).toBe(0);
    const read = new Set(
      sourceFiles(join(root, 'src')).flatMap((file) => readFileSync(file, 'utf8').match(/\bMIGRATE_[A-Z_]+\b/g) ?? []),
    );
    read.delete('MIGRATE_TEST_STOP_AT');
    expect(read.size).toBeGreaterThan(5);
    for (const name of [...read, 'PGPASSWORD', 'HTTPS_PROXY', 'NO_PROXY', 'TMPDIR', 'NO_COLOR'])
      expect(result.stdout, name).toMatch(new RegExp(`^ {2}[A-Z_, ]*\\b${name}\\b`, 'm'));
  });

  it('exit-codes lists every exit code with its meaning; push --help ends its options with them', () => {
    const result = run(['help', 'exit-codes']);
    expect(result.status).toBe(0);
    for (const code of Object.values(ExitCode)) expect(result.stdout).toMatch(new RegExp(`^ {2}${code} +\\S`, 'm'));
    const push = run(['push', '--help']).stdout;
    expect(push).toMatch(/Exit codes \(migrate help exit-codes\):\n {2}0 +done/);
  });

  it('help COMMAND is still that command\u2019s help; an unknown topic is exit 2 naming the topics', () => {
    expect(run(['help', 'push']).stdout).toBe(run(['push', '--help']).stdout);
    const unknown = run(['help', 'nope']);
    expect(unknown.status).toBe(2);
    expect(unknown.stderr).toContain('no help topic nope; the topics are environment, exit-codes.');
  });
});

/** The completion script of `shell`, written once into the scratch directory (zsh: as `_migrate` in a $fpath dir). */
function script(shell: 'bash' | 'zsh' | 'fish'): string {
  const file = shell === 'zsh' ? join(scratch, 'zsh', '_migrate') : join(scratch, `migrate.${shell}`);
  if (!existsSync(file)) {
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, run(['completion', shell]).stdout);
  }
  return file;
}

/** What bash completes for the words typed so far (the last one being completed). */
function bashCompletes(words: string[]): string[] {
  const quoted = words.map((word) => `'${word}'`).join(' ');
  const probe = `source '${script('bash')}'; COMP_WORDS=(${quoted}); COMP_CWORD=${words.length - 1}; _migrate; printf '%s\\n' "\${COMPREPLY[@]}"`;
  const result = spawnSync('bash', ['-c', probe], { cwd: scratch, encoding: 'utf8' });
  expect(result.stderr).toBe('');
  return result.stdout.split('\n').filter((line) => line !== '');
}

/** What fish completes for a command line (its own engine: `complete -C`). */
function fishCompletes(line: string): string[] {
  const probe = `source '${script('fish')}'; complete -C '${line}'`;
  const result = spawnSync('fish', ['--no-config', '-c', probe], { cwd: scratch, encoding: 'utf8' });
  expect(result.stderr).toBe('');
  return result.stdout.split('\n').flatMap((entry) => (entry === '' ? [] : [entry.split('\t')[0]!]));
}

// zsh completes only inside its line editor: an interactive zsh in a pseudo-terminal (zsh/zpty), the script
// autoloaded from $fpath as an installed one is, a Tab typed after the line; compadd reports each match it is given.
// Every read waits for a marker, never for a time.
const ZSH_CAPTURE = String.raw`zmodload zsh/zpty
zpty z zsh -f -i
zpty -w z "PROMPT=''; fpath=($1 \$fpath); autoload -U compinit; compinit -u -D"
zpty -w z "zstyle ':completion:*' list-grouped false; zstyle ':completion:*' insert-tab false"
zpty -w z "zle -C {,,}complete-word"
zpty -w z 'complete-word () { compadd () { if [[ ${'$'}{@[1,(i)(-|--)]} == *-(O|A|D)\ * ]]; then builtin compadd "$@"; return $?; fi; typeset -a hits; builtin compadd -A hits "$@"; (( $#hits )) && print -rl -- "<hit>"${'$'}{^hits}; builtin compadd -Q -U "" }; _main_complete; print -r -- "<done>" }'
zpty -w z "bindkey '^I' complete-word"
zpty -w z "print -r -- '<rea''dy>'"
zpty -r z line '*<ready>*'
zpty -w -n z "$2"$'\t'
while zpty -r z line; do
  [[ $line == *'<done>'* ]] && break
  [[ $line == *'<hit>'* ]] && print -r -- ${'$'}{${'$'}{line#*<hit>}//[$'\r\n']}
done
zpty -d z
`;

function zshCompletes(line: string): string[] {
  const capture = join(scratch, 'capture.zsh');
  if (!existsSync(capture)) writeFileSync(capture, ZSH_CAPTURE);
  const result = spawnSync('zsh', ['-f', capture, dirname(script('zsh')), line], { cwd: scratch, encoding: 'utf8' });
  expect(result.stderr).toBe('');
  return result.stdout.split('\n').filter((entry) => entry !== '');
}

const COMPLETES = { bash: (line: string) => bashCompletes(line.split(' ')), zsh: zshCompletes, fish: fishCompletes };

/** Sub-commands, every fixed set of values, and nothing where a value is free. */
const CASES: ReadonlyArray<readonly [line: string, words: readonly string[]]> = [
  ['migrate config ', ['show']],
  ['migrate ledger ', ['copy', 'forget', 'purge']],
  ['migrate ledger copy --', ['--help', '--state', '--to']],
  ['migrate push --dialect ', ['kraken', 'spec']],
  ['migrate status --header-form ', ['bare', 'jwt', 'token']],
  ['migrate sandbox --throttle-token-status ', ['200', '429', '503']],
  ['migrate push --only ', ['create', 'notes', 'payment_instructions', 'statements', 'transactions']],
  ['migrate push --concurrency ', []],
  ['migrate completion ', ['bash', 'fish', 'zsh']],
  ['migrate help e', ['environment', 'exit-codes']],
  ['migrate config show ', ['push', 'report', 'shape', 'status', 'validate']],
  ['migrate config show push --concu', ['--concurrency']],
];

describe('migrate completion SHELL', () => {
  it('bash: commands, each command\u2019s own options, help topics, files after a valued option', () => {
    expect(bashCompletes(['migrate', 'pu'])).toEqual(['push']);
    expect(bashCompletes(['migrate', 'push', '--concu'])).toEqual(['--concurrency']);
    expect(bashCompletes(['migrate', 'status', '--conc'])).toEqual([]);
    expect(bashCompletes(['migrate', 'help', 'e'])).toEqual(['environment', 'exit-codes']);
    writeFileSync(join(scratch, 'key.txt'), 'k');
    expect(bashCompletes(['migrate', 'push', '--api-key-file', 'ke'])).toEqual(['key.txt']);
    expect(bashCompletes(['migrate', 'push', '--state', 'ke'])).toEqual([]);
    expect(bashCompletes(['migrate', 'push', '--only', 'create,no'])).toEqual(['create,notes']);
  });

  it.each(['bash', 'zsh', 'fish'] as const)(
    '%s: sub-commands, every fixed set of values, nothing where a value is free',
    (shell) => {
      for (const [line, words] of CASES)
        expect([...new Set(COMPLETES[shell](line))].sort(), `${shell}: ${line}<TAB>`).toEqual(words);
    },
  );

  it('bash: every option of a fixed set completes to its values in every command that has it', () => {
    const program = createProgram(() => undefined);
    const commands: Array<{ words: string[]; command: Command }> = program.commands.flatMap((command) =>
      command.commands.length > 0
        ? command.commands.map((sub) => ({ words: [command.name(), sub.name()], command: sub }))
        : [{ words: [command.name()], command }],
    );
    let checked = 0;
    for (const [flag, { words }] of Object.entries(OPTION_VALUES))
      for (const { words: path, command } of commands) {
        if (!command.options.some((option) => option.long === flag)) continue;
        const typed = ['migrate', ...path, flag, ''];
        expect(bashCompletes(typed), typed.join(' ')).toEqual([...words]);
        checked += 1;
      }
    expect(checked).toBeGreaterThanOrEqual(8);
  });

  it("the values offered are the ones each option's parser takes", () => {
    const options = createProgram(() => undefined).commands.flatMap((command) => command.options);
    for (const [flag, { words }] of Object.entries(OPTION_VALUES))
      for (const option of options.filter((candidate) => candidate.long === flag && candidate.parseArg)) {
        for (const word of words) expect(() => option.parseArg!(word, undefined), `${flag} ${word}`).not.toThrow();
        expect(() => option.parseArg!('not-a-value', undefined), flag).toThrow();
      }
  });

  it.each([
    ['zsh', ['-n']],
    ['fish', ['--no-execute']],
  ])('%s: a script the shell parses, naming every option of push', (shell, check) => {
    const text = run(['completion', shell]).stdout;
    const file = join(scratch, `migrate.${shell}`);
    writeFileSync(file, text);
    const parsed = spawnSync(shell, [...check, file], { encoding: 'utf8' });
    expect(parsed.error).toBeUndefined();
    expect(parsed.status, parsed.stderr).toBe(0);
    const push = run(['push', '--help']).stdout.match(/--[a-z][a-z-]+/g) ?? [];
    for (const flag of new Set(push)) expect(text, flag).toContain(shell === 'fish' ? `-l ${flag.slice(2)}` : flag);
  });

  it('an unknown shell is exit 2 naming the shells', () => {
    const result = run(['completion', 'tcsh']);
    expect(result.status).toBe(2);
    expect(result.stderr).toContain('no completion for tcsh; give one of bash, zsh, fish.');
  });
});
