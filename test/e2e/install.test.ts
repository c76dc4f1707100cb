import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

// docs/install.md, as a server is set up: the packed tarball (npm pack of this checkout's build) installed into an
// empty prefix by scripts/install-tarball.sh, the script the Dockerfile's install stage runs too; then the README's
// demo with the installed command, from a directory outside the checkout. The dependencies come from npm's cache
// (filled by the checkout's own `npm ci`); better-sqlite3 compiles itself where no prebuilt binary can be fetched.
const root = fileURLToPath(new URL('../..', import.meta.url));
const scratch = mkdtempSync(join(tmpdir(), 'install-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const MINUTES = 60_000;

describe('the packed tarball, installed into an empty prefix', () => {
  it('installs the migrate command, which runs the demo from anywhere', { timeout: 15 * MINUTES }, () => {
    const packed = spawnSync('npm', ['pack', '--ignore-scripts', '--pack-destination', scratch], {
      cwd: root,
      encoding: 'utf8',
    });
    expect(packed.status, packed.stderr).toBe(0);
    const tarball = readdirSync(scratch).find((name) => name.endsWith('.tgz'));
    expect(tarball).toBe(`energy-migration-migrate-${packageVersion()}.tgz`);

    const prefix = join(scratch, 'prefix');
    const installed = spawnSync('sh', [join(root, 'scripts', 'install-tarball.sh'), join(scratch, tarball!), prefix], {
      cwd: scratch,
      encoding: 'utf8',
    });
    expect(installed.status, installed.stderr).toBe(0);
    expect(installed.stdout).toMatch(
      new RegExp(`^${packageVersion().replaceAll('.', '\\.')} \\(commit \\S+, built `, 'm'),
    );

    const migrate = join(prefix, 'bin', 'migrate');
    const sample = join(prefix, 'lib', 'node_modules', '@energy-migration', 'migrate', 'fixtures', 'sample');
    const demo = spawnSync(migrate, ['push', sample, '--sandbox', '--state', join(scratch, 'state')], {
      cwd: scratch,
      encoding: 'utf8',
    });
    expect(demo.stderr).not.toContain('internal error');
    expect(demo.status, demo.stdout + demo.stderr).toBe(0);
    expect(demo.stdout).toContain('push finished: everything done');
    expect(demo.stdout).toMatch(/^ {4}done +50$/m);
    // The installed package holds what the command needs and no test, source or development file.
    const files = readdirSync(join(prefix, 'lib', 'node_modules', '@energy-migration', 'migrate'));
    expect(files.sort()).toEqual(['README.md', 'bin', 'dist', 'docs', 'fixtures', 'node_modules', 'package.json']);
  });
});

function packageVersion(): string {
  return (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string }).version;
}
