import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openLedgerReader } from '../../src/ledger/index.js';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.js';
import { startTestCluster, type TestCluster } from '../pg/cluster.js';
import { onSnapshot } from '../pg/ledger-dir.js';
import { writeE2eExport } from './export.js';
import { expectExactState, push, writesReceived } from './helpers.js';

// `migrate push --ledger postgresql://...`: the real binary against the sandbox, its ledger in a real PostgreSQL
// server (a throwaway cluster, test/pg/cluster.ts), checked against the sandbox's exact final state.

let root: string;
let cluster: TestCluster;
beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'push-pg-'));
  cluster = await startTestCluster();
});
afterAll(async () => {
  await cluster?.close();
  rmSync(root, { recursive: true, force: true });
});

/** A URL with a password in it: trust authentication ignores it, and no output or record may show it. */
const SECRET = 'pg-s3cret-never-shown';
const withPassword = (url: string): string => url.replace('postgresql://postgres@', `postgresql://postgres:${SECRET}@`);

async function runsOptions(url: string): Promise<string[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<{ options: string }>('SELECT options FROM runs ORDER BY id')).rows.map((r) => r.options);
  } finally {
    await client.end();
  }
}

describe('migrate push on a PostgreSQL ledger', () => {
  let sandbox: RunningSandbox | undefined;
  afterAll(async () => sandbox?.close());

  it('lands every valid account exactly once through faults; a rerun sends nothing; the password is never shown', async () => {
    sandbox = await startSandbox({
      processingMs: 100,
      failRate: 0.05,
      dropRate: 0.04,
      ambiguousRate: 0.04,
      retryAfterSeconds: 0,
      latencyMs: 2,
      seed: 17,
      flakyAttempts: 1,
    });
    const url = withPassword(await cluster.newDatabase());
    const data = writeE2eExport(join(root, 'faults'), 30, 'PGF');
    const state = join(root, 'faults', 'unused-state');
    // On the command line a password is refused (ps shows it to every user); the same URL in the environment is not.
    const inArgv = await push(sandbox, data.dir, state, ['--ledger', url]);
    expect(inArgv.code).toBe(2);
    expect(inArgv.stderr).toContain('a password on the command line can be read by every user of this host');
    expect(inArgv.stderr).toContain('PGPASSWORD');
    expect(inArgv.stderr).toContain('MIGRATE_LEDGER_URL');
    expect(inArgv.stderr).not.toContain(SECRET);
    expect(writesReceived(sandbox)).toBe(0);
    process.env['MIGRATE_LEDGER_URL'] = url;
    const first = await push(sandbox, data.dir, state, ['--concurrency', '4']).finally(() => {
      delete process.env['MIGRATE_LEDGER_URL'];
    });
    expect(first.code, first.stderr).toBe(5);
    expect(first.stdout).toContain('ledger: postgresql://postgres:***@/');
    await onSnapshot(url, (dir) => expectExactState(sandbox as RunningSandbox, data, dir, expect));
    sandbox.control.setFaults({ failRate: 0, dropRate: 0, ambiguousRate: 0 });
    sandbox.inspect.resetLog();
    process.env['MIGRATE_LEDGER_URL'] = url;
    const rerun = await push(sandbox, data.dir, state, ['--json']).finally(() => {
      delete process.env['MIGRATE_LEDGER_URL'];
    });
    expect(rerun.code, rerun.stderr).toBe(5);
    expect(writesReceived(sandbox)).toBe(0);
    for (const text of [first.stdout, first.stderr, rerun.stdout, rerun.stderr, ...(await runsOptions(url))])
      expect(text).not.toContain(SECRET);
    expect(await runsOptions(url)).toHaveLength(2);
  });

  it('survives SIGKILLs: a rerun on this host takes the dead run over at once, reconciles and ends exact', async () => {
    const killed = await startSandbox({ processingMs: 100, latencyMs: 15, seed: 11 });
    try {
      const url = await cluster.newDatabase();
      const data = writeE2eExport(join(root, 'crash'), 30, 'PGK');
      const state = join(root, 'crash', 'unused-state');
      for (const afterMs of [500, 900, 700]) {
        const result = await push(killed, data.dir, state, ['--ledger', url, '--concurrency', '3'], {
          afterMs,
          signal: 'SIGKILL',
        });
        expect(result.signal === 'SIGKILL' || result.code === 5, result.stderr).toBe(true);
      }
      const final = await push(killed, data.dir, state, ['--ledger', url, '--concurrency', '3']);
      expect(final.code, final.stderr).toBe(5);
      await onSnapshot(url, (dir) => expectExactState(killed, data, dir, expect));
    } finally {
      await killed.close();
    }
  });

  it('a URL that is not PostgreSQL is exit 2, without its password; a canary (--limit) has the ledger alone', async () => {
    const quick = await startSandbox({ processingMs: 20, seed: 3 });
    try {
      const url = await cluster.newDatabase();
      const data = writeE2eExport(join(root, 'alone'), 12, 'PGL', 'spec', { clean: true });
      const state = join(root, 'alone', 'unused-state');
      const wrong = await push(quick, data.dir, state, ['--ledger', 'mysql://u:hunter2@h/db']);
      expect(wrong.code).toBe(2);
      expect(wrong.stderr).toContain('not a PostgreSQL URL');
      expect(wrong.stderr).not.toContain('hunter2');
      const canary = await push(quick, data.dir, state, ['--ledger', url, '--limit', '4', '--json']);
      expect(canary.code, canary.stderr).toBe(0);
      expect(quick.inspect.accounts('ACME')).toHaveLength(4);
      const rest = await push(quick, data.dir, state, ['--ledger', url]);
      expect(rest.code, rest.stderr).toBe(0);
      await onSnapshot(url, (dir) => expectExactState(quick, data, dir, expect));
    } finally {
      await quick.close();
    }
  });
});

// The working copy is a SQLite ledger like any other: the same reader opens it (a guard against a schema drift).
it('the snapshot of a PostgreSQL ledger opens as a state directory', async () => {
  const url = await cluster.newDatabase();
  const sandbox = await startSandbox({ processingMs: 20, seed: 1 });
  try {
    const data = writeE2eExport(join(root, 'snap'), 5, 'PGS', 'spec', { clean: true });
    const result = await push(sandbox, data.dir, join(root, 'snap', 'unused'), ['--ledger', url]);
    expect(result.code, result.stderr).toBe(0);
    const counts = await onSnapshot(url, (dir) => {
      const reader = openLedgerReader(dir);
      try {
        return reader.read.counts().accounts;
      } finally {
        reader.close();
      }
    });
    expect(counts).toEqual({ done: 5 });
  } finally {
    await sandbox.close();
  }
});
