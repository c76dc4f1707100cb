import { join } from 'node:path';
import {
  exitCodeOf,
  leaseFeed,
  statesWithWork,
  type EventSink,
  type ExportSource,
  type PushResult,
  type StageSummary,
} from '../engine/index.js';
import type { StagingGate } from '../engine/staging-gate.js';
import {
  acquireLock,
  explainDamage,
  isLedgerDamage,
  Ledger,
  LEDGER_FILE,
  prepareStateDir,
  snapshotLedger,
} from '../ledger/index.js';
import { openPostgresLedger, type PostgresLedger } from '../ledger/postgres/index.js';
import type { StopPoint } from './stop-points.js';

/** The ledger a push runs on: a state directory's SQLite file, or a PostgreSQL database through a working copy. */
export interface RunLedger {
  ledger: Ledger;
  /** Where the run's files go (the state directory; for PostgreSQL the working copy's temporary directory). */
  stateDir: string;
  /** How messages and the summary name the ledger: the state directory, or the URL without its password. */
  label: string;
  /** Set when the run lock (or a lease) was lost: the run must stop. */
  lockLost: () => Error | undefined;
  /** Keeps a consistent copy as the run starts (docs/ledger-recovery.md); PostgreSQL keeps its own backups. */
  snapshot: (runId: number) => void;
  /** For a runner sharing a PostgreSQL ledger: runPush's feed (engine/shared-feed.ts). */
  feed?: (input: FeedOptions) => (gate: StagingGate, signal: AbortSignal) => Promise<StageSummary | undefined>;
  /** A sharing runner's result counts the whole ledger (every runner's accounts), as a state directory's does. */
  settle: (result: PushResult, filtered: boolean) => Promise<PushResult>;
  close: () => Promise<void>;
}

export interface FeedOptions {
  source: ExportSource | undefined;
  identity: string;
  sink: EventSink;
  concurrency: number;
  wait: boolean;
  retryErrored: boolean;
}

export interface RunLedgerInput {
  stateDir: string;
  /** The start-up test hook (stop-points.ts). */
  stopAt: (point: StopPoint) => void;
  ledgerUrl: string | undefined;
  unreachableSeconds: number;
  /** The run needs the whole ledger alone (--limit, --accounts, --retry-invalid, --max-errors N%). */
  alone: boolean;
  retryErrored: boolean;
  signal: AbortSignal;
}

/** Opens the run's ledger and takes its lock (exit 4 when another run holds a state directory). */
export async function openRunLedger(input: RunLedgerInput, warn: (text: string) => void): Promise<RunLedger> {
  if (input.ledgerUrl !== undefined) return openOnPostgres(input.ledgerUrl, input, warn);
  const { stateDir, stopAt } = input;
  prepareStateDir(stateDir);
  stopAt('state-dir-made');
  const lock = acquireLock(stateDir, { onStep: stopAt });
  let ledger: Ledger;
  try {
    ledger = Ledger.open(stateDir);
  } catch (error) {
    await lock.release().catch(() => undefined);
    throw error;
  }
  stopAt('ledger-opened');
  return {
    ledger,
    stateDir,
    label: stateDir,
    lockLost: () => lock.compromised(),
    snapshot: (runId) =>
      explainDamage(stateDir, join(stateDir, LEDGER_FILE), () => snapshotLedger(ledger.db, stateDir, runId)),
    settle: (result) => Promise.resolve(result),
    close: async () => {
      try {
        ledger.close();
      } catch (error) {
        // Closing a damaged ledger fails too: the error already raised is the one to report.
        if (!isLedgerDamage(error)) throw error;
      } finally {
        await lock.release().catch(() => undefined);
      }
    },
  };
}

async function openOnPostgres(url: string, input: RunLedgerInput, warn: (text: string) => void): Promise<RunLedger> {
  const seconds = input.unreachableSeconds;
  const opened = await openPostgresLedger(url, {
    alone: input.alone,
    states: statesWithWork(input.retryErrored),
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
    stateDir: opened.workDir,
    label: opened.label,
    lockLost: () => opened.compromised(),
    snapshot: () => undefined,
    ...(opened.shared === undefined ? {} : { feed: feedOf(opened) }),
    settle: (result, filtered) => settleShared(opened, result, filtered),
    close: () => opened.close(),
  };
}

function feedOf(opened: PostgresLedger): NonNullable<RunLedger['feed']> {
  return (options) =>
    leaseFeed({
      ledger: opened.ledger,
      shared: opened.shared ?? failNoShare(),
      source: options.source,
      identity: options.identity,
      sink: options.sink,
      concurrency: options.concurrency,
      retryErrored: options.retryErrored,
      wait: options.wait,
    });
}

function failNoShare(): never {
  throw new Error('the ledger is not shared');
}

/** The counts and exit code of the whole ledger once this runner's writes have landed. */
async function settleShared(opened: PostgresLedger, result: PushResult, filtered: boolean): Promise<PushResult> {
  if (opened.shared === undefined) return result;
  await opened.sync();
  const counts = await opened.counts();
  return { ...result, counts, exitCode: exitCodeOf(result.reason, counts, filtered) };
}
