import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// The real binary's entry and exit (dist/ is built by test/global-setup.ts).
const root = fileURLToPath(new URL('../..', import.meta.url));
const run = (args: string[]) =>
  spawnSync(process.execPath, ['bin/migrate.js', ...args], { cwd: root, encoding: 'utf8' });

describe('migrate', () => {
  it('--version prints the package version, exit 0', () => {
    const { version } = JSON.parse(readFileSync(`${root}/package.json`, 'utf8')) as { version: string };
    const result = run(['--version']);
    expect(result.status).toBe(0);
    expect(result.stdout.trim()).toBe(version);
  });

  it('an unknown command or option is a usage error: exit 2, a message, no stack trace', () => {
    for (const args of [['frobnicate'], ['push', '--frobnicate', 'x']]) {
      const result = run(args);
      expect(result.status).toBe(2);
      expect(result.stderr).toMatch(/unknown (command|option)/);
      expect(result.stderr).not.toMatch(/\n\s+at /);
    }
  });
});
