import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migratePostgres } from '../../src/ledger/postgres/schema.js';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.js';
import { startTestCluster, type TestCluster } from '../pg/cluster.js';
import { ROOT } from './helpers.js';
import { SAMPLE_OPEN_PERIOD } from './helpers.js';
import { runMigrate, SAMPLE_EXPORT } from './run-push.js';

// `migrate ledger copy` and `ledger purge` stopped by SIGINT, SIGTERM or SIGHUP through the real binary: exit 130, one
// line saying what was kept, and every store whole: the PostgreSQL copy none of it or all of it, a purge's rows all
// purged or none. To stop them mid-work without a clock, the test holds a lock the command's next statement needs (an
// uncommitted row the copy would write, the accounts' rows, a table VACUUM FULL rewrites) and signals once PostgreSQL
// shows the command's backend waiting on it; at the purge's question it types Ctrl-C on a terminal (script(1)).

const BIN = join(ROOT, 'bin', 'migrate.js');

let root: string;
let sandbox: RunningSandbox;
let cluster: TestCluster;
/** A state directory's ledger of the sample export, pushed once; each test copies it. */
let pushed: string;
beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'ledger-stop-'));
  [sandbox, cluster] = await Promise.all([
    startSandbox({ processingMs: 0, openPeriodStart: SAMPLE_OPEN_PERIOD }),
    startTestCluster(),
  ]);
  pushed = join(root, 'pushed');
  const push = await runMigrate(['push', SAMPLE_EXPORT, '--base-url', sandbox.url, '--state', pushed], {
    MIGRATE_API_KEY: sandbox.apiKey,
  });
  expect(push.code, push.stderr).toBe(0);
});
afterAll(async () => {
  await sandbox?.close();
  await cluster?.close();
  rmSync(root, { recursive: true, force: true });
});

interface Started {
  child: ChildProcessWithoutNullStreams;
  output: () => string;
  done: Promise<{ code: number | null; stdout: string; stderr: string }>;
}

/** The binary with its own TMPDIR (to see what it leaves there). */
function start(args: string[], env: NodeJS.ProcessEnv, temp: string): Started {
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd: root,
    env: { ...process.env, ...env, TMPDIR: temp, NO_COLOR: '1' },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const done = new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) =>
    child.on('close', (code) => resolve({ code, stdout, stderr })),
  );
  return { child, output: () => stdout + stderr, done };
}

async function connected(url: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  return client;
}

/**
 * Resolves once another backend of the database waits on a lock (the command blocked behind the test's), polling
 * PostgreSQL's own view; fails if the command ends first.
 */
async function untilBlocked(watcher: pg.Client, started: Started): Promise<string> {
  let ended = false;
  void started.done.then(() => (ended = true));
  for (;;) {
    const waiting = await watcher.query<{ query: string }>(
      `SELECT query FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() ` +
        `AND wait_event_type = 'Lock'`,
    );
    if (waiting.rows[0] !== undefined) return waiting.rows[0].query;
    if (ended) throw new Error(`the command ended without waiting: ${started.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** A copy of the pushed state directory's ledger, and a TMPDIR of its own. */
async function workplace(name: string): Promise<{ state: string; temp: string }> {
  const state = join(root, name);
  const temp = join(root, `${name}-tmp`);
  mkdirSync(temp);
  mkdirSync(state, { mode: 0o700 });
  const source = new Database(join(pushed, 'ledger.sqlite'), { readonly: true });
  try {
    await source.backup(join(state, 'ledger.sqlite'));
  } finally {
    source.close();
  }
  return { state, temp };
}

/** Accounts of a state directory's ledger that still hold their payload. */
function sqlitePayloads(state: string): number {
  const db = new Database(join(state, 'ledger.sqlite'), { readonly: true });
  try {
    return (db.prepare('SELECT COUNT(payload) AS n FROM accounts').get() as { n: number }).n;
  } finally {
    db.close();
  }
}

/** The stop's one line on stderr (after the run-origin line, if any). */
const stopLine = (stderr: string): string[] => stderr.split('\n').filter((line) => /interrupted/.test(line));

describe('migrate ledger copy stopped mid-copy', () => {
  it('exit 130; PostgreSQL holds none of the ledger, the state directory is unchanged; a rerun copies it whole', async () => {
    const { state, temp } = await workplace('copy');
    const before = sqlitePayloads(state);
    expect(before).toBeGreaterThan(0);

    const url = await cluster.newDatabase();
    const blocker = await connected(url);
    const watcher = await connected(url);
    try {
      // The ledger's tables made, then a settings row the copy writes last, held uncommitted: the copy has written
      // runs, accounts, items and events in its transaction when it waits on it.
      await migratePostgres(blocker);
      await blocker.query('BEGIN');
      await blocker.query(`INSERT INTO settings (key, value) VALUES ('service_url', 'held by the test')`);
      const copy = start(['ledger', 'copy', '--state', state, '--to', url], {}, temp);
      expect(await untilBlocked(watcher, copy)).toMatch(/INSERT INTO settings/i);
      copy.child.kill('SIGINT');
      const stopped = await copy.done;
      await blocker.query('ROLLBACK');
      expect(stopped.code, stopped.stderr).toBe(130);
      expect(stopLine(stopped.stderr)).toEqual([
        'migrate: interrupted by a stop signal; nothing was copied: the copy and its comparison are one ' +
          'transaction, rolled back, so the PostgreSQL ledger holds none of it, and the state directory is as it ' +
          'was; run it again.',
      ]);
      expect(stopped.stdout).toBe('');
      const counts = await watcher.query<{ accounts: number; runs: number; events: number }>(
        'SELECT (SELECT COUNT(*) FROM accounts)::int AS accounts, (SELECT COUNT(*) FROM runs)::int AS runs, ' +
          '(SELECT COUNT(*) FROM events)::int AS events',
      );
      expect(counts.rows[0]).toEqual({ accounts: 0, runs: 0, events: 0 });
      expect(sqlitePayloads(state)).toBe(before);
      // The scratch ledger of the comparison is gone; the state directory's lock is free and its ledger unchanged.
      expect(readdirSync(temp)).toEqual([]);
      const again = await runMigrate(['ledger', 'copy', '--state', state, '--to', url]);
      expect(again.code, again.stderr).toBe(0);
      expect(again.stdout).toContain('compared row by row before committing: identical.');
      const copied = await watcher.query<{ n: number }>('SELECT COUNT(payload)::int AS n FROM accounts');
      expect(copied.rows[0]?.n).toBe(before);
    } finally {
      await blocker.end();
      await watcher.end();
    }
  });
});

describe('migrate ledger purge stopped', () => {
  /** A PostgreSQL ledger copied from the pushed state directory. */
  async function postgresLedger(): Promise<string> {
    const url = await cluster.newDatabase();
    const copy = await runMigrate(['ledger', 'copy', '--state', pushed, '--to', url]);
    expect(copy.code, copy.stderr).toBe(0);
    return url;
  }
  /** Accounts with their payload, and items with their body: what a purge removes. */
  const payloads = async (client: pg.Client): Promise<number> =>
    (
      await client.query<{ n: number }>(
        `SELECT ((SELECT COUNT(payload) FROM accounts) + (SELECT COUNT(*) FROM items WHERE body <> ''))::int AS n`,
      )
    ).rows[0]?.n ?? -1;

  it('in its transaction (SIGTERM): exit 130, nothing purged, the stage lock given back', async () => {
    const url = await postgresLedger();
    const temp = join(root, 'purge-pg-tmp');
    mkdirSync(temp);
    const blocker = await connected(url);
    const watcher = await connected(url);
    try {
      const before = await payloads(watcher);
      expect(before).toBeGreaterThan(0);
      await blocker.query('BEGIN');
      // The accounts' rows (as an UPDATE of them locks them, which lets the items' updates check their references):
      // the purge's transaction has purged the items, issues and events when it waits on them.
      await blocker.query('SELECT id FROM accounts FOR NO KEY UPDATE');
      const purge = start(['ledger', 'purge', '--all', '--yes'], { MIGRATE_LEDGER_URL: url }, temp);
      expect(await untilBlocked(watcher, purge)).toMatch(/^UPDATE accounts/i);
      purge.child.kill('SIGTERM');
      const stopped = await purge.done;
      await blocker.query('ROLLBACK');
      expect(stopped.code, stopped.stderr).toBe(130);
      expect(stopLine(stopped.stderr)).toEqual([
        'migrate: interrupted by a stop signal; nothing was purged: the purge is one transaction, rolled back, and ' +
          'the ledger is as it was; run it again.',
      ]);
      expect(await payloads(watcher)).toBe(before);
      // The stage lock was given back: a purge now runs at once, not refused as "a push is running".
      const again = await runMigrate(['ledger', 'purge', '--all', '--yes'], { MIGRATE_LEDGER_URL: url });
      expect(again.code, again.stderr).toBe(0);
      expect(await payloads(watcher)).toBe(0);
    } finally {
      await blocker.end();
      await watcher.end();
    }
  });

  it('after its transaction, in VACUUM FULL (SIGHUP): exit 130 saying the rows are purged and a rerun finishes', async () => {
    const url = await postgresLedger();
    const temp = join(root, 'purge-vacuum-tmp');
    mkdirSync(temp);
    const blocker = await connected(url);
    const watcher = await connected(url);
    try {
      // VACUUM FULL of runs, the last table it rewrites, waits for the test's read of the table (an ACCESS SHARE lock
      // held to the end of the test's transaction).
      await blocker.query('BEGIN');
      await blocker.query('SELECT COUNT(*) FROM runs');
      const purge = start(['ledger', 'purge', '--all', '--yes'], { MIGRATE_LEDGER_URL: url }, temp);
      expect(await untilBlocked(watcher, purge)).toMatch(/VACUUM FULL runs/i);
      purge.child.kill('SIGHUP');
      const stopped = await purge.done;
      await blocker.query('ROLLBACK');
      expect(stopped.code, stopped.stderr).toBe(130);
      expect(stopLine(stopped.stderr)).toEqual([
        'migrate: interrupted by a stop signal after the personal data was removed from the rows; the ledger is ' +
          'consistent, but its files were not compacted yet (old values may remain in free pages, the write-ahead ' +
          'log or older snapshots): run ledger purge again to finish.',
      ]);
      expect(await payloads(watcher)).toBe(0);
      const again = await runMigrate(['ledger', 'purge', '--all', '--yes'], { MIGRATE_LEDGER_URL: url });
      expect(again.code, again.stderr).toBe(0);
      expect(again.stdout).toContain('VACUUM FULL');
    } finally {
      await blocker.end();
      await watcher.end();
    }
  });

  it('Ctrl-C at the question on a terminal: exit 130, the SQLite ledger unchanged', async () => {
    const { state, temp } = await workplace('purge-question');
    const before = sqlitePayloads(state);
    expect(before).toBeGreaterThan(0);
    // script(1) gives the command a terminal; what the test writes is typed on it.
    const command = `exec ${JSON.stringify(process.execPath)} ${JSON.stringify(BIN)} ledger purge --all --state ${state}`;
    const terminal = spawn('script', ['-qefc', command, '/dev/null'], {
      cwd: root,
      env: { ...process.env, TMPDIR: temp, NO_COLOR: '1' },
    });
    let output = '';
    const done = new Promise<number | null>((resolve) => terminal.on('close', resolve));
    terminal.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('Type yes to go on:') && !output.includes('\u0003sent')) {
        output += '\u0003sent';
        terminal.stdin.write('\u0003');
      }
    });
    expect(await done, output).toBe(130);
    expect(output).toContain(
      'migrate: interrupted by a stop signal; nothing was purged: the purge is one transaction, rolled back, and ' +
        'the ledger is as it was; run it again.',
    );
    expect(sqlitePayloads(state)).toBe(before);
    expect(readdirSync(temp)).toEqual([]);
  });
});
