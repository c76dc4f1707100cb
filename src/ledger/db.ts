import { chmodSync, closeSync, existsSync, openSync, statSync } from 'node:fs';
import { makeDirectory } from './state-dir.js';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { isLedgerDamage, ledgerDamagedError } from './damage.js';
import { migrate } from './migrations.js';

export const LEDGER_FILE = 'ledger.sqlite';

/**
 * Makes the state directory (0700: the ledger holds personal data) if needed and returns its
 * path. An existing directory's mode is tightened, never loosened.
 */
export function prepareStateDir(stateDir: string): string {
  makeDirectory(stateDir, 0o700);
  const mode = statSync(stateDir).mode & 0o777;
  if ((mode & 0o077) !== 0) chmodSync(stateDir, 0o700);
  return stateDir;
}

/**
 * Opens (creating and migrating) the ledger database of a state directory.
 * WAL lets the status command read while a run writes. synchronous=NORMAL: in WAL mode every
 * commit survives a crash of the process (SIGKILL, OOM: the kernel has it) and the database
 * is never corrupted; only a power loss or OS crash can lose the last commits. That is safe
 * for every intent the service deduplicates (a lost create intent is answered in progress or
 * already imported on resend; notes, transactions with check_previously_added, statements by
 * their dedup). Intents of requests the service cannot deduplicate (payment instructions;
 * transactions with check_previously_added off) are written `durable`: their commit is
 * fsynced before the request is sent (writer.ts: an fsync of the log off the event loop).
 * Measured: synchronous=FULL on every commit cost a quarter of the engine's CPU (blocking fsyncs
 * on the event loop) at concurrency 32, and even on the durable commits alone it held the event
 * loop for seconds of a 3,000-account push (README "Performance").
 */
export function openLedgerDb(stateDir: string): Database.Database {
  prepareStateDir(stateDir);
  const file = join(stateDir, LEDGER_FILE);
  if (!existsSync(file)) closeSync(openSync(file, 'a', 0o600));
  chmodSync(file, 0o600);
  return explainDamage(stateDir, file, () => {
    const db = new Database(file);
    try {
      configure(db);
    } catch (error) {
      db.close();
      throw error;
    }
    // SQLite gives -wal and -shm the database file's mode; tighten them anyway in case it did not.
    for (const suffix of ['-wal', '-shm']) if (existsSync(file + suffix)) chmodSync(file + suffix, 0o600);
    return db;
  });
}

/** Runs `open`; a damaged database file (SQLITE_CORRUPT, SQLITE_NOTADB) becomes a LedgerDamagedError naming it. */
export function explainDamage<T>(stateDir: string, file: string, open: () => T): T {
  try {
    return open();
  } catch (error) {
    if (isLedgerDamage(error)) throw ledgerDamagedError(stateDir, file, error);
    throw error;
  }
}

function configure(db: Database.Database): void {
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('foreign_keys = ON');
  db.pragma('busy_timeout = 5000');
  // A bounded page cache whatever the ledger's size (negative = KiB): flat memory at 1M accounts.
  db.pragma('cache_size = -32768');
  migrate(db);
}

/** Opens an existing ledger read-only (status and report commands); throws if there is none. */
export function openLedgerDbReadOnly(stateDir: string): Database.Database {
  const file = join(stateDir, LEDGER_FILE);
  return explainDamage(stateDir, file, () => {
    const db = new Database(file, { readonly: true, fileMustExist: true });
    try {
      db.pragma('busy_timeout = 5000');
      // Reads the header and the schema: an overwritten file fails here rather than mid-report.
      db.pragma('user_version');
      db.prepare('SELECT COUNT(*) FROM runs').get();
    } catch (error) {
      db.close();
      throw error;
    }
    return db;
  });
}

/**
 * Copies a state directory's ledger, if it has one, into `targetDir` (push --dry-run plans against the copy). VACUUM
 * INTO gives a consistent copy even while a run writes (WAL); the source is opened read-only. False: no ledger.
 */
export function copyLedger(stateDir: string, targetDir: string): boolean {
  const source = join(stateDir, LEDGER_FILE);
  if (!existsSync(source)) return false;
  const db = new Database(source, { readonly: true, fileMustExist: true });
  try {
    db.pragma('busy_timeout = 5000');
    db.prepare('VACUUM INTO ?').run(join(targetDir, LEDGER_FILE));
  } finally {
    db.close();
  }
  return true;
}
