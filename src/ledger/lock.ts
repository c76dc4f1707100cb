import { readFileSync, rmSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import lockfile from 'proper-lockfile';

/** Thrown when another live run holds the state directory: the CLI maps it to exit 4. */
export class LedgerLockedError extends Error {
  readonly holderPid: number | undefined;
  constructor(stateDir: string, holderPid: number | undefined) {
    super(
      `another migrate run${holderPid === undefined ? '' : ` (pid ${holderPid})`} holds the state directory ` +
        `${stateDir}; ` +
        'wait for it to finish, or use another --state directory',
    );
    this.name = 'LedgerLockedError';
    this.holderPid = holderPid;
  }
}

export interface LedgerLock {
  release(): Promise<void>;
  /** Set when the lock was lost (its directory removed or not refreshed): the run must stop. */
  readonly compromised: () => Error | undefined;
}

const LOCK_NAME = 'run';

/**
 * Takes the state directory's lock (proper-lockfile: an atomic mkdir, refreshed while held).
 * A lock left by a process that died is taken over at once when it was taken on this host and
 * its pid is gone (the crash-then-rerun case under cron); otherwise once it is stale (not
 * refreshed for `staleMs`).
 */
export async function acquireLock(stateDir: string, options: { staleMs?: number } = {}): Promise<LedgerLock> {
  const target = join(stateDir, LOCK_NAME);
  const lockDir = `${target}.lock`;
  const holderFile = `${target}.holder.json`;
  let lostWith: Error | undefined;
  const settings = {
    realpath: false,
    stale: options.staleMs ?? 15_000,
    update: Math.max(1_000, Math.floor((options.staleMs ?? 15_000) / 3)),
    lockfilePath: lockDir,
    onCompromised: (error: Error) => {
      lostWith = error;
    },
  };
  let release: () => Promise<void>;
  try {
    release = await lockfile.lock(target, settings);
  } catch (error) {
    if ((error as { code?: string }).code !== 'ELOCKED') throw error;
    const holder = readHolder(holderFile, lockDir);
    if (holder === undefined || holder.host !== hostname() || isAlive(holder.pid)) {
      throw new LedgerLockedError(stateDir, holder?.pid);
    }
    rmSync(lockDir, { recursive: true, force: true });
    try {
      release = await lockfile.lock(target, settings);
    } catch (again) {
      if ((again as { code?: string }).code === 'ELOCKED')
        throw new LedgerLockedError(stateDir, readHolder(holderFile, lockDir)?.pid);
      throw again;
    }
  }
  // Beside the lock directory (proper-lockfile removes it with rmdir); the inode ties it to this lock.
  writeFileSync(holderFile, JSON.stringify({ pid: process.pid, host: hostname(), ino: statSync(lockDir).ino }), {
    mode: 0o600,
  });
  return {
    release: async () => {
      try {
        unlinkSync(holderFile);
      } catch {
        // already gone
      }
      await release();
    },
    compromised: () => lostWith,
  };
}

/** The holder of the current lock directory; undefined when unknown (not written yet, or left by an earlier lock). */
function readHolder(holderFile: string, lockDir: string): { pid: number; host: string } | undefined {
  try {
    const parsed = JSON.parse(readFileSync(holderFile, 'utf8')) as { pid?: unknown; host?: unknown; ino?: unknown };
    if (parsed.ino !== statSync(lockDir).ino) return undefined;
    return typeof parsed.pid === 'number' && typeof parsed.host === 'string'
      ? { pid: parsed.pid, host: parsed.host }
      : undefined;
  } catch {
    return undefined;
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
