import type Database from 'better-sqlite3';
import type pg from 'pg';
import {
  advanceSequences,
  insertEvents,
  LEDGER_TABLES,
  tableSpec,
  upsertRows,
  withPositions,
  type LedgerTable,
  type TableSpec,
} from './tables.js';

// Whole-ledger copies between the two stores, page by page (flat memory whatever the ledger's size): PostgreSQL into
// a SQLite file (the snapshot status and report read, a runner's working copy) and a SQLite ledger into PostgreSQL
// (`migrate ledger copy`).

const PAGE = 5_000;

/** What a copy moved, per table. */
export type CopyCounts = Record<string, number>;

/**
 * Copies every row of the PostgreSQL ledger into `db` (a new SQLite ledger of the same schema) with their ids. The
 * caller runs it inside a REPEATABLE READ transaction when it needs one consistent snapshot.
 */
export async function copyIntoSqlite(
  client: pg.Client,
  db: Database.Database,
  tables: readonly LedgerTable[] = LEDGER_TABLES,
): Promise<CopyCounts> {
  const counts: CopyCounts = {};
  for (const name of tables) {
    const spec = tableSpec(db, name);
    const sqliteColumns = name === 'account_issues' ? spec.columns.slice(0, -1) : spec.columns;
    const insert = db.prepare(
      `INSERT INTO main.${name} (${sqliteColumns.join(', ')}) VALUES (${sqliteColumns.map(() => '?').join(', ')})`,
    );
    const write = db.transaction((rows: unknown[][]) => {
      for (const row of rows) insert.run(...row.slice(0, sqliteColumns.length));
    });
    counts[name] = 0;
    for await (const rows of pagesOf(client, spec)) {
      write(rows);
      counts[name] += rows.length;
    }
  }
  return counts;
}

/** Rows of a PostgreSQL table in key order, a page at a time (keyset paging, never OFFSET), as arrays. */
async function* pagesOf(client: pg.Client, spec: TableSpec): AsyncGenerator<unknown[][]> {
  let after: unknown[] | undefined;
  const key = spec.key.join(', ');
  for (;;) {
    const marks = spec.key.map((_, index) => `$${index + 1}`).join(', ');
    const where = after === undefined ? '' : `WHERE (${key}) > (${marks})`;
    const result = await client.query({
      text: `SELECT ${spec.columns.join(', ')} FROM ${spec.name} ${where} ORDER BY ${key} LIMIT ${PAGE}`,
      values: after ?? [],
      rowMode: 'array',
    });
    const rows = result.rows as unknown[][];
    if (rows.length === 0) return;
    yield rows;
    const last = rows[rows.length - 1] ?? [];
    after = spec.key.map((column) => last[spec.columns.indexOf(column)]);
    if (rows.length < PAGE) return;
  }
}

/** Copies every row of a SQLite ledger into the PostgreSQL ledger (inside the caller's transaction). */
export async function copyIntoPostgres(db: Database.Database, client: pg.Client): Promise<CopyCounts> {
  const counts: CopyCounts = {};
  for (const name of LEDGER_TABLES) {
    const spec = tableSpec(db, name);
    const issues = name === 'account_issues';
    const columns = issues ? spec.columns.slice(0, -1) : spec.columns;
    // Issues in account order, then rowid (their order): positions are counted per account.
    const order = issues ? 'account_id, rowid' : spec.key.join(', ');
    const rows = db.prepare(`SELECT ${columns.join(', ')} FROM main.${name} ORDER BY ${order}`).raw(true);
    counts[name] = 0;
    const positions = new Map<unknown, number>();
    let page: unknown[][] = [];
    const write = (rows: unknown[][]): Promise<void> =>
      name === 'events'
        ? insertEvents(client, spec, rows, 'sqlite', true)
        : upsertRows(client, spec, issues ? withPositions(rows, positions) : rows);
    for (const row of rows.iterate() as IterableIterator<unknown[]>) {
      page.push(row);
      if (page.length < PAGE) continue;
      await write(page);
      counts[name] += page.length;
      page = [];
    }
    await write(page);
    counts[name] += page.length;
  }
  await advanceSequences(client);
  return counts;
}
