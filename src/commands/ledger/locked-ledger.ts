import { resolve } from 'node:path';
import { UsageError } from '../../errors.js';
import { acquireLock, Ledger } from '../../ledger/index.js';
import { ledgerExists } from '../common/ledger-source.js';

/** The state directory named by --state, refused (exit 2) when it holds no ledger. */
export function existingLedgerDir(state: string): string {
  const stateDir = resolve(state);
  if (!ledgerExists(stateDir))
    throw new UsageError(`no ledger in ${stateDir}: give the --state directory of the migration`, 'ledger_not_found');
  return stateDir;
}

/**
 * The state directory's ledger for one `migrate ledger` sub-command, under the directory's lock so that no push writes
 * it meanwhile; closed and unlocked whatever happens.
 */
export async function onLockedLedger<T>(stateDir: string, use: (ledger: Ledger) => Promise<T> | T): Promise<T> {
  const lock = acquireLock(stateDir);
  try {
    const ledger = Ledger.open(stateDir);
    try {
      return await use(ledger);
    } finally {
      ledger.close();
    }
  } finally {
    await lock.release().catch(() => undefined);
  }
}

/**
 * Lets a stop signal that came during synchronous work be handled (signals are read between turns of the event loop),
 * then throws if it came: the caller's stop rules say what was kept.
 */
export async function stopPoint(signal: AbortSignal | undefined): Promise<void> {
  await new Promise((resolve) => setImmediate(resolve));
  signal?.throwIfAborted();
}
