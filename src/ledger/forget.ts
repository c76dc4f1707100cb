import type Database from 'better-sqlite3';

// Accounts staged under an import supplier code that the service never accepted (a typo in --supplier, the mapping
// file or the export: docs/reruns.md "A supplier code the service does not know"), removed from the ledger so that the
// export, corrected, is staged again as it reads now. Only accounts that never reached the service go: staged or
// invalid, no create answered, no platform account number, no record sent (or maybe sent).

/** The error a create refused for an unknown supplier code leaves on its account (engine/account-steps.ts). */
export const REFUSED_SUPPLIER_ERROR = { code: 'configuration_refused', attr: 'import_supplier' } as const;

export const NEVER_ACCEPTED =
  `import_supplier = ? AND state IN ('staged', 'invalid') AND sent_fingerprint IS NULL ` +
  `AND platform_account_number IS NULL AND NOT EXISTS (SELECT 1 FROM items i WHERE i.account_id = accounts.id ` +
  `AND i.state IN ('done', 'sending', 'unknown'))`;

/** What forgetting a supplier code's accounts found. */
export interface Forgotten {
  supplier: string;
  /** External account numbers removed (or, in a dry run, that would be). */
  numbers: string[];
  /** Accounts of the code kept: they reached the service (or may have). */
  kept: number;
}

/** The never-accepted accounts of `supplier`, removed unless `dryRun`; in one transaction. */
export function forgetSupplier(db: Database.Database, supplier: string, dryRun: boolean): Forgotten {
  return db.transaction(() => {
    const rows = db
      .prepare(`SELECT id, external_account_number AS n FROM accounts WHERE ${NEVER_ACCEPTED} ORDER BY n, id`)
      .all(supplier) as Array<{ id: number; n: string }>;
    const total = (
      db.prepare('SELECT COUNT(*) AS c FROM accounts WHERE import_supplier = ?').get(supplier) as { c: number }
    ).c;
    if (!dryRun) {
      const ids = db.prepare(`SELECT id FROM accounts WHERE ${NEVER_ACCEPTED}`);
      for (const table of ['events', 'items', 'account_issues'])
        db.prepare(`DELETE FROM ${table} WHERE account_id IN (${ids.source})`).run(supplier);
      db.prepare(`DELETE FROM accounts WHERE ${NEVER_ACCEPTED}`).run(supplier);
    }
    return { supplier, numbers: rows.map((row) => row.n), kept: total - rows.length };
  })();
}

/** The query of refusedSupplierCodes (`?`: the error's code, then its attr), for both stores. */
export const REFUSED_CODES_SQL =
  `SELECT DISTINCT import_supplier AS s FROM accounts ` +
  `WHERE state = 'staged' AND error_code = ? AND error_attr = ? ORDER BY s`;

/** Supplier codes a create was refused for as unknown, an account still staged (REFUSED_SUPPLIER_ERROR). */
export function refusedSupplierCodes(db: Database.Database): string[] {
  const rows = db.prepare(REFUSED_CODES_SQL).all(REFUSED_SUPPLIER_ERROR.code, REFUSED_SUPPLIER_ERROR.attr) as Array<{
    s: string;
  }>;
  return rows.map((row) => row.s);
}
