import type pg from 'pg';

/**
 * Runs `work` in one transaction on `client`: committed when it returns, rolled back when it throws (the rollback's own
 * failure, on a connection already gone, leaves the first error to be reported).
 */
export async function inTransaction<T>(client: pg.Client, work: () => Promise<T>, begin = 'BEGIN'): Promise<T> {
  await client.query(begin);
  try {
    const result = await work();
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  }
}

/** Runs `read` in one REPEATABLE READ, read-only transaction: every table as of one moment. */
export function inSnapshot<T>(client: pg.Client, read: () => Promise<T>): Promise<T> {
  return inTransaction(client, read, 'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
}
