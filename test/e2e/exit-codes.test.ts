import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openLedgerReader } from '../../src/ledger/index.js';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.js';
import { push, ROOT, SAMPLE_PERIOD_FLAGS } from './helpers.js';

// The exit codes cron reads (README "Exit codes"), through the real binary: 1 when what is left a later run takes up by
// itself, 5 when a person must act, 5 where both; and exit 2 writes nothing: no state directory, no run, no --out.

const SAMPLE = join(ROOT, 'fixtures', 'sample');
const LEGACY = join(ROOT, 'fixtures', 'legacy-cis');

let root: string;
/** Processes every account for a minute: a --no-wait push leaves them all waiting. */
let slow: RunningSandbox;
beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'exit-codes-'));
  slow = await startSandbox({ processingMs: 60_000 });
});
afterAll(async () => {
  await slow.close();
  rmSync(root, { recursive: true, force: true });
});

function migrate(args: string[]): { code: number | null; stdout: string; stderr: string } {
  const run = spawnSync(process.execPath, [join(ROOT, 'bin', 'migrate.js'), ...args], {
    cwd: root,
    encoding: 'utf8',
    env: { ...process.env, NO_COLOR: '1', MIGRATE_API_KEY: slow.apiKey },
  });
  return { code: run.status, stdout: run.stdout, stderr: run.stderr };
}

/** A copy of an export with one text replaced in a file. */
function exportWith(name: string, from: string, file?: string, before?: string, after?: string): string {
  const dir = join(root, name);
  cpSync(from, dir, { recursive: true });
  if (file !== undefined && before !== undefined && after !== undefined) {
    const text = readFileSync(join(dir, file), 'latin1');
    expect(text).toContain(before);
    writeFileSync(join(dir, file), text.replace(before, after), 'latin1');
  }
  return dir;
}

const withInvalidEmail = (name: string): string =>
  exportWith(name, SAMPLE, 'accounts.csv', 'grace.patel1@example.org', 'grace.patel1-at-example');

function runsIn(state: string): number {
  const reader = openLedgerReader(state);
  try {
    return reader.read.runs(100).length;
  } finally {
    reader.close();
  }
}

describe('exit codes tell cron who must act', () => {
  it('an invalid account and nothing waiting: push and status exit 5', async () => {
    const state = join(root, 'invalid-state');
    const run = await push(slow, withInvalidEmail('invalid'), state, ['--sandbox']);
    expect(run.code, run.stderr).toBe(5);
    expect(run.stdout).toContain('1 account needs data fixes');
    const status = migrate(['status', 'ACME', '--offline', '--state', state]);
    expect(status.code, status.stderr).toBe(5);
    expect(status.stdout).toContain('next: 1 account needs data fixes');
  });

  it('accounts left waiting for processing (--no-wait), none invalid: push and status exit 1', async () => {
    const state = join(root, 'waiting-state');
    const run = await push(slow, SAMPLE, state, ['--no-wait']);
    expect(run.code, run.stderr).toBe(1);
    expect(run.stdout).toContain('the next push takes them up');
    const status = migrate(['status', 'ACME', '--offline', '--state', state]);
    expect(status.code, status.stderr).toBe(1);
  });

  it('both an invalid account and accounts waiting: push and status exit 5', async () => {
    const state = join(root, 'both-state');
    const run = await push(slow, withInvalidEmail('both'), state, ['--no-wait']);
    expect(run.code, run.stderr).toBe(5);
    const status = migrate(['status', 'ACME', '--offline', '--state', state]);
    expect(status.code, status.stderr).toBe(5);
  });

  it('validate: invalid data is exit 5, a valid export 0', () => {
    expect(migrate(['validate', withInvalidEmail('validate')]).code).toBe(5);
    expect(migrate(['validate', SAMPLE]).code).toBe(0);
  });
});

describe('exit 2 writes nothing', () => {
  const shapeError = (name: string): string =>
    exportWith(name, LEGACY, 'shape.sql', 'FROM cis_notes', 'FROM no_such_table');

  it('a shape.sql error: no state directory is made', async () => {
    const state = join(root, 'shape-error-state');
    const run = await push(slow, shapeError('shape-error'), state, ['--sandbox']);
    expect(run.code, run.stderr).toBe(2);
    expect(run.stderr).toMatch(/^migrate: shape\.sql:\d+:\d+: /m);
    expect(existsSync(state)).toBe(false);
  });

  it('an undocumented column: no state directory is made, and a state directory in use records no run', async () => {
    const undocumented = exportWith(
      'undocumented',
      SAMPLE,
      'accounts.csv',
      'external_account_number,import_supplier,',
      'external_account_number,legacy_flag,import_supplier,',
    );
    const text = readFileSync(join(undocumented, 'accounts.csv'), 'utf8').replace(/^(SAMPLE-\d+,)/gm, '$1x,');
    writeFileSync(join(undocumented, 'accounts.csv'), text);
    const fresh = join(root, 'undocumented-state');
    const refused = await push(slow, undocumented, fresh, ['--sandbox']);
    expect(refused.code, refused.stderr).toBe(2);
    expect(refused.stderr).toContain('legacy_flag');
    expect(existsSync(fresh)).toBe(false);

    const used = join(root, 'used-state');
    expect((await push(slow, SAMPLE, used, ['--sandbox', ...SAMPLE_PERIOD_FLAGS])).code).toBe(0);
    const before = readdirSync(used).sort();
    const again = await push(slow, undocumented, used, ['--sandbox']);
    expect(again.code, again.stderr).toBe(2);
    expect(readdirSync(used).sort()).toEqual(before);
    expect(runsIn(used)).toBe(1);
  });

  it('shape --out after a shape.sql error: no directory is made', () => {
    const out = join(root, 'shaped', 'out');
    const run = migrate(['shape', shapeError('shape-out-error'), '--out', out]);
    expect(run.code, run.stderr).toBe(2);
    expect(existsSync(join(root, 'shaped'))).toBe(false);
  });
});
