import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { openLedgerReader } from '../../src/ledger/index.js';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.js';
import { binaryForAnotherUser } from './another-user.js';
import { push, ROOT, SAMPLE_OPEN_PERIOD, writesReceived } from './helpers.js';
import { SAMPLE_EXPORT } from './run-push.js';

// What a kill leaves of a ledger, and a ledger nobody may write, through the real binary (docs/ledger-recovery.md): a
// ledger file whose creation never finished (empty, or a database without its tables, as a SIGKILL during the first
// run's creation leaves it) is created afresh, or restored from the newest snapshot where one exists; status and
// report read a ledger in a directory they cannot write (a read-only mount, another user's state directory).

const BIN = join(ROOT, 'bin', 'migrate.js');
const LEDGER = 'ledger.sqlite';
let root: string;
let sandbox: RunningSandbox | undefined;
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'ledger-unfinished-'));
  // Another user (below) walks down to the state directories.
  chmodSync(root, 0o755);
});
afterEach(async () => {
  await sandbox?.close();
  sandbox = undefined;
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

function accountsDone(stateDir: string): number {
  const reader = openLedgerReader(stateDir);
  try {
    return reader.read.counts().accounts['done'] ?? 0;
  } finally {
    reader.close();
  }
}

function runsOf(stateDir: string): number {
  const reader = openLedgerReader(stateDir);
  try {
    return reader.read.runs(100).length;
  } finally {
    reader.close();
  }
}

describe('a ledger file whose creation never finished', () => {
  it('empty (0 bytes): the push creates it afresh and says so, instead of "no such table: runs"', async () => {
    sandbox = await startSandbox({ processingMs: 0, openPeriodStart: SAMPLE_OPEN_PERIOD });
    const state = join(root, 'empty');
    mkdirSync(state, { mode: 0o700 });
    writeFileSync(join(state, LEDGER), '', { mode: 0o600 });
    const run = await push(sandbox, SAMPLE_EXPORT, state);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).not.toContain('no such table');
    expect(run.stderr).toContain(`the ledger ${join(state, LEDGER)} was left unfinished`);
    expect(run.stderr).toContain('it is created afresh');
    expect(accountsDone(state)).toBe(50);
  });

  it('a database without its tables (WAL set, nothing committed): created afresh', async () => {
    sandbox = await startSandbox({ processingMs: 0, openPeriodStart: SAMPLE_OPEN_PERIOD });
    const state = join(root, 'tableless');
    mkdirSync(state, { mode: 0o700 });
    const db = new Database(join(state, LEDGER));
    db.pragma('journal_mode = WAL');
    db.close();
    const run = await push(sandbox, SAMPLE_EXPORT, state);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain('it is created afresh');
    expect(accountsDone(state)).toBe(50);
  });

  it('emptied after earlier runs: restored from the newest snapshot, and nothing done is sent again', async () => {
    sandbox = await startSandbox({ processingMs: 0, openPeriodStart: SAMPLE_OPEN_PERIOD });
    const state = join(root, 'snapshot');
    expect((await push(sandbox, SAMPLE_EXPORT, state)).code).toBe(0);
    // The second run's snapshot, taken as it started, holds the first run's outcomes.
    expect((await push(sandbox, SAMPLE_EXPORT, state)).code).toBe(0);
    const writes = writesReceived(sandbox);
    for (const suffix of ['-wal', '-shm']) rmSync(join(state, LEDGER + suffix), { force: true });
    writeFileSync(join(state, LEDGER), '');
    const run = await push(sandbox, SAMPLE_EXPORT, state);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toMatch(/was left unfinished .*; restored from the snapshot .*snapshots\/ledger-0+2-/);
    expect(accountsDone(state)).toBe(50);
    // The snapshot holds the first run (the second's own record came after it), and this run makes two.
    expect(runsOf(state)).toBe(2);
    expect(writesReceived(sandbox)).toBe(writes);
  });

  it('status and report read an unfinished ledger as none', () => {
    const state = join(root, 'unread');
    mkdirSync(state, { mode: 0o700 });
    writeFileSync(join(state, LEDGER), '');
    const status = spawnSync(process.execPath, [BIN, 'status', 'ACME', '--state', state, '--offline'], {
      encoding: 'utf8',
    });
    expect(status.stderr).not.toContain('no such table');
    expect(status.stderr).toContain(`no ledger in ${state}`);
  });
});

describe('a ledger in a directory the reader cannot write', () => {
  let readersBin: string | undefined;
  /** Runs the binary as a user who cannot write the state directory: another user when this one is root. */
  function asReader(args: string[]) {
    const asRoot = process.getuid?.() === 0;
    // The other user runs a copy of the command it can reach: the checkout may sit where only its owner may enter.
    readersBin ??= asRoot ? binaryForAnotherUser(join(root, 'command')) : BIN;
    const [command, argv] = asRoot
      ? ['runuser', ['-u', 'nobody', '--', process.execPath, readersBin, ...args]]
      : [process.execPath, [readersBin, ...args]];
    return spawnSync(command, argv, { encoding: 'utf8', cwd: root, env: { ...process.env, NO_COLOR: '1' } });
  }

  it('status and report read it (opened immutable), and write nothing beside it', async () => {
    sandbox = await startSandbox({ processingMs: 0, openPeriodStart: SAMPLE_OPEN_PERIOD });
    const state = join(root, 'read-only');
    expect((await push(sandbox, SAMPLE_EXPORT, state)).code).toBe(0);
    const before = readdirSync(state).sort();
    // A read-only mount as far as the reader goes: readable, not writable (root's modes do not stop root: the
    // reader is then another user).
    for (const name of before) chmodSync(join(state, name), name === 'snapshots' ? 0o755 : 0o644);
    chmodSync(state, 0o555);
    try {
      const status = asReader(['status', 'ACME', '--state', state, '--offline']);
      expect(status.status, status.stderr).toBe(0);
      expect(status.stdout).toMatch(/done\s+50/);
      const out = join(root, 'report-out');
      mkdirSync(out, { mode: 0o777 });
      chmodSync(out, 0o777);
      const report = asReader(['report', '--state', state, '--out', out]);
      expect(report.status, report.stderr).toBe(0);
      expect(readdirSync(state).sort()).toEqual(before);
    } finally {
      chmodSync(state, 0o700);
    }
  });
});
