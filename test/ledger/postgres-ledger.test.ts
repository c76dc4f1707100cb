import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LEDGER_SCHEMA_VERSION } from '../../src/ledger/index.js';
import { openPostgresLedger, redactUrl, snapshotPostgresLedger } from '../../src/ledger/postgres/index.js';
import { Reconnecting } from '../../src/ledger/postgres/reconnect.js';
import { MATCHING_SQLITE_VERSION } from '../../src/ledger/postgres/schema.js';
import { WorkingCopy } from '../../src/ledger/postgres/working-copy.js';
import { startTestCluster, type TestCluster } from '../pg/cluster.js';

// The PostgreSQL ledger's working copy against a real server: a write resolves only once PostgreSQL committed it
// (the write-ahead rule across machines), the database going away holds writes back until it returns, and staying
// away past the limit fails them with a message that names the ledger without its password.

let cluster: TestCluster;
beforeAll(async () => {
  cluster = await startTestCluster();
});
afterAll(async () => cluster?.close());

const alone = { alone: true, states: [], signal: new AbortController().signal };

const account = (n: number) => ({
  importSupplier: 'ACME',
  externalAccountNumber: `A-${n}`,
  state: 'staged' as const,
  payload: '{}',
  fingerprint: 'f',
  originFile: 'accounts.csv',
  originLine: n + 1,
  origins: null,
});

async function query<T extends pg.QueryResultRow>(url: string, sql: string): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(sql)).rows;
  } finally {
    await client.end();
  }
}

it('matches the SQLite schema version: a new SQLite migration needs its PostgreSQL one', () => {
  expect(MATCHING_SQLITE_VERSION).toBe(LEDGER_SCHEMA_VERSION);
});

it('never shows a password', () => {
  expect(redactUrl('postgres://u:s3cr%40t@h:5432/db?sslmode=require')).toBe(
    'postgres://u:***@h:5432/db?sslmode=require',
  );
  expect(redactUrl('postgresql://u@h/db?password=zz&sslmode=verify-full')).toBe(
    'postgresql://u@h/db?password=***&sslmode=verify-full',
  );
  expect(redactUrl('postgresql://postgres@/db?host=/run/pg')).toBe('postgresql://postgres@/db?host=/run/pg');
});

describe('the working copy', () => {
  it('resolves a write once PostgreSQL holds it, with its events, issues and settings; a reopen sees it all', async () => {
    const url = await cluster.newDatabase();
    const opened = await openPostgresLedger(url, alone);
    const { ledger } = opened;
    const runId = ledger.startRun('push', {});
    expect(runId).toBe(opened.runId);
    const id = ledger.batch(() => ledger.insertAccount(account(1), { step: 'stage' }));
    ledger.batch(() =>
      ledger.replaceIssues(id, [
        { code: 'a', message: 'm1', source: 'local' },
        { code: 'b', message: 'm2', source: 'service' },
      ]),
    );
    ledger.recordDialect('spec');
    await ledger.updateAccount(id, { state: 'creating', addAttempt: true }, { step: 'create', from: 'staged' });
    // No flush, no close: the promise alone says PostgreSQL has it.
    const rows = await query<{ state: string; attempts: number }>(url, 'SELECT state, attempts::int FROM accounts');
    expect(rows).toEqual([{ state: 'creating', attempts: 1 }]);
    expect(await query(url, 'SELECT code, pos FROM account_issues ORDER BY pos')).toEqual([
      { code: 'a', pos: 0 },
      { code: 'b', pos: 1 },
    ]);
    expect(await query(url, `SELECT step FROM events ORDER BY id`)).toEqual([{ step: 'stage' }, { step: 'create' }]);
    ledger.batch(() => ledger.replaceIssues(id, []));
    await opened.close();
    expect(await query(url, 'SELECT * FROM account_issues')).toEqual([]);
    expect(await query(url, `SELECT value FROM settings WHERE key = 'dialect'`)).toEqual([{ value: 'spec' }]);
    const again = await openPostgresLedger(url, alone);
    expect(again.ledger.accountById(id)).toMatchObject({
      state: 'creating',
      attempts: 1,
      externalAccountNumber: 'A-1',
    });
    expect(again.ledger.read.runs()).toHaveLength(1);
    await again.close();
  });

  it('holds a write back while the database is away and lands it when it returns', async () => {
    const url = await cluster.newDatabase();
    const opened = await openPostgresLedger(url, { ...alone, unreachableSeconds: 60 });
    const { ledger } = opened;
    const id = ledger.batch(() => ledger.insertAccount(account(2), { step: 'stage' }));
    await ledger.updateAccount(id, { state: 'creating' });
    await cluster.stop();
    let landed = false;
    const write = ledger.updateAccount(id, { state: 'scheduled' }).then(() => (landed = true));
    // The write was committed locally and its shipment failed at least once: still not resolved.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(landed).toBe(false);
    await cluster.start();
    await write;
    expect(await query(url, 'SELECT state FROM accounts')).toEqual([{ state: 'scheduled' }]);
    await opened.close();
  });

  it('fails writes once the database stays away past the limit, naming the ledger without its password', async () => {
    const url = (await cluster.newDatabase()).replace('postgres@', 'postgres:pw-not-shown@');
    const opened = await openPostgresLedger(url, { ...alone, unreachableSeconds: 1 });
    const { ledger } = opened;
    const id = ledger.batch(() => ledger.insertAccount(account(3), { step: 'stage' }));
    await ledger.updateAccount(id, { nextCheckAt: 5 });
    await cluster.stop();
    try {
      const failure = await ledger.updateAccount(id, { state: 'creating' }).then(
        () => undefined,
        (error: unknown) => error as Error,
      );
      expect(failure?.message).toMatch(
        /^the PostgreSQL ledger postgresql:\/\/postgres:\*\*\*@\/.* was unreachable for 1 s/,
      );
      expect(failure?.message).not.toContain('pw-not-shown');
      await expect(ledger.updateAccount(id, { state: 'creating' })).rejects.toThrow(/unreachable/);
    } finally {
      await cluster.start();
      await opened.close().catch(() => undefined);
    }
    // Nothing of the failed write reached PostgreSQL: the account is as staged.
    expect(await query(url, 'SELECT state FROM accounts')).toEqual([{ state: 'staged' }]);
  });

  it('gives status and report a snapshot; a database without a ledger has none', async () => {
    const url = await cluster.newDatabase();
    expect(await snapshotPostgresLedger(url)).toBeUndefined();
  });
});

describe('a working copy', () => {
  it('keeps a write that is queued when a leased page is loaded: the page is not shipped back, the write is', async () => {
    const url = await cluster.newDatabase();
    const seed = await openPostgresLedger(url, alone);
    const [first = 0] = seed.ledger.batch(() =>
      [1, 2].map((n) => seed.ledger.insertAccount(account(n), { step: 'stage' })),
    );
    await seed.close();
    const connection = new Reconnecting({ label: 'test', connect: () => connected(url), unreachableMs: 5_000 });
    const copy = await WorkingCopy.open(connection, { origin: 'test', allowed: async () => undefined }, 99, [
      'runs',
      'accounts',
    ]);
    try {
      // An outcome nobody waits for is queued (it rides with the next commit); a leased page comes in meanwhile: its
      // load commits the queued write first, and that write must still be shipped.
      const columns = copy.columns();
      const page = await readPage(url, 'A-2', columns.accounts);
      // A shipment under way (the write's own shipment then waits for the next one).
      copy.ledger.batch(() => copy.ledger.updateAccountNow(first, { nextCheckAt: 1 }));
      const underWay = copy.shipper.ship();
      void copy.ledger.updateAccountDeferred(first, { state: 'creating', addAttempt: true });
      copy.load({ staging: false, accounts: page, items: [], issues: [] }, columns);
      await underWay;
      await copy.shipper.ship();
      expect(await query(url, 'SELECT external_account_number, state FROM accounts ORDER BY id')).toEqual([
        { external_account_number: 'A-1', state: 'creating' },
        { external_account_number: 'A-2', state: 'staged' },
      ]);
    } finally {
      await copy.close();
      await connection.close();
    }
  });
});

async function connected(url: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  return client;
}

async function readPage(url: string, number: string, columns: string[]): Promise<unknown[][]> {
  const client = await connected(url);
  try {
    const sql = `SELECT ${columns.join(', ')} FROM accounts WHERE external_account_number = $1`;
    return (await client.query({ text: sql, values: [number], rowMode: 'array' })).rows as unknown[][];
  } finally {
    await client.end();
  }
}
