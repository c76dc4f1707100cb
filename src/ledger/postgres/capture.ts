import type Database from 'better-sqlite3';
import type { LedgerTable } from './tables.js';

// Every write to a runner's working copy is recorded, in the same SQLite transaction, in a change table: which row of
// which table changed (an issue: its account; a setting: its key). The shipper sends those rows to PostgreSQL. The
// triggers and the table are TEMP: they belong to this connection, and nothing of them is in the file.

/** Each table and the column that names a changed row: its id, its account (an issue), its key (a setting). */
const ROW_TABLES: ReadonlyArray<[LedgerTable, string, 'row_id' | 'key']> = [
  ['runs', 'id', 'row_id'],
  ['accounts', 'id', 'row_id'],
  ['items', 'id', 'row_id'],
  ['events', 'id', 'row_id'],
  ['account_issues', 'account_id', 'row_id'],
  ['settings', 'key', 'key'],
  ['export_totals', 'run_id', 'row_id'],
  ['unused_rows', 'id', 'row_id'],
];

/** Installs the change table and its triggers on an open working copy (after it was filled). */
export function captureChanges(db: Database.Database): void {
  const statements = [
    'CREATE TEMP TABLE ledger_changes (seq INTEGER PRIMARY KEY, tbl TEXT NOT NULL, row_id INTEGER, key TEXT)',
  ];
  for (const [table, column, target] of ROW_TABLES)
    for (const [event, row] of [
      ['INSERT', 'NEW'],
      ['UPDATE', 'NEW'],
      ['DELETE', 'OLD'],
    ] as const)
      statements.push(
        `CREATE TEMP TRIGGER ledger_${table}_${event.toLowerCase()} AFTER ${event} ON main.${table} BEGIN ` +
          `INSERT INTO ledger_changes (tbl, ${target}) VALUES ('${table}', ${row}.${column}); END`,
      );
  for (const sql of statements) db.exec(sql);
}

/** The rows changed up to change `upTo` (inclusive), per table: ids (or account ids, or setting keys). */
export function changedRows(db: Database.Database, upTo: number): Map<LedgerTable, unknown[]> {
  const rows = db
    .prepare('SELECT DISTINCT tbl, COALESCE(row_id, key) FROM temp.ledger_changes WHERE seq <= ?')
    .raw(true)
    .all(upTo) as Array<[LedgerTable, unknown]>;
  const changed = new Map<LedgerTable, unknown[]>();
  for (const [table, key] of rows) {
    const list = changed.get(table) ?? [];
    list.push(key);
    changed.set(table, list);
  }
  return changed;
}

/** The last change recorded (0: none). */
export function lastChange(db: Database.Database): number {
  return (db.prepare('SELECT COALESCE(MAX(seq), 0) AS n FROM temp.ledger_changes').get() as { n: number }).n;
}

/** Forgets the changes up to `upTo` once PostgreSQL has committed them. */
export function forgetChanges(db: Database.Database, upTo: number): void {
  db.prepare('DELETE FROM temp.ledger_changes WHERE seq <= ?').run(upTo);
}

/** Forgets the changes after `seq`: rows written into the working copy as PostgreSQL holds them (a leased page). */
export function forgetChangesAfter(db: Database.Database, seq: number): void {
  db.prepare('DELETE FROM temp.ledger_changes WHERE seq > ?').run(seq);
}
