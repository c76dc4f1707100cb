import { join } from 'node:path';
import { errnoOf, FatalError, messageOf, MigrateError } from '../errors.js';
import { isLedgerDamage, ledgerDamagedError } from './damage.js';
import { LEDGER_FILE } from './db.js';

// The state directory's disk failing under a run (full, turned read-only, an I/O error): the
// ledger stays consistent (SQLite rolls back the transaction it could not commit, and every
// intent committed before stays for the next run to reconcile), but the run cannot go on.

// SQLite's own messages, for errors that carry them without SQLite's code.
const SQLITE_MESSAGES: Array<[RegExp, string]> = [
  [/database or disk is full/, 'SQLITE_FULL'],
  [/readonly database/, 'SQLITE_READONLY'],
  [/disk I\/O error/, 'SQLITE_IOERR'],
  [/unable to open database file/, 'SQLITE_CANTOPEN'],
];

const SQLITE_CAUSES: Array<[RegExp, string]> = [
  [/^SQLITE_FULL/, 'the disk is full'],
  [/^SQLITE_READONLY/, 'it is read-only'],
  [/^SQLITE_CANTOPEN/, 'it cannot be opened for writing'],
  [/^SQLITE_IOERR/, 'an I/O error'],
  [/^SQLITE_PERM/, 'permission denied'],
];

const ERRNO_CAUSES: Record<string, string> = {
  ENOSPC: 'the disk is full',
  EDQUOT: 'the disk quota is exceeded',
  EROFS: 'it is on a read-only file system',
  EACCES: 'permission denied',
  EPERM: 'permission denied',
  EIO: 'an I/O error',
};

/** What went wrong with the storage, if `error` is a storage failure (SQLite or the file system). */
export function storageFailureCause(error: unknown): string | undefined {
  const message = messageOf(error);
  const code = errnoOf(error) ?? SQLITE_MESSAGES.find(([pattern]) => pattern.test(message))?.[1];
  if (typeof code !== 'string') return undefined;
  const sqlite = SQLITE_CAUSES.find(([pattern]) => pattern.test(code));
  if (sqlite) return `${sqlite[1]}: ${code}`;
  // node's recursive mkdir reports a read-only file system as ENOENT.
  if (code === 'ENOENT' && (error as { syscall?: unknown }).syscall === 'mkdir')
    return `it cannot be created (a read-only file system?): ${code}`;
  const errno = ERRNO_CAUSES[code];
  return errno === undefined ? undefined : `${errno}: ${code}`;
}

/**
 * A failure of the ledger's storage as the tool's error (exit 3), naming what to do: a damaged ledger file (with its
 * snapshots), or a state directory that cannot be written. Undefined for any other error, and for one already the
 * tool's own (the ledger's typed errors carry their exit code).
 */
export function storageError(error: unknown, stateDir: string): MigrateError | undefined {
  if (error instanceof MigrateError) return undefined;
  if (isLedgerDamage(error)) return ledgerDamagedError(stateDir, join(stateDir, LEDGER_FILE), error);
  const cause = storageFailureCause(error);
  if (cause === undefined) return undefined;
  return new FatalError(
    `the state directory ${stateDir} cannot be written (${cause}); the run stopped. The ledger is consistent: ` +
      `free space or make the directory writable, then run push again (it picks up where this run stopped).`,
    'state_dir_unwritable',
    error,
  );
}
