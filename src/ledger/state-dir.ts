import { accessSync, constants, statSync, type Stats } from 'node:fs';
import { join } from 'node:path';
import { errnoOf, FatalError, UsageError } from '../errors.js';
import { refuseUntrustedPath } from '../trusted-path.js';

// What --state names must be a state directory this user may use, checked before anything is read or written
// (docs/limits.md "Mistakes leave nothing behind"): a file, a path through a file, or another user's directory is
// said for what it is (exit 2), not found later as a missing ledger or an internal error.

/** `read`: status, report and push --dry-run read the ledger; `write`: push writes it. */
export type StateDirUse = 'read' | 'write';

export function checkStateDir(stateDir: string, use: StateDirUse, ledgerFile: string): void {
  // The ledger holds every customer's payload: a directory another user owns or can change (or one that would be
  // made in such a place) is refused.
  refuseUntrustedPath({ what: '--state', path: stateDir });
  let info: Stats;
  try {
    info = statSync(stateDir);
  } catch (error) {
    const code = errnoOf(error);
    if (code === 'ENOENT') return;
    if (code === 'ENOTDIR')
      throw new UsageError(
        `--state ${stateDir}: a part of this path is a file, not a directory; give a state directory (it is made ` +
          'if missing).',
        'state_not_directory',
        error,
      );
    if (!notPermitted(error)) throw error;
    throw refused(`--state ${stateDir}`, 'its path cannot be followed', error, undefined);
  }
  if (!info.isDirectory())
    throw new UsageError(
      `--state ${stateDir}: is a file, not a directory; --state names the state directory that holds the ledger ` +
        `(${ledgerFile}), made if missing.`,
      'state_not_directory',
    );
  const mode = use === 'write' ? constants.R_OK | constants.W_OK | constants.X_OK : constants.R_OK | constants.X_OK;
  try {
    accessSync(stateDir, mode);
  } catch (error) {
    if (use === 'write' && errnoOf(error) === 'EROFS') throw readOnlyDir(stateDir, ledgerFile);
    if (!notPermitted(error)) return;
    throw refused(
      `--state ${stateDir}`,
      use === 'write' ? 'cannot be read and written' : 'cannot be read',
      error,
      info,
      // The owner's own directory made read-only (chmod a-w): the ledger file alone being writable is not enough.
      use === 'write' && info.uid === process.getuid?.() ? ledgerFile : undefined,
    );
  }
  const ledger = join(stateDir, ledgerFile);
  try {
    accessSync(ledger, use === 'write' ? constants.R_OK | constants.W_OK : constants.R_OK);
  } catch (error) {
    if (!notPermitted(error)) return;
    throw refused(
      `the ledger ${ledger}`,
      use === 'write' ? 'cannot be read and written' : 'cannot be read',
      error,
      statOf(ledger),
    );
  }
}

function notPermitted(error: unknown): boolean {
  const code = errnoOf(error);
  return code === 'EACCES' || code === 'EPERM';
}

/**
 * `--state DIR: cannot be read by this user (uid 1001): EACCES, permission denied (owner uid 0, mode 0700); ...`.
 * With `ledgerFile` (push writes the directory): why the directory itself must be writable.
 */
function refused(
  label: string,
  what: string,
  error: unknown,
  info: Stats | undefined,
  ledgerFile?: string,
): UsageError {
  const code = errnoOf(error) ?? String(error);
  const owner =
    info === undefined ? '' : ` (owner uid ${info.uid}, mode ${(info.mode & 0o777).toString(8).padStart(4, '0')})`;
  return new UsageError(
    `${label}: ${what} by this user (uid ${process.getuid?.() ?? '?'}): ${code}, permission denied${owner}; ` +
      (ledgerFile === undefined
        ? "run migrate as the state directory's owner, or give another --state."
        : `${walNeeds(ledgerFile)}make the directory writable (chmod u+w), or give another --state.`),
    'state_dir_not_permitted',
    error,
  );
}

/** A state directory on a read-only file system (a read-only mount, a snapshot) that push would write: exit 3. */
function readOnlyDir(stateDir: string, ledgerFile: string): FatalError {
  return new FatalError(
    `--state ${stateDir}: the directory is read-only (EROFS: a read-only file system); ${walNeeds(ledgerFile)}copy ` +
      'the state directory to a writable place and give that --state.',
    'state_dir_read_only',
  );
}

/** SQLite's write-ahead log: why a writable ledger file is not enough. */
const walNeeds = (ledgerFile: string): string =>
  `push writes the ledger, and SQLite's write-ahead log (WAL) writes ${ledgerFile}-wal and ${ledgerFile}-shm beside ` +
  `the file, so the directory itself must be writable, not only ${ledgerFile}; `;

function statOf(path: string): Stats | undefined {
  try {
    return statSync(path);
  } catch {
    return undefined;
  }
}
