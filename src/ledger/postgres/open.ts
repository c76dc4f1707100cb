import { tmpdir } from 'node:os';
import type pg from 'pg';
import { InterruptedError, messageOf } from '../../errors.js';
import { makePrivateDir, removePrivate } from '../../private-files.js';
import { openLedgerDb } from '../db.js';
import type { Ledger } from '../ledger.js';
import type { LedgerCounts } from '../read.js';
import type { AccountState } from '../types.js';
import type { Forgotten } from '../forget.js';
import { Coordinator } from './coordinator.js';
import { forgetRefusedSuppliersInPostgres } from './forget.js';
import { firstContact, PostgresLedgerUnavailableError } from './first-contact.js';
import { copyIntoSqlite, type CopyCounts } from './copy.js';
import { holderId } from './holder.js';
import { LedgerUnreachableError, Reconnecting } from './reconnect.js';
import { migratePostgres } from './schema.js';
import { newClient, redactUrl } from './url.js';
import { inSnapshot } from './transaction.js';
import { WORKING_TABLES, WorkingCopy } from './working-copy.js';

/** How long the database may stay away before a run stops (exit 3), unless the caller says otherwise. */
export const DEFAULT_UNREACHABLE_SECONDS = 120;

export interface StageInput<T> {
  identity: string;
  signal: AbortSignal;
  started: () => void;
  work: (ledger: Ledger, mark: (number: string) => void) => Promise<T>;
}

/** What a runner sharing the ledger does besides running the engine on its working copy (engine/shared-feed.ts). */
export interface SharedLedger {
  /**
   * Stages an export not staged yet (nor being staged by another runner) under the stage lock, with `work` on a whole
   * copy of the ledger: `started` once the lock is held and no account is leased, `mark(number)` after each batch
   * staged (runners lease up to it). Undefined when there was nothing to stage.
   */
  stage<T>(input: StageInput<T>): Promise<T | undefined>;
  /** Leases up to `limit` accounts into the working copy: their numbers; `staging`: a runner is staging. */
  lease(limit: number): Promise<{ staging: boolean; numbers: string[] }>;
  othersHoldWork(): Promise<boolean>;
}

/** A push's ledger on PostgreSQL: the engine's Ledger on a local working copy whose writes are shipped there. */
export interface PostgresLedger {
  ledger: Ledger;
  /** Accounts of supplier codes the service refused as unknown, removed as the ledger was opened (forget.ts). */
  forgotten: Forgotten[];
  /** The working copy's directory (scratch files of the run go there too); removed by close(). */
  workDir: string;
  /** The URL without its password. */
  label: string;
  runId: number;
  /** Set for a runner that shares the ledger (leases); undefined for one that has it alone (the stage lock). */
  shared: SharedLedger | undefined;
  compromised(): Error | undefined;
  /** Counts of the whole ledger, every runner's accounts. */
  counts(): Promise<LedgerCounts>;
  /** Resolves once every write made so far is in PostgreSQL. */
  sync(): Promise<void>;
  /** Ships what is left, releases the leases and locks, closes the connections and removes the working copy. */
  close(): Promise<void>;
}

export interface OpenOptions {
  /** `alone`: take the stage lock for the whole run (wait for it, and until no account is leased). */
  alone: boolean;
  /** The account states that hold work for this run. */
  states: readonly AccountState[];
  signal: AbortSignal;
  unreachableSeconds?: number;
  onAway?: (away: boolean) => void;
}

/**
 * Opens (creating and migrating) the PostgreSQL ledger at `url` for a push. A runner alone copies the whole ledger
 * into its working copy; a sharing one copies the runs and settings, and leases accounts as it goes.
 */
export async function openPostgresLedger(url: string, options: OpenOptions): Promise<PostgresLedger> {
  const label = redactUrl(url);
  // Fails fast when the database cannot be reached at all; once it has answered, an outage is waited out.
  const first = await firstContact(url, label);
  const away = awayOnce(options.onAway);
  const reach = (connected?: pg.Client): Reconnecting =>
    new Reconnecting({
      label,
      connect: () => connect(url),
      unreachableMs: (options.unreachableSeconds ?? DEFAULT_UNREACHABLE_SECONDS) * 1000,
      onAway: away(),
      connected,
    });
  const [writes, coordinating] = [reach(first), reach()];
  const holder = holderId();
  const coordinator = new Coordinator(coordinating, holder, label, options.states);
  const closeAll = async (): Promise<void> => {
    await coordinator.close();
    await Promise.all([writes.close(), coordinating.close()]);
  };
  let copy: WorkingCopy | undefined;
  try {
    await opening(label, () => writes.run((client) => migratePostgres(client)));
    const forgotten = await opening(label, () => writes.run((client) => forgetRefusedSuppliersInPostgres(client)));
    const runId = await opening(label, () => coordinator.register());
    if (options.alone && !(await takeLedgerAlone(coordinator, options.signal)))
      throw new InterruptedError('while waiting for the other runners to release the PostgreSQL ledger');
    const rules = options.alone ? coordinator.stageLock.rules(holder) : coordinator.leaseRules(holder);
    const tables = options.alone ? WORKING_TABLES : (['runs', 'settings'] as const);
    copy = await opening(label, () => WorkingCopy.open(writes, rules, runId, tables));
    const working = copy;
    return {
      ledger: working.ledger,
      forgotten,
      workDir: working.dir,
      label,
      runId,
      shared: options.alone ? undefined : sharing(working, coordinator, () => reach(), runId),
      compromised: () => coordinator.compromised(),
      counts: () => coordinator.counts(),
      sync: () => {
        working.ledger.flush();
        return working.shipper.ship();
      },
      close: async () => {
        try {
          await working.close();
        } finally {
          await closeAll();
        }
      },
    };
  } catch (error) {
    copy?.discard();
    await closeAll().catch(() => undefined);
    throw error;
  }
}

/** One notice when the database goes away (whichever connection finds it first) and one when all are back. */
function awayOnce(notify: ((away: boolean) => void) | undefined): () => (away: boolean) => void {
  const awayNow = new Set<object>();
  return () => {
    const connection = {};
    return (away) => {
      const before = awayNow.size;
      if (away) awayNow.add(connection);
      else awayNow.delete(connection);
      if (before === 0 && awayNow.size === 1) notify?.(true);
      if (before > 0 && awayNow.size === 0) notify?.(false);
    };
  };
}

async function takeLedgerAlone(coordinator: Coordinator, signal: AbortSignal): Promise<boolean> {
  return (await coordinator.stageLock.take(signal)) && (await coordinator.stageLock.waitForNoLeases(signal));
}

function sharing(
  working: WorkingCopy,
  coordinator: Coordinator,
  reach: () => Reconnecting,
  runId: number,
): SharedLedger {
  const columns = working.columns();
  return {
    stage: (input) => stageAlone(coordinator, reach, runId, input),
    lease: async (limit) => {
      const page = await coordinator.lease(limit, columns);
      working.load(page, columns);
      const at = columns.accounts.indexOf('external_account_number');
      return { staging: page.staging, numbers: page.accounts.map((row) => String(row[at])) };
    },
    othersHoldWork: () => coordinator.othersHoldWork(),
  };
}

/**
 * Stages under the stage lock, once no account is leased, on a whole copy of the ledger shipped under that lock;
 * the export is recorded as staged with the last shipment. Undefined when it was staged, or is being staged by another
 * runner (this one leases what that one has staged meanwhile).
 */
async function stageAlone<T>(
  coordinator: Coordinator,
  reach: () => Reconnecting,
  runId: number,
  input: StageInput<T>,
): Promise<T | undefined> {
  const needed = (): Promise<boolean> => coordinator.stagingNeeded(input.identity);
  if (!(await coordinator.stageLock.take(input.signal, input.identity, needed))) return undefined;
  const connection = reach();
  try {
    if (!(await coordinator.stageLock.waitForNoLeases(input.signal))) return undefined;
    const rules = coordinator.stageLock.rules(`${coordinator.holder} staging`);
    const staging = await WorkingCopy.open(connection, rules, runId, WORKING_TABLES);
    const setting = staging.db.prepare(
      `INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value`,
    );
    try {
      input.started();
      // Each batch staged is shipped at once with its mark: the runners lease it without waiting for the timer.
      const mark = (number: string): void => {
        setting.run('staged_up_to', number);
        staging.shipper.ship().catch(() => undefined);
      };
      const result = await input.work(staging.ledger, mark);
      if (!input.signal.aborted) setting.run('staged_export', input.identity);
      return result;
    } finally {
      await staging.close();
    }
  } finally {
    await coordinator.stageLock.release();
    await connection.close();
  }
}

/**
 * The database's own failures while the ledger is opened (after it answered once) become one clear message: nothing
 * was recorded or sent yet, whatever the wait was.
 */
async function opening<T>(label: string, step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (error) {
    if (error instanceof PostgresLedgerUnavailableError) throw error;
    const what =
      error instanceof LedgerUnreachableError
        ? `the database went away while the ledger was being opened (${error.away})`
        : `the database refused: ${messageOf(error)}`;
    throw new PostgresLedgerUnavailableError(label, what, error);
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

/**
 * A consistent copy of the PostgreSQL ledger at `url` in a new SQLite ledger file in a temporary directory, for
 * `status` and `report` (they read it with the same code as a state directory's ledger, so their output is the same
 * on either store). Undefined when the database holds no ledger yet.
 */
export async function snapshotPostgresLedger(
  url: string,
): Promise<{ stateDir: string; counts: CopyCounts; close: () => void } | undefined> {
  const label = redactUrl(url);
  const client = await firstContact(url, label);
  try {
    const exists = await client.query<{ found: boolean }>(`SELECT to_regclass('ledger_schema') IS NOT NULL AS found`);
    if (exists.rows[0]?.found !== true) return undefined;
    const stateDir = makePrivateDir(tmpdir(), 'ledger');
    const db = openLedgerDb(stateDir);
    try {
      const counts = await inSnapshot(client, () => copyIntoSqlite(client, db));
      db.pragma('wal_checkpoint(TRUNCATE)');
      return { stateDir, counts, close: () => removePrivate(stateDir) };
    } catch (error) {
      removePrivate(stateDir);
      throw error;
    } finally {
      db.close();
    }
  } finally {
    await client.end().catch(() => undefined);
  }
}
