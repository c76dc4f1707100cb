import { snapshotPostgresLedger } from '../../src/ledger/postgres/index.js';

/**
 * Runs `read` on a consistent SQLite copy of the PostgreSQL ledger (the copy status and report read), so that the
 * helpers that read a state directory's ledger check a PostgreSQL one too.
 */
export async function onSnapshot<T>(url: string, read: (stateDir: string) => T | Promise<T>): Promise<T> {
  const snapshot = await snapshotPostgresLedger(url);
  if (snapshot === undefined) throw new Error('the database holds no ledger');
  try {
    return await read(snapshot.stateDir);
  } finally {
    snapshot.close();
  }
}
