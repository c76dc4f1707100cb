import type pg from 'pg';
import { NEVER_ACCEPTED, REFUSED_CODES_SQL, REFUSED_SUPPLIER_ERROR, type Forgotten } from '../forget.js';
import { inTransaction } from './transaction.js';

/** `?` placeholders as PostgreSQL's `$n`. */
const numbered = (sql: string): string => {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
};

/**
 * The PostgreSQL ledger's side of forgetRefusedSuppliers (ledger.ts): a runner that shares the ledger holds only the
 * accounts it leases, so the accounts of a supplier code the service refused as unknown, never accepted and leased by
 * no live runner, are removed in PostgreSQL itself as the run opens it. What went, per code.
 */
export async function forgetRefusedSuppliersInPostgres(client: pg.Client): Promise<Forgotten[]> {
  return inTransaction(client, async () => {
    const codes = await client.query<{ s: string }>(numbered(REFUSED_CODES_SQL), [
      REFUSED_SUPPLIER_ERROR.code,
      REFUSED_SUPPLIER_ERROR.attr,
    ]);
    const forgotten: Forgotten[] = [];
    const unleased = `${NEVER_ACCEPTED} AND (lease_owner IS NULL OR lease_until < now())`;
    for (const { s: supplier } of codes.rows) {
      const ids = `SELECT id FROM accounts WHERE ${numbered(unleased)}`;
      const numbers = await client.query<{ n: string }>(
        `SELECT external_account_number AS n FROM accounts WHERE id IN (${ids}) ORDER BY n`,
        [supplier],
      );
      if (numbers.rows.length === 0) continue;
      for (const table of ['events', 'items', 'account_issues'])
        await client.query(`DELETE FROM ${table} WHERE account_id IN (${ids})`, [supplier]);
      await client.query(`DELETE FROM accounts WHERE ${numbered(unleased)}`, [supplier]);
      const kept = await client.query<{ c: number }>('SELECT COUNT(*) AS c FROM accounts WHERE import_supplier = $1', [
        supplier,
      ]);
      forgotten.push({
        supplier,
        numbers: numbers.rows.map((row) => row.n),
        kept: Number(kept.rows[0]?.c ?? 0),
      });
    }
    return forgotten;
  });
}
