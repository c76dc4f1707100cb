import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
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

/** What bash completes for the words typed so far (the last one being completed). */
function bashCompletes(words: string[]): string[] {
  const script = join(scratch, 'migrate.bash');
  writeFileSync(script, run(['completion', 'bash']).stdout);
  const quoted = words.map((word) => `'${word}'`).join(' ');
  const probe = `source '${script}'; COMP_WORDS=(${quoted}); COMP_CWORD=${words.length - 1}; _migrate; printf '%s\\n' "\${COMPREPLY[@]}"`;
  const result = spawnSync('bash', ['-c', probe], { cwd: scratch, encoding: 'utf8' });
  expect(result.stderr).toBe('');
  return result.stdout.split('\n').filter((line) => line !== '');
}

describe('migrate completion SHELL', () => {
  it('bash: commands, each command\u2019s own options, help topics, files after a valued option', () => {
    expect(bashCompletes(['migrate', 'pu'])).toEqual(['push']);
    expect(bashCompletes(['migrate', 'push', '--concu'])).toEqual(['--concurrency']);
    expect(bashCompletes(['migrate', 'status', '--conc'])).toEqual([]);
    expect(bashCompletes(['migrate', 'help', 'e'])).toEqual(['environment', 'exit-codes']);
    writeFileSync(join(scratch, 'key.txt'), 'k');
    expect(bashCompletes(['migrate', 'push', '--api-key-file', 'ke'])).toEqual(['key.txt']);
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
