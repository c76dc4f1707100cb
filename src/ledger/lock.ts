import { chmodSync, closeSync, openSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { ExitCode, MigrateError } from '../errors.js';

/** Thrown when another live run holds the state directory: exit 4. */
export class LedgerLockedError extends MigrateError {
  readonly holderPid: number | undefined;
  constructor(stateDir: string, holderPid: number | undefined, by = 'another migrate run') {
    super(
      `${by}${holderPid === undefined ? '' : ` (pid ${holderPid})`} holds the state directory ${stateDir}; ` +
        'wait for it to finish, or stop it; do not give this cohort another --state directory (a new ledger would ' +
        'not know what this one sent)',
      { code: 'state_locked', exitCode: ExitCode.locked },
    );
    this.holderPid = holderPid;
  }
}

export interface LedgerLock {
  release(): Promise<void>;
  /** Set when the lock was lost (its file removed or replaced, e.g. the state directory deleted): the run must stop. */
  readonly compromised: () => Error | undefined;
}

/** The lock's own SQLite file, and who holds it (told in the refusal; never part of the lock itself). */
export const LOCK_FILE = 'run-lock.sqlite';
const HOLDER_FILE = 'run-lock.holder.json';
/** The lock directory of versions before the lock file, refreshed every 5 s while one of them runs. */
const OLDER_LOCK_DIR = 'run.lock';
const OLDER_LOCK_STALE_MS = 15_000;

/** Named moments of taking the lock, for the start-up test hook (commands/push/stop-points.ts). */
export type LockStep = 'lock-file-opened' | 'lock-taken' | 'lock-holder-written';

/**
 * Takes the state directory's lock: an exclusive SQLite lock (locking_mode=EXCLUSIVE) on its own file, which is a
 * POSIX lock the operating system releases the moment its process dies, however it dies (SIGKILL, OOM) and at
 * whatever moment, so a rerun never waits for a dead run. The holder's pid is written beside it afterwards, only to
 * name it in the refusal. The ledger keeps its own file and WAL: `status` and `report` read it beside a running push.
 */
export function acquireLock(stateDir: string, options: { onStep?: (step: LockStep) => void } = {}): LedgerLock {
  refuseOlderVersionRun(stateDir);
  const file = join(stateDir, LOCK_FILE);
  closeSync(openSync(file, 'a', 0o600));
  chmodSync(file, 0o600);
  const db = new Database(file);
  options.onStep?.('lock-file-opened');
  try {
    db.pragma('busy_timeout = 0');
    db.pragma('locking_mode = EXCLUSIVE');
    // The first write takes the exclusive lock; in EXCLUSIVE locking mode it is kept until the connection closes.
    db.exec('BEGIN EXCLUSIVE; CREATE TABLE IF NOT EXISTS held (at TEXT); DELETE FROM held; COMMIT');
  } catch (error) {
    db.close();
    if ((error as { code?: string }).code === 'SQLITE_BUSY')
      throw new LedgerLockedError(stateDir, livingHolder(stateDir));
    throw error;
  }
  options.onStep?.('lock-taken');
  const ino = statSync(file).ino;
  writeFileSync(join(stateDir, HOLDER_FILE), JSON.stringify({ pid: process.pid, host: hostname() }), { mode: 0o600 });
  options.onStep?.('lock-holder-written');
  return {
    release: () => {
      rmSync(join(stateDir, HOLDER_FILE), { force: true });
      db.close();
      return Promise.resolve();
    },
    compromised: () => lostLock(file, ino),
  };
}

/** The holder named in the holder file, when it is alive on this host (written after the lock: it may be older). */
function livingHolder(stateDir: string): number | undefined {
  try {
    const holder = JSON.parse(readFileSync(join(stateDir, HOLDER_FILE), 'utf8')) as { pid?: unknown; host?: unknown };
    return typeof holder.pid === 'number' && holder.host === hostname() && isAlive(holder.pid) ? holder.pid : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A run of a version from before the lock file (its lock: a directory refreshed every 5 s) does not see this lock:
 * while its directory is fresh, it is refused as a holder. Left by a run that died, it is stale after 15 s.
 */
function refuseOlderVersionRun(stateDir: string): void {
  let refreshed: number;
  try {
    refreshed = statSync(join(stateDir, OLDER_LOCK_DIR)).mtimeMs;
  } catch {
    return;
  }
  if (Date.now() - refreshed < OLDER_LOCK_STALE_MS)
    throw new LedgerLockedError(stateDir, undefined, 'a migrate run of an earlier version');
}

function lostLock(file: string, ino: number): Error | undefined {
  try {
    return statSync(file).ino === ino ? undefined : new Error(`${file} was replaced`);
  } catch (error) {
    return new Error(`${file} is gone (${(error as { code?: string }).code ?? String(error)})`);
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as { code?: string }).code === 'EPERM';
  }
}
