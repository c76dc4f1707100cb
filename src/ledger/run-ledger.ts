import { MigrateError } from '../errors.js';
import { existsSync, readdirSync, rmdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { explainDamage, hasLedger, LEDGER_FILE, ledgerFileState, prepareStateDir } from './db.js';
import { isLedgerDamage, replaceUnfinishedLedger, snapshotLedger } from './damage.js';
import type { Forgotten } from './forget.js';
import { Ledger } from './ledger.js';
import { acquireLock, type LockStep } from './lock.js';
import { openPostgresLedger } from './postgres/index.js';
import type { SharedLedger } from './postgres/open.js';
import { openLedgerReader } from './index.js';
import type { LedgerCounts, RecordedService } from './read.js';
import type { AccountState } from './types.js';

// The ledger a push runs on, opened and locked: a state directory's SQLite file, or a PostgreSQL database through a
// working copy (docs/postgres.md). Exit 4 when another run holds a state directory.

/** The ledger a push runs on. */
export interface RunLedger {
  ledger: Ledger;
  /** Accounts of supplier codes the service refused as unknown that opening the ledger removed (PostgreSQL's). */
  forgotten: Forgotten[];
  /** Where the run's files go (the state directory; for PostgreSQL the working copy's temporary directory). */
  stateDir: string;
  /** How messages and the summary name the ledger: the state directory, or the URL without its password. */
  label: string;
  /**
   * Aborts when the run lock (or a lease) was lost, taken over after this process stalled: another run may go on
   * with its accounts, so the run must stop taking work (exit 3). Its reason: why.
   */
  lockLost: AbortSignal;
  /** Keeps a consistent copy as the run starts (docs/ledger-recovery.md); PostgreSQL keeps its own backups. */
  snapshot: (runId: number) => void;
  /** A PostgreSQL ledger shared with other runners: where they lease accounts (engine/shared-feed.ts). */
  shared: { lease: SharedLedger; sync(): Promise<void>; counts(): Promise<LedgerCounts> } | undefined;
  /**
   * Closes the ledger and releases the lock. `neverStarted`: the run ended before it was recorded (a refused export, a
   * refused key): a state directory this run made is removed again, so that a failed start leaves nothing behind.
   */
  close: (ending?: { neverStarted: boolean }) => Promise<void>;
}

export interface RunLedgerInput {
  stateDir: string;
  /** The start-up test hook, told each step. */
  stopAt: (point: LockStep | 'state-dir-made' | 'ledger-opened') => void;
  url: string | undefined;
  unreachableSeconds: number;
  /** The run needs the whole ledger alone (--limit, --accounts, --retry-invalid, --max-errors N%). */
  alone: boolean;
  /** The states a sharing runner leases. */
  states: readonly AccountState[];
  signal: AbortSignal;
}

/** Opens the run's ledger and takes its lock; the lock is watched until the ledger is closed. */
export async function openRunLedger(input: RunLedgerInput, warn: (text: string) => void): Promise<RunLedger> {
  const opened = await (input.url === undefined ? openOnStateDir(input, warn) : openOnPostgres(input.url, input, warn));
  const lost = new AbortController();
  const watch = setInterval(() => {
    const error = opened.lockLost();
    if (error) lost.abort(error);
  }, 1000);
  const close = (ending?: { neverStarted: boolean }): Promise<void> => {
    clearInterval(watch);
    return opened.close(ending);
  };
  return { ...opened, lockLost: lost.signal, close };
}

type Opened = Omit<RunLedger, 'lockLost'> & { lockLost: () => Error | undefined };

async function openOnStateDir(input: RunLedgerInput, warn: (text: string) => void): Promise<Opened> {
  const { stateDir, stopAt } = input;
  const made = !existsSync(stateDir);
  prepareStateDir(stateDir);
  stopAt('state-dir-made');
  const lock = acquireLock(stateDir, { onStep: stopAt });
  let ledger: Ledger;
  try {
    if (ledgerFileState(stateDir) === 'unfinished') {
      const done = replaceUnfinishedLedger(stateDir, join(stateDir, LEDGER_FILE));
      if (done !== undefined) warn(done);
    }
    ledger = Ledger.open(stateDir);
  } catch (error) {
    await lock.release().catch(() => undefined);
    throw error;
  }
  stopAt('ledger-opened');
  return {
    ledger,
    forgotten: [],
    stateDir,
    label: stateDir,
    lockLost: () => lock.compromised(),
    snapshot: (runId) =>
      explainDamage(stateDir, join(stateDir, LEDGER_FILE), () => snapshotLedger(ledger.db, stateDir, runId)),
    shared: undefined,
    close: async (ending) => {
      const discard = made && ending?.neverStarted === true;
      try {
        ledger.close();
      } catch (error) {
        // Closing a damaged ledger fails too: the error already raised is the one to report.
        if (!isLedgerDamage(error)) throw error;
      } finally {
        // Emptied under the lock, removed once it is released: a run that starts in between makes the directory's
        // files anew, and the directory stays.
        if (discard) for (const name of readdirSync(stateDir)) rmSync(join(stateDir, name), { recursive: true });
        await lock.release().catch(() => undefined);
        if (discard) rmdirQuietly(stateDir);
      }
    },
  };
}

function rmdirQuietly(dir: string): void {
  try {
    rmdirSync(dir);
  } catch {
    // Not empty: another run made its files there since.
  }
}

async function openOnPostgres(url: string, input: RunLedgerInput, warn: (text: string) => void): Promise<Opened> {
  const seconds = input.unreachableSeconds;
  const opened = await openPostgresLedger(url, {
    alone: input.alone,
    states: input.states,
    signal: input.signal,
    unreachableSeconds: seconds,
    onAway: (away) =>
      warn(
        away
          ? `the PostgreSQL ledger is unreachable; no new work until it is back (at most ${seconds} s)`
          : 'the PostgreSQL ledger is reachable again; the run goes on',
      ),
  });
  return {
    ledger: opened.ledger,
    forgotten: opened.forgotten,
    stateDir: opened.workDir,
    label: opened.label,
    lockLost: () => opened.compromised(),
    snapshot: () => undefined,
    shared: opened.shared && { lease: opened.shared, sync: () => opened.sync(), counts: () => opened.counts() },
    close: () => opened.close(),
  };
}

/**
 * What a state directory recorded of the dialect and the service it was pushed to, read without the lock; undefined
 * when it has no ledger yet (or one whose creation never finished). A damaged ledger reads as none here: the locked
 * open names it.
 */
export function readRecorded(
  stateDir: string,
): { dialect: { dialect: string; ledgerLabel: string } | undefined; service: RecordedService | undefined } | undefined {
  if (!hasLedger(stateDir)) return undefined;
  try {
    const reader = openLedgerReader(stateDir);
    try {
      const dialect = reader.read.dialect();
      const service = reader.read.service();
      return { dialect: dialect === undefined ? undefined : { dialect, ledgerLabel: stateDir }, service };
    } finally {
      reader.close();
    }
  } catch (error) {
    if (isLedgerDamage(error)) return undefined;
    throw error;
  }
}

/** A run that ended by an exception is recorded as failed (not left `running`), with why: never a secret. */
export function recordFailedRun(ledger: Ledger, runId: number, exitCode: number, error: unknown): void {
  try {
    const fatal = error instanceof MigrateError ? { fatal: { code: error.code, detail: error.message } } : {};
    ledger.finishRun(runId, 'failed', exitCode, { ...ledger.read.counts(), ...fatal });
  } catch (failure) {
    // A closing step on a damaged ledger fails too: the error already raised is the one to report.
    if (!isLedgerDamage(failure)) throw failure;
  }
}
