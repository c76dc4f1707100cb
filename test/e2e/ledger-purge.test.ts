import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.js';
import { migratePostgres } from '../../src/ledger/postgres/schema.js';
import { startTestCluster, type TestCluster } from '../pg/cluster.js';
import { SAMPLE_OPEN_PERIOD, writesReceived } from './helpers.js';
import { runMigrate, SAMPLE_EXPORT } from './run-push.js';

// `migrate ledger purge` through the real binary: the sample export pushed to the sandbox, then purged. What a
// data-protection officer checks: none of the customers' dates of birth, e-mail addresses or note texts left in the
// ledger's bytes (SQLite: the file, its -wal and -shm, the snapshots; PostgreSQL: the database's relation files), and a
// rerun of push that sends nothing.

let root: string;
let sandbox: RunningSandbox;
/** The sample export with one account left invalid (a malformed e-mail address): its work is not done. */
let exportDir: string;
beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'ledger-purge-'));
  sandbox = await startSandbox({ processingMs: 0, openPeriodStart: SAMPLE_OPEN_PERIOD });
  exportDir = join(root, 'export');
  cpSync(SAMPLE_EXPORT, exportDir, { recursive: true });
  const customers = join(exportDir, 'customers.csv');
  writeFileSync(customers, readFileSync(customers, 'utf8').replace('mary30@example.org', 'mary30-example.org'));
});
afterAll(async () => {
  await sandbox.close();
  rmSync(root, { recursive: true, force: true });
});

const env = (): NodeJS.ProcessEnv => ({ MIGRATE_API_KEY: sandbox.apiKey });

/** The export's personal values per account number: dates of birth, e-mail addresses and note texts. */
function personalValues(): Map<string, string[]> {
  const values = new Map<string, string[]>();
  const add = (number: string, value: string | undefined): void => {
    if (value === undefined || value === '') return;
    values.set(number, [...(values.get(number) ?? []), value]);
  };
  const [header, ...rows] = readFileSync(join(exportDir, 'customers.csv'), 'utf8').trimEnd().split('\n');
  const columns = header!.split(',');
  for (const row of rows) {
    const cells = row.split(',');
    const number = cells[columns.indexOf('external_account_number')]!;
    add(number, cells[columns.indexOf('email')]);
    add(number, cells[columns.indexOf('date_of_birth')]);
  }
  for (const line of readFileSync(join(exportDir, 'notes.ndjson'), 'utf8').trimEnd().split('\n')) {
    const note = JSON.parse(line) as { external_account_number: string; body: string };
    add(note.external_account_number, note.body);
  }
  return values;
}

/** Every file under `dir`, as one buffer per path. */
function filesUnder(dir: string): Map<string, Buffer> {
  const files = new Map<string, Buffer>();
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true }))
    if (entry.isFile()) files.set(join(entry.parentPath, entry.name), readFileSync(join(entry.parentPath, entry.name)));
  return files;
}

/** The values found in any of the files, with where. */
function foundIn(files: Map<string, Buffer>, values: string[]): string[] {
  const found: string[] = [];
  for (const value of values)
    for (const [path, bytes] of files)
      if (bytes.includes(Buffer.from(value, 'utf8'))) found.push(`${value} in ${path}`);
  return found;
}

/** Account numbers per state, as the ledger says. */
function statesOf(rows: Array<{ external_account_number: string; state: string }>): Map<string, string> {
  return new Map(rows.map((row) => [row.external_account_number, row.state]));
}

function split(values: Map<string, string[]>, states: Map<string, string>): { done: string[]; notDone: string[] } {
  const done: string[] = [];
  const notDone: string[] = [];
  for (const [number, list] of values) (states.get(number) === 'done' ? done : notDone).push(...list);
  return { done, notDone };
}

describe('migrate ledger purge on a state directory', () => {
  const state = (): string => join(root, 'state');
  const ledgerStates = (): Map<string, string> => {
    const db = new Database(join(state(), 'ledger.sqlite'), { readonly: true });
    try {
      return statesOf(db.prepare('SELECT external_account_number, state FROM accounts').all() as never);
    } finally {
      db.close();
    }
  };

  it('removes the done accounts’ data from the file, its log and the snapshots; a rerun sends nothing', async () => {
    const first = await runMigrate(['push', exportDir, '--base-url', sandbox.url, '--state', state()], env());
    expect([0, 1, 5], first.stderr).toContain(first.code);
    const states = ledgerStates();
    const { done, notDone } = split(personalValues(), states);
    expect(done.length).toBeGreaterThan(20);
    expect(notDone.length).toBeGreaterThan(0);
    // Before: the ledger holds them (the check can fail).
    expect(foundIn(filesUnder(state()), done).length).toBeGreaterThan(0);

    const purge = await runMigrate(['ledger', 'purge', '--state', state()], env());
    expect(purge.code, purge.stderr).toBe(0);
    expect(purge.stdout).toMatch(/purged the personal data of \d+ account\(s\) whose work is done/);
    expect(purge.stdout).toContain('one taken of the purged ledger');
    expect(foundIn(filesUnder(state()), done)).toEqual([]);
    // The write-ahead log is empty; one snapshot is left, of the purged ledger.
    const wal = join(state(), 'ledger.sqlite-wal');
    expect(existsSync(wal) ? statSync(wal).size : 0).toBe(0);
    expect(readdirSync(join(state(), 'snapshots'))).toHaveLength(1);
    // Accounts not done keep their data (a person still works on them).
    expect(foundIn(filesUnder(state()), notDone).length).toBeGreaterThan(0);
    // Ids, states and counts are kept.
    expect(ledgerStates()).toEqual(states);

    const writes = writesReceived(sandbox);
    const rerun = await runMigrate(['push', exportDir, '--base-url', sandbox.url, '--state', state()], env());
    expect([0, 1, 5], rerun.stderr).toContain(rerun.code);
    expect(writesReceived(sandbox)).toBe(writes);
    expect(ledgerStates()).toEqual(states);
    // The rerun staged the export again: the purged accounts' data did not come back.
    const purgeAgain = await runMigrate(['ledger', 'purge', '--state', state()], env());
    expect(purgeAgain.stdout).toMatch(/rows changed: items 0, account_issues 0, events 0, accounts 0/);
  });

  it('--all without a terminal and without --yes: exit 2 saying so, nothing changed', async () => {
    const before = filesUnder(state()).get(join(state(), 'ledger.sqlite'));
    const refused = await runMigrate(['ledger', 'purge', '--all', '--state', state()], env());
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('no terminal is here to confirm it: give --yes');
    expect(filesUnder(state()).get(join(state(), 'ledger.sqlite'))).toEqual(before);
  });

  it('--all --yes: no date of birth, e-mail address or note text of the export is left; a rerun sends nothing', async () => {
    const purge = await runMigrate(['ledger', 'purge', '--all', '--yes', '--state', state()], env());
    expect(purge.code, purge.stderr).toBe(0);
    const all = [...personalValues().values()].flat();
    expect(foundIn(filesUnder(state()), all)).toEqual([]);
    const writes = writesReceived(sandbox);
    const rerun = await runMigrate(['push', exportDir, '--base-url', sandbox.url, '--state', state()], env());
    expect([0, 1, 5], rerun.stderr).toContain(rerun.code);
    expect(writesReceived(sandbox)).toBe(writes);
  });
});

describe('migrate ledger purge on a PostgreSQL ledger', () => {
  let cluster: TestCluster;
  let service: RunningSandbox;
  beforeAll(async () => {
    cluster = await startTestCluster();
    service = await startSandbox({ processingMs: 0, openPeriodStart: SAMPLE_OPEN_PERIOD });
  });
  afterAll(async () => {
    await service?.close();
    await cluster?.close();
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

  /** The database's relation files (base/<oid>: every table, index and TOAST table of it). */
  async function relationFiles(url: string): Promise<Map<string, Buffer>> {
    await query(url, 'CHECKPOINT');
    const [where] = await query<{ dir: string; oid: number }>(
      url,
      `SELECT current_setting('data_directory') AS dir, oid FROM pg_database WHERE datname = current_database()`,
    );
    return filesUnder(join(where!.dir, 'base', String(where!.oid)));
  }

  it('removes the data from the table files (VACUUM FULL); a rerun sends nothing', async () => {
    const url = await cluster.newDatabase();
    // The ledger's tables made first, their texts stored uncompressed, so that a value is found in the files as text.
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      await migratePostgres(client);
      await client.query(
        'ALTER TABLE accounts ALTER COLUMN payload SET STORAGE EXTERNAL; ' +
          'ALTER TABLE items ALTER COLUMN body SET STORAGE EXTERNAL, ALTER COLUMN natural_key SET STORAGE EXTERNAL',
      );
    } finally {
      await client.end();
    }
    const withLedger = { MIGRATE_API_KEY: service.apiKey, MIGRATE_LEDGER_URL: url };
    const first = await runMigrate(['push', exportDir, '--base-url', service.url], withLedger);
    expect([0, 1, 5], first.stderr).toContain(first.code);
    const states = statesOf(await query(url, 'SELECT external_account_number, state FROM accounts'));
    const { done, notDone } = split(personalValues(), states);
    expect(done.length).toBeGreaterThan(20);
    expect(foundIn(await relationFiles(url), done).length).toBeGreaterThan(0);

    const purge = await runMigrate(['ledger', 'purge'], withLedger);
    expect(purge.code, purge.stderr).toBe(0);
    expect(purge.stdout).toContain('VACUUM FULL');
    expect(foundIn(await relationFiles(url), done)).toEqual([]);
    expect(foundIn(await relationFiles(url), notDone).length).toBeGreaterThan(0);

    const all = await runMigrate(['ledger', 'purge', '--all', '--yes'], withLedger);
    expect(all.code, all.stderr).toBe(0);
    expect(foundIn(await relationFiles(url), [...personalValues().values()].flat())).toEqual([]);

    const writes = writesReceived(service);
    const rerun = await runMigrate(['push', exportDir, '--base-url', service.url], withLedger);
    expect([0, 1, 5], rerun.stderr).toContain(rerun.code);
    expect(writesReceived(service)).toBe(writes);
    expect(statesOf(await query(url, 'SELECT external_account_number, state FROM accounts'))).toEqual(states);
  });
});
