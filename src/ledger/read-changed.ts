import type Database from 'better-sqlite3';
import type { ItemKind } from './types.js';

// What the export changed after it was sent (docs/reruns.md): the service has no update endpoint, so an
// account or a post-import record whose data changed after it was sent keeps on the platform what was sent. Staging
// records the change (changed_fingerprint); push, status and report read it here, through partial indexes that hold
// only those rows (migration 7).

type Raw = Record<string, unknown>;

/** One account or record changed after it was sent, where the export now has it. */
export interface ChangedRow {
  externalAccountNumber: string;
  /** `account`, or the record's kind. */
  record: 'account' | ItemKind;
  /** The record's natural key (empty for an account). */
  naturalKey: string;
  file: string | null;
  line: number | null;
}

export interface ChangedAfterImport {
  accounts: number;
  records: Partial<Record<ItemKind, number>>;
  /** The first `limit` of them: accounts, then records, in id order. */
  listed: ChangedRow[];
}

/** Accounts and records changed after they were sent, of one import supplier (all when undefined). */
export function readChangedAfterImport(
  db: Database.Database,
  supplier: string | undefined,
  limit: number,
): ChangedAfterImport {
  const bySupplier = supplier === undefined ? '' : 'AND a.import_supplier = ?';
  const params = supplier === undefined ? [] : [supplier];
  const accountRows = db
    .prepare(
      `SELECT a.external_account_number AS number, a.origin_file AS file, a.origin_line AS line FROM accounts a
       WHERE a.changed_fingerprint IS NOT NULL ${bySupplier} ORDER BY a.id`,
    )
    .iterate(...params) as IterableIterator<Raw>;
  const listed: ChangedRow[] = [];
  let accounts = 0;
  for (const row of accountRows) {
    accounts += 1;
    if (listed.length < limit) listed.push({ ...located(row), record: 'account', naturalKey: '' });
  }
  const records: Partial<Record<ItemKind, number>> = {};
  const itemRows = db
    .prepare(
      `SELECT a.external_account_number AS number, it.kind AS kind, it.natural_key AS key, it.origin_file AS file,
         it.origin_line AS line
       FROM items it JOIN accounts a ON a.id = it.account_id
       WHERE it.changed_fingerprint IS NOT NULL ${bySupplier} ORDER BY it.id`,
    )
    .iterate(...params) as IterableIterator<Raw>;
  for (const row of itemRows) {
    const kind = String(row['kind']) as ItemKind;
    records[kind] = (records[kind] ?? 0) + 1;
    if (listed.length < limit) listed.push({ ...located(row), record: kind, naturalKey: String(row['key']) });
  }
  return { accounts, records, listed };
}

function located(row: Raw): Pick<ChangedRow, 'externalAccountNumber' | 'file' | 'line'> {
  return {
    externalAccountNumber: String(row['number']),
    file: (row['file'] as string | null) ?? null,
    line: row['line'] === null ? null : Number(row['line']),
  };
}
