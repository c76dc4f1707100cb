import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// The real binary's entry and exit (dist/ is built by test/global-setup.ts).
const root = fileURLToPath(new URL('../..', import.meta.url));
const run = (args: string[]) =>
  spawnSync(process.execPath, ['bin/migrate.js', ...args], { cwd: root, encoding: 'utf8' });

describe('migrate', () => {
  it('--version prints the package version with the commit and date of the build, exit 0', () => {
    const { version } = JSON.parse(readFileSync(`${root}/package.json`, 'utf8')) as { version: string };
    const build = JSON.parse(readFileSync(`${root}/dist/build-info.json`, 'utf8')) as { commit: string; date: string };
    const result = run(['--version']);
    expect(result.status).toBe(0);
    expect(result.stdout.trim()).toBe(`${version} (commit ${build.commit}, built ${build.date})`);
    expect(build.commit).toMatch(/^([0-9a-f]{12}(-modified)?|unknown)$/);
    expect(Date.parse(build.date)).not.toBeNaN();
  });

  it('a reader that stops early (`| head`): no stack trace, the command finishes with its own exit code', () => {
    for (const command of ['push --help', 'validate fixtures/sample --json']) {
      const result = spawnSync(
        'bash',
        ['-c', `node bin/migrate.js ${command} 2>/dev/null | head -c 20 >/dev/null; echo "exit=\${PIPESTATUS[0]}" >&2`],
        { cwd: root, encoding: 'utf8' },
      );
      expect(result.stderr).toBe('exit=0\n');
    }
  });

  it('an unknown command or option is a usage error: exit 2, a message, no stack trace', () => {
    for (const args of [['frobnicate'], ['push', '--frobnicate', 'x']]) {
      const result = run(args);
      expect(result.status).toBe(2);
      expect(result.stderr).toMatch(/unknown (command|option)/);
      expect(result.stderr).not.toMatch(/\n\s+at /);
    }
  });

  it('--api-key on any command but the sandbox: exit 2 saying why there is none and what to use; the key never echoed', () => {
    for (const args of [
      ['push', 'fixtures/sample', '--api-key', 'k-secret-1'],
      ['status', 'ACME', '--api-key=k-secret-1'],
    ]) {
      const result = run(args);
      expect(result.status).toBe(2);
      expect(result.stderr).toContain('there is no --api-key option');
      expect(result.stderr).toContain('MIGRATE_API_KEY');
      expect(result.stderr).toContain('--api-key-file FILE');
      expect(result.stderr + result.stdout).not.toContain('k-secret-1');
    }
  });

  it('without a build (no dist/) says how to build (npm ci: npm run build needs the dev dependencies): exit 2', () => {
    // A checkout wherever it lives: a space and a quote in its path.
    const copy = mkdtempSync(join(tmpdir(), "migrate no'build-"));
    try {
      cpSync(join(root, 'bin'), join(copy, 'bin'), { recursive: true });
      const result = spawnSync(process.execPath, [join(copy, 'bin', 'migrate.js'), 'status', 'ACME'], {
        encoding: 'utf8',
      });
      expect(result.status).toBe(2);
      expect(result.stderr).toContain(`(${join(copy, 'dist', 'bundle', 'main.js')} is missing)`);
      // The command it gives, pasted into a shell, goes to the checkout.
      const cd = /Build it once: (cd .+?) && npm ci /.exec(result.stderr)?.[1];
      expect(cd, result.stderr).toBeDefined();
      expect(spawnSync('bash', ['-c', `${cd ?? ''} && pwd`], { encoding: 'utf8' }).stdout.trim()).toBe(copy);
      expect(result.stderr).not.toContain('npm run build');
      expect(result.stderr).not.toMatch(/ERR_MODULE_NOT_FOUND|\n\s+at /);
    } finally {
      rmSync(copy, { recursive: true, force: true });
    }
  });
});
