import { accessSync, chmodSync, closeSync, constants, existsSync, openSync, statSync } from 'node:fs';
import { makePrivateDirs, sweepLeftDirs } from '../private-files.js';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import Database from 'better-sqlite3';
import { isLedgerDamage, ledgerDamagedError } from './damage.js';
import { migrate } from './migrations.js';

export const LEDGER_FILE = 'ledger.sqlite';

// A ledger on read-only media is opened as an immutable URI (file:...?immutable=1): better-sqlite3 reads whether SQLite
// takes URI file names once, as its native part loads with the first database opened, so it is said before any is.
// Every file name the tool gives SQLite is an absolute path, which a URI switch leaves as it is.
process.env['SQLITE_USE_URI'] ??= '1';

/**
 * Makes the state directory (0700: the ledger holds personal data) if needed and returns its
 * path. An existing directory's mode is tightened, never loosened. The scratch a killed push left
 * there is removed (docs/data-protection.md "When a command is stopped or killed").
 */
export function prepareStateDir(stateDir: string): string {
  makePrivateDirs(stateDir);
  const mode = statSync(stateDir).mode & 0o777;
  if ((mode & 0o077) !== 0) chmodSync(stateDir, 0o700);
  sweepLeftDirs(stateDir);
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
  return explainDamage(stateDir, file, () =>
    openReadOnly(file, (db) => {
      db.pragma('busy_timeout = 5000');
      // Reads the header and the schema: an overwritten file fails here rather than mid-report.
      db.pragma('user_version');
      db.prepare('SELECT COUNT(*) FROM runs').get();
    }),
  );
}

/**
 * `file` opened read-only, and `probe` run on it. SQLite reads a database in WAL mode through a -shm file beside it,
 * which it must create when it is not there: in a directory this user cannot write (a read-only mount, another user's
 * state directory) that fails. Then, when no write-ahead log is beside the file either (nothing committed lies outside
 * it), the file is opened as immutable, which needs neither; with a log, the error stands (it would be hidden).
 */
function openReadOnly(file: string, probe: (db: Database.Database) => void): Database.Database {
  try {
    return probed(new Database(file, { readonly: true, fileMustExist: true }), probe);
  } catch (error) {
    if (!cannotWriteBeside(file, error) || logBeside(file)) throw error;
    return probed(
      new Database(`${pathToFileURL(file).href}?immutable=1`, { readonly: true, fileMustExist: true }),
      probe,
    );
  }
}

function probed(db: Database.Database, probe: (db: Database.Database) => void): Database.Database {
  try {
    probe(db);
    return db;
  } catch (error) {
    db.close();
    throw error;
  }
}

/** SQLite could not make its files beside `file` (read-only, cannot open) and this user cannot write there. */
function cannotWriteBeside(file: string, error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== 'string' || !(code.startsWith('SQLITE_READONLY') || code.startsWith('SQLITE_CANTOPEN')))
    return false;
  try {
    accessSync(dirname(file), constants.W_OK);
    return false;
  } catch {
    return true;
  }
}

/** A write-ahead log with frames in it beside `file`. */
function logBeside(file: string): boolean {
  try {
    return statSync(`${file}-wal`).size > 0;
  } catch {
    return false;
  }
}

/**
 * What a state directory's ledger file holds: `none` (no file); `unfinished`, a file whose creation never finished
 * (empty, or a database without a table: what a kill during the first run's creation of the ledger leaves); or
 * `ledger`. Read without writing anything (a read-only mount included).
 */
export function ledgerFileState(stateDir: string): 'none' | 'unfinished' | 'ledger' {
  const file = join(stateDir, LEDGER_FILE);
  if (!existsSync(file)) return 'none';
  if (statSync(file).size === 0 && !logBeside(file)) return 'unfinished';
  let tables = 0;
  try {
    openReadOnly(file, (db) => {
      tables = (db.prepare("SELECT COUNT(*) AS n FROM sqlite_master WHERE type = 'table'").get() as { n: number }).n;
    }).close();
  } catch {
    // A damaged or unreadable file is a ledger here: whoever opens it names what is wrong with it.
    return 'ledger';
  }
  return tables === 0 ? 'unfinished' : 'ledger';
}

/** True when the state directory holds a ledger (not none, not one whose creation never finished). */
export function hasLedger(stateDir: string): boolean {
  return ledgerFileState(stateDir) === 'ledger';
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
