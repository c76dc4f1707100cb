import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type pg from 'pg';
import { openLedgerDb } from '../db.js';
import { Ledger } from '../ledger.js';
import { captureChanges } from './capture.js';
import { copyIntoSqlite, type CopyCounts } from './copy.js';
import { Reconnecting } from './reconnect.js';
import { holderId, RunLock } from './run-lock.js';
import { migratePostgres } from './schema.js';
import { Shipper } from './shipper.js';
import { newClient, redactUrl } from './url.js';

/** How long the database may stay away before a run stops (exit 3), unless the caller says otherwise. */
export const DEFAULT_UNREACHABLE_SECONDS = 120;

/** The database cannot be reached or refuses the connection at the start (exit 3 at the caller). */
export class PostgresLedgerUnavailableError extends Error {
  constructor(label: string, cause: unknown) {
    super(`cannot open the PostgreSQL ledger ${label}: ${(cause as Error).message ?? String(cause)}`, { cause });
    this.name = 'PostgresLedgerUnavailableError';
  }
}

/** A push's ledger on PostgreSQL: the engine's Ledger on a local working copy whose writes are shipped there. */
export interface PostgresLedger {
  ledger: Ledger;
  /** The working copy's directory (scratch files of the run go there too); removed by close(). */
  workDir: string;
  /** The URL without its password. */
  label: string;
  lock: RunLock;
  /** Ships what is left, releases the lock, closes the connections and removes the working copy. */
  close(): Promise<void>;
}

export interface OpenOptions {
  unreachableSeconds?: number;
  onAway?: (away: boolean) => void;
}

/**
 * Opens (creating and migrating) the PostgreSQL ledger at `url` for a push: takes its run lock, copies it into a
 * working copy (one consistent snapshot) and ships every later write of the working copy back (shipper.ts).
 */
export async function openPostgresLedger(url: string, options: OpenOptions = {}): Promise<PostgresLedger> {
  const label = redactUrl(url);
  const reach = (): Reconnecting =>
    new Reconnecting({
      label,
      connect: () => connect(url),
      unreachableMs: (options.unreachableSeconds ?? DEFAULT_UNREACHABLE_SECONDS) * 1000,
      ...(options.onAway === undefined ? {} : { onAway: options.onAway }),
    });
  const writes = reach();
  const locking = reach();
  const workDir = mkdtempSync(join(tmpdir(), 'migrate-ledger-'));
  const cleanups: Array<() => Promise<void> | void> = [
    () => rmSync(workDir, { recursive: true, force: true }),
    () => writes.close(),
    () => locking.close(),
  ];
  try {
    await opening(label, () => writes.run((client) => migratePostgres(client)));
    const lock = await opening(label, () => RunLock.acquire(locking, label, holderId()));
    cleanups.unshift(() => lock.release());
    const db = openLedgerDb(workDir);
    cleanups.unshift(() => void db.close());
    await opening(label, () => writes.run((client) => inSnapshot(client, () => copyIntoSqlite(client, db))));
    captureChanges(db);
    const shipper = new Shipper(db, writes);
    const ledger = new Ledger(db, { afterCommit: () => shipper.ship() });
    // Staging writes outside group commits; shipped at least this often, so PostgreSQL follows the run closely.
    const timer = setInterval(() => void shipper.ship().catch(() => undefined), 250);
    timer.unref();
    const close = async (): Promise<void> => {
      clearInterval(timer);
      try {
        ledger.flush();
        await shipper.ship();
      } finally {
        ledger.close();
        for (const cleanup of cleanups) await cleanup();
      }
    };
    return { ledger, workDir, label, lock, close };
  } catch (error) {
    for (const cleanup of cleanups) await Promise.resolve(cleanup()).catch(() => undefined);
    throw error;
  }
}

/** The database's own failures at the start become one clear message; a lock held by another run passes through. */
async function opening<T>(label: string, step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (error) {
    if (error instanceof Error && error.name === 'PostgresLedgerLockedError') throw error;
    throw new PostgresLedgerUnavailableError(label, error);
  }
}

async function connect(url: string): Promise<pg.Client> {
  const client = newClient(url);
  try {
    await client.connect();
  } catch (error) {
    await client.end().catch(() => undefined);
    throw error;
  }
  return client;
}

/** Runs `read` in one REPEATABLE READ, read-only transaction: every table as of one moment. */
async function inSnapshot<T>(client: pg.Client, read: () => Promise<T>): Promise<T> {
  await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
  try {
    const result = await read();
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  }
}

/**
 * A consistent copy of the PostgreSQL ledger at `url` in a new SQLite ledger file in a temporary directory, for
 * `status` and `report` (they read it with the same code as a state directory's ledger, so their output is the same
 * on either store). Undefined when the database holds no ledger yet.
 */
export async function snapshotPostgresLedger(
  url: string,
): Promise<{ stateDir: string; counts: CopyCounts; close: () => void } | undefined> {
  const label = redactUrl(url);
  const client = await opening(label, () => connect(url));
  try {
    const exists = await client.query<{ found: boolean }>(`SELECT to_regclass('ledger_schema') IS NOT NULL AS found`);
    if (exists.rows[0]?.found !== true) return undefined;
    const stateDir = mkdtempSync(join(tmpdir(), 'migrate-ledger-'));
    const db = openLedgerDb(stateDir);
    try {
      const counts = await inSnapshot(client, () => copyIntoSqlite(client, db));
      db.pragma('wal_checkpoint(TRUNCATE)');
      return { stateDir, counts, close: () => rmSync(stateDir, { recursive: true, force: true }) };
    } catch (error) {
      rmSync(stateDir, { recursive: true, force: true });
      throw error;
    } finally {
      db.close();
    }
  } finally {
    await client.end().catch(() => undefined);
  }
}
