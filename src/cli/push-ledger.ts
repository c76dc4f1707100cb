import { join } from 'node:path';
import { ExitCode, FatalError, MigrateError } from '../errors.js';
import {
  acquireLock,
  explainDamage,
  Ledger,
  LEDGER_FILE,
  LedgerLockedError,
  prepareStateDir,
  snapshotLedger,
} from '../ledger/index.js';
import {
  LedgerUnreachableError,
  openPostgresLedger,
  PostgresLedgerLockedError,
  PostgresLedgerUnavailableError,
} from '../ledger/postgres/index.js';

/** The ledger a push runs on: a state directory's SQLite file, or a PostgreSQL database through a working copy. */
export interface RunLedger {
  ledger: Ledger;
  /** Where the run's files go (the state directory; for PostgreSQL the working copy's temporary directory). */
  stateDir: string;
  /** How messages and the summary name the ledger: the state directory, or the URL without its password. */
  label: string;
  postgres: boolean;
  /** Set when the run lock was lost: the run must stop. */
  lockLost: () => Error | undefined;
  /** Keeps a consistent copy as the run starts (docs/ledger-recovery.md); PostgreSQL keeps its own backups. */
  snapshot: (runId: number) => void;
  close: () => Promise<void>;
}

/** Opens the run's ledger and takes its lock (exit 4 when another run holds it). */
export async function openRunLedger(
  input: { stateDir: string; ledgerUrl: string | undefined; unreachableSeconds: number },
  warn: (text: string) => void,
): Promise<RunLedger> {
  if (input.ledgerUrl !== undefined) return openOnPostgres(input.ledgerUrl, input.unreachableSeconds, warn);
  const stateDir = input.stateDir;
  prepareStateDir(stateDir);
  const lock = await takeLock(() => acquireLock(stateDir));
  let ledger: Ledger;
  try {
    ledger = Ledger.open(stateDir);
  } catch (error) {
    await lock.release().catch(() => undefined);
    throw error;
  }
  return {
    ledger,
    stateDir,
    label: stateDir,
    postgres: false,
    lockLost: () => lock.compromised(),
    snapshot: (runId) =>
      explainDamage(stateDir, join(stateDir, LEDGER_FILE), () => snapshotLedger(ledger.db, stateDir, runId)),
    close: async () => {
      try {
        ledger.close();
      } finally {
        await lock.release().catch(() => undefined);
      }
    },
  };
}

async function openOnPostgres(
  url: string,
  unreachableSeconds: number,
  warn: (text: string) => void,
): Promise<RunLedger> {
  const opened = await takeLock(() =>
    openPostgresLedger(url, {
      unreachableSeconds,
      onAway: (away) =>
        warn(
          away
            ? `the PostgreSQL ledger is unreachable; no new work until it is back (at most ${unreachableSeconds} s)`
            : 'the PostgreSQL ledger is reachable again; the run goes on',
        ),
    }),
  ).catch((error: unknown) => {
    if (error instanceof PostgresLedgerUnavailableError)
      throw new FatalError(
        `${error.message}. Check --ledger (or MIGRATE_LEDGER_URL) and the database.`,
        'ledger_unavailable',
      );
    throw error;
  });
  return {
    ledger: opened.ledger,
    stateDir: opened.workDir,
    label: opened.label,
    postgres: true,
    lockLost: () => opened.lock.compromised(),
    snapshot: () => undefined,
    close: () => opened.close(),
  };
}

async function takeLock<T>(take: () => Promise<T>): Promise<T> {
  try {
    return await take();
  } catch (error) {
    if (error instanceof LedgerLockedError || error instanceof PostgresLedgerLockedError)
      throw new MigrateError(error.message, { code: 'state_locked', exitCode: ExitCode.locked });
    throw error;
  }
}

/** A failure to write the PostgreSQL ledger as the run's message (exit 3), or undefined for another failure. */
export function postgresFailure(detail: string, error?: unknown): FatalError | undefined {
  if (error instanceof LedgerUnreachableError || /^the PostgreSQL ledger /.test(detail))
    return new FatalError(detail, 'ledger_unreachable', error);
  return undefined;
}
