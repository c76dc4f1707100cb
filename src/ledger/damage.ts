import { chmodSync, constants, copyFileSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { makePrivateDirs } from '../private-files.js';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { ExitCode, messageOf, MigrateError } from '../errors.js';

// A damaged ledger named, and the snapshots that let it be recovered (docs/ledger-recovery.md).
// SQLite reports a truncated or overwritten database file as SQLITE_CORRUPT ("database disk image
// is malformed") or SQLITE_NOTADB ("file is not a database"), on open or on the first query that
// reads a damaged page. Each push keeps a consistent copy of the ledger as it was when the run
// started (VACUUM INTO), the last KEEP_SNAPSHOTS of them.

const SNAPSHOT_DIR = 'snapshots';
const KEEP_SNAPSHOTS = 3;

/** Whether an error is SQLite finding the database file damaged (not a busy lock or a full disk). */
export function isLedgerDamage(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && (code.startsWith('SQLITE_CORRUPT') || code === 'SQLITE_NOTADB');
}

/** Raised when the ledger file is damaged: exit 3 (the run cannot go on), with what it means and what to do. */
export class LedgerDamagedError extends MigrateError {
  readonly file: string;
  constructor(file: string, message: string, cause?: unknown) {
    super(message, { code: 'ledger_damaged', exitCode: ExitCode.fatal, cause });
    this.file = file;
  }
}

/** The snapshots of a state directory, newest first (names sort by run id). */
function listSnapshots(stateDir: string): string[] {
  const dir = join(stateDir, SNAPSHOT_DIR);
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  return names
    .filter((name) => /^ledger-\d+-.+\.sqlite$/.test(name))
    .sort()
    .reverse()
    .map((name) => join(dir, name));
}

/** The error to raise for a damaged ledger file: which file, what it means for a rerun, what to do. */
export function ledgerDamagedError(stateDir: string, file: string, cause: unknown): LedgerDamagedError {
  const reason = messageOf(cause);
  const snapshots = listSnapshots(stateDir);
  const restore =
    snapshots.length > 0
      ? `Snapshots taken at the start of the last runs (newest first):\n` +
        `${snapshots.map((path) => `  ${path}`).join('\n')}\n` +
        `To recover: move the damaged file aside (with its -wal and -shm files), copy the newest snapshot that opens ` +
        `to ${file}, and run push again (docs/ledger-recovery.md).`
      : `No snapshot exists in ${join(stateDir, SNAPSHOT_DIR)}. To recover: move the damaged file aside (with its ` +
        `-wal and -shm files) and run push again with no ledger (docs/ledger-recovery.md).`;
  return new LedgerDamagedError(
    file,
    `the ledger ${file} is damaged (${reason}); nothing more was sent. ` +
      'A rerun from a restored snapshot or from no ledger re-establishes what is on the platform without ' +
      'duplicating it ' +
      '(accounts: already imported; notes, transactions, statements: the service recognises them; payment ' +
      'instructions: one active per account), ' +
      `but records whose outcome the snapshot does not know are settled again by the service's answers.\n${restore}`,
    cause,
  );
}

/**
 * A consistent copy of the ledger as it stands (VACUUM INTO), as `snapshots/ledger-<run>-<time>.sqlite`,
 * 0600 in a 0700 directory, written under a temporary name and renamed; the oldest beyond
 * KEEP_SNAPSHOTS are deleted. Returns the snapshot's path.
 */
export function snapshotLedger(db: Database.Database, stateDir: string, runId: number, now = new Date()): string {
  const dir = join(stateDir, SNAPSHOT_DIR);
  makePrivateDirs(dir);
  if ((statSync(dir).mode & 0o077) !== 0) chmodSync(dir, 0o700);
  const stamp = now.toISOString().replace(/[:.]/g, '-');
  const path = join(dir, `ledger-${String(runId).padStart(8, '0')}-${stamp}.sqlite`);
  const partial = `${path}.partial`;
  rmSync(partial, { force: true });
  db.prepare('VACUUM INTO ?').run(partial);
  chmodSync(partial, 0o600);
  renameSync(partial, path);
  for (const old of listSnapshots(stateDir).slice(KEEP_SNAPSHOTS)) rmSync(old, { force: true });
  return path;
}

/** Whether `path` opens as a ledger (a database with the runs table). */
function opensAsLedger(path: string): boolean {
  try {
    const db = new Database(path, { readonly: true, fileMustExist: true });
    try {
      db.prepare('SELECT COUNT(*) FROM runs').get();
      return true;
    } finally {
      db.close();
    }
  } catch {
    return false;
  }
}

/**
 * Puts a ledger in place of one whose creation never finished (db.ts ledgerFileState: empty, or without a table, what
 * a kill as the first run created it leaves): the newest snapshot that opens, when there is one, else nothing (the
 * open then creates it afresh). The unfinished file and its -wal and -shm go: they hold no row. Under the run's lock;
 * returns what was done, to be said, or undefined when the file was not unfinished.
 */
export function replaceUnfinishedLedger(stateDir: string, file: string): string | undefined {
  for (const suffix of ['-wal', '-shm', '']) rmSync(file + suffix, { force: true });
  const snapshot = listSnapshots(stateDir).find(opensAsLedger);
  const what = `the ledger ${file} was left unfinished (empty, or without its tables: a run killed as it created it)`;
  if (snapshot === undefined) return `${what}; it is created afresh`;
  const partial = `${file}.partial`;
  rmSync(partial, { force: true });
  // Exclusive: a name planted there meanwhile (a link elsewhere) fails the copy instead of being written through.
  copyFileSync(snapshot, partial, constants.COPYFILE_EXCL);
  chmodSync(partial, 0o600);
  renameSync(partial, file);
  return `${what}; restored from the snapshot ${snapshot}, whose outcomes the service's answers complete`;
}

/**
 * Replaces every snapshot of a state directory by one copy of the ledger as it stands now (`ledger purge`: the older
 * ones still hold what was purged). Returns the new snapshot's path and how many were removed.
 */
export function replaceSnapshots(
  db: Database.Database,
  stateDir: string,
  runId: number,
): { snapshot: string; removed: number } {
  const old = listSnapshots(stateDir);
  const dir = join(stateDir, SNAPSHOT_DIR);
  let partials: string[] = [];
  try {
    partials = readdirSync(dir).filter((name) => name.endsWith('.partial'));
  } catch {
    // No snapshot directory yet.
  }
  for (const name of partials) rmSync(join(dir, name), { force: true });
  const snapshot = snapshotLedger(db, stateDir, runId);
  for (const path of old) if (path !== snapshot) rmSync(path, { force: true });
  return { snapshot, removed: old.filter((path) => path !== snapshot).length + partials.length };
}
