import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { convergesWithinFiveRuns, nightsUntilProcessed } from './cron-recipe.js';

// docs/install.md, as a server is set up: the packed tarball (npm pack of this checkout's build) installed into an
// empty prefix by scripts/install-tarball.sh, the script the Dockerfile's install stage runs too; then, with the
// installed command, the README's demo from a directory outside the checkout, and the operators' guide's cron recipe
// (docs/operators-guide.md section 3), which calls the installed command by its path. One install serves every test
// of this file. The dependencies come from npm's cache (filled by the checkout's own `npm ci`); better-sqlite3
// compiles itself where no prebuilt binary can be fetched.
const root = fileURLToPath(new URL('../..', import.meta.url));
const scratch = mkdtempSync(join(tmpdir(), 'install-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const MINUTES = 60_000;
const prefix = join(scratch, 'prefix');
/** The installed command, as the crontab calls it: by its path. */
const migrate = join(prefix, 'bin', 'migrate');
let packed: SpawnSyncReturns<string>;
let installed: SpawnSyncReturns<string> | undefined;

beforeAll(() => {
  packed = spawnSync('npm', ['pack', '--ignore-scripts', '--pack-destination', scratch], {
    cwd: root,
    encoding: 'utf8',
  });
  const tarball = readdirSync(scratch).find((name) => name.endsWith('.tgz'));
  if (packed.status !== 0 || tarball === undefined) return;
  installed = spawnSync('sh', [join(root, 'scripts', 'install-tarball.sh'), join(scratch, tarball), prefix], {
    cwd: scratch,
    encoding: 'utf8',
  });
}, 15 * MINUTES);

/** Fails a test of the installed command at once, with the reason, when the install did not succeed. */
function expectInstalled(): void {
  expect(packed.status, packed.stderr).toBe(0);
  expect(installed?.status, installed?.stderr).toBe(0);
}

describe('the packed tarball, installed into an empty prefix', () => {
  it('installs the migrate command, which runs the demo from anywhere', () => {
    expectInstalled();
    expect(readdirSync(scratch).find((name) => name.endsWith('.tgz'))).toBe(
      `energy-migration-migrate-${packageVersion()}.tgz`,
    );
    expect(installed?.stdout).toMatch(
      new RegExp(`^${packageVersion().replaceAll('.', '\\.')} \\(commit \\S+, built `, 'm'),
    );

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

describe("the operators' guide's crontab, with the installed command and the cohort's run configuration", () => {
  it('is what cron would run: --no-wait pushes converge, the status job mails until the migration is done, and every line of the push output has the time and its run id', async () => {
    expectInstalled();
    await nightsUntilProcessed(join(scratch, 'srv'), `"${migrate}"`);
  });

  it('converges against the sandbox in its own process (processing 0.3-0.9 s): 200 accounts with every record kind land within 5 runs, and status exits 0', async () => {
    expectInstalled();
    await convergesWithinFiveRuns(join(scratch, 'srv-own-process'), `"${migrate}"`);
  });
});

function packageVersion(): string {
  return (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string }).version;
}
