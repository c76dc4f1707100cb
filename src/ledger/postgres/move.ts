import { tmpdir } from 'node:os';
import type Database from 'better-sqlite3';
import type pg from 'pg';
import { errnoOf, FatalError, messageOf, UsageError } from '../../errors.js';
import { makePrivateDir, removePrivate } from '../../private-files.js';
import { openLedgerDb } from '../db.js';
import { copyIntoPostgres, copyIntoSqlite, type CopyCounts } from './copy.js';
import { firstContact } from './first-contact.js';
import { Reconnecting } from './reconnect.js';
import { migratePostgres } from './schema.js';
import { LEDGER_TABLES, tableSpec } from './tables.js';
import { newClient, redactUrl } from './url.js';
import { inTransaction } from './transaction.js';
import { endOnStop, type EndOnStop } from './stop.js';

/** The target database already holds a ledger: a copy goes only into an empty one (exit 2). */
export class TargetNotEmptyError extends UsageError {
  constructor(label: string, accounts: number, runs: number) {
    super(
      `the PostgreSQL ledger ${label} is not empty (${accounts} accounts, ${runs} runs); a SQLite ledger is copied ` +
        'only into an empty one: give a new database (or schema)',
      'ledger_not_empty',
    );
  }
}

export interface MoveResult {
  label: string;
  copied: CopyCounts;
  /** Rows per table in the source, and what differs between it and PostgreSQL read back (empty: identical). */
  source: CopyCounts;
  differences: string[];
  /** Committed: identical. Otherwise the transaction was rolled back and the database holds no ledger rows. */
  kept: boolean;
}

/**
 * Copies a SQLite ledger (its database, opened and migrated by the caller, under its state directory's lock) into the
 * empty PostgreSQL ledger at `url`, reads it back into a scratch SQLite file and compares the two row by row, all in
 * one transaction: committed only when the two are identical, rolled back otherwise and when `signal` stops the
 * command. The database then holds the whole ledger, compared, or none of it: never a part that a push would take for
 * the whole.
 */
export async function moveLedgerToPostgres(
  db: Database.Database,
  url: string,
  signal?: AbortSignal,
): Promise<MoveResult> {
  const label = redactUrl(url);
  const connected = await firstContact(url, label, '--to');
  const connection = new Reconnecting({ label, connect: () => connect(url), unreachableMs: 0, connected });
  let stop: EndOnStop | undefined;
  try {
    stop = await endOnStop(signal, { url, client: connected, end: () => connection.close() });
    await connection.run((client) => migratePostgres(client));
    let copied: CopyCounts = {};
    const compared = await connection.run(async (client) => {
      try {
        return await inTransaction(client, async () => {
          await refuseNonEmpty(client, label);
          copied = await copyIntoPostgres(db, client);
          const result = await compareWithPostgres(db, client);
          if (result.differences.length > 0) throw new NotIdentical(result);
          stop?.committing();
          return result;
        });
      } catch (error) {
        if (error instanceof NotIdentical) return error.result;
        throw error;
      } finally {
        stop?.committed();
      }
    });
    return { label, copied, ...compared, kept: compared.differences.length === 0 };
  } catch (error) {
    if (error instanceof UsageError || errnoOf(error) === undefined) throw error;
    throw new FatalError(
      `cannot copy into the PostgreSQL ledger ${label}: ${messageOf(error)}; nothing was copied ` +
        '(the copy is one transaction). Check --to and the database, then run it again.',
      'ledger_unavailable',
    );
  } finally {
    stop?.dispose();
    await connection.close();
  }
}

/** The copy read back differs from the source: thrown inside the transaction so that it is rolled back. */
class NotIdentical extends Error {
  constructor(readonly result: { source: CopyCounts; differences: string[] }) {
    super('the copy read back differs from the ledger');
  }
}

async function connect(url: string): Promise<pg.Client> {
  const client = newClient(url);
  await client.connect();
  return client;
}

/** Inside the copy's transaction: no push may be staging (its lock row is held until the copy commits). */
async function refuseNonEmpty(client: pg.Client, label: string): Promise<void> {
  await client.query(`SELECT holder FROM ledger_lock WHERE name = 'stage' FOR UPDATE`);
  const counts = await client.query<{ accounts: number; runs: number }>(
    'SELECT (SELECT COUNT(*) FROM accounts) AS accounts, (SELECT COUNT(*) FROM runs) AS runs',
  );
  const row = counts.rows[0];
  if (row !== undefined && (row.accounts > 0 || row.runs > 0))
    throw new TargetNotEmptyError(label, row.accounts, row.runs);
}

/**
 * Reads PostgreSQL back (within the copy's transaction: what it is about to commit) into a scratch SQLite ledger and
 * compares every table with `db`, row by row in key order.
 */
async function compareWithPostgres(
  db: Database.Database,
  client: pg.Client,
): Promise<{ source: CopyCounts; differences: string[] }> {
  const dir = makePrivateDir(tmpdir(), 'ledger-check');
  const copy = openLedgerDb(dir);
  try {
    await copyIntoSqlite(client, copy);
    return compareLedgers(db, copy);
  } finally {
    copy.close();
    removePrivate(dir);
  }
}

/** Row counts of `a` per table and the differences from `b` (the first few of each table, then a count). */
export function compareLedgers(
  a: Database.Database,
  b: Database.Database,
): { source: CopyCounts; differences: string[] } {
  const source: CopyCounts = {};
  const differences: string[] = [];
  for (const name of LEDGER_TABLES) {
    const spec = tableSpec(a, name);
    const columns = name === 'account_issues' ? spec.columns.slice(0, -1) : spec.columns;
    const order = name === 'account_issues' ? 'account_id, rowid' : spec.key.join(', ');
    const sql = `SELECT ${columns.join(', ')} FROM main.${name} ORDER BY ${order}`;
    const left = a.prepare(sql).raw(true).iterate() as IterableIterator<unknown[]>;
    const right = b.prepare(sql).raw(true).iterate() as IterableIterator<unknown[]>;
    let rows = 0;
    let differing = 0;
    for (;;) {
      const [x, y] = [left.next(), right.next()];
      if (x.done === true && y.done === true) break;
      if (x.done !== true) rows += 1;
      if (JSON.stringify(x.value) === JSON.stringify(y.value)) continue;
      differing += 1;
      if (differing <= 3) differences.push(`${name}: row ${rows} differs`);
    }
    if (differing > 3) differences.push(`${name}: ${differing} rows differ in all`);
    source[name] = rows;
  }
  return { source, differences };
}
