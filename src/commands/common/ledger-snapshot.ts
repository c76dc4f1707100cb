import { ledgerUrlOf } from '../../config/ledger-url.js';
import { UsageError } from '../../errors.js';
import { redactUrl, snapshotPostgresLedger } from '../../ledger/postgres/index.js';

/** Where a read-only command finds the ledger: a state directory, and how messages name it. */
export interface LedgerPlace {
  stateDir: string | undefined;
  label: string | undefined;
}

/**
 * Runs a read-only command (status, report) on the ledger: with --ledger (or MIGRATE_LEDGER_URL), on one consistent
 * snapshot of the PostgreSQL ledger copied into a temporary SQLite ledger (removed afterwards), read by the same code
 * as a state directory's; otherwise on the state directory as given.
 */
export function onLedger<T>(flag: string | undefined, run: (place: LedgerPlace) => Promise<T>): Promise<T> {
  return onLedgerAt(ledgerUrlOf(flag, process.env), run);
}

/** onLedger with the PostgreSQL ledger's URL resolved already (undefined: the state directory). */
export async function onLedgerAt<T>(url: string | undefined, run: (place: LedgerPlace) => Promise<T>): Promise<T> {
  if (url === undefined) return run({ stateDir: undefined, label: undefined });
  const snapshot = await snapshotPostgresLedger(url);
  if (snapshot === undefined)
    throw new UsageError(
      `no ledger in ${redactUrl(url)} (the database holds no migrate ledger): give the --ledger of the migration's ` +
        'push runs',
      'ledger_not_found',
    );
  try {
    return await run({ stateDir: snapshot.stateDir, label: redactUrl(url) });
  } finally {
    snapshot.close();
  }
}
