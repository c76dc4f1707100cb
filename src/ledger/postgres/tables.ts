import type Database from 'better-sqlite3';
import type pg from 'pg';

// The ledger's tables as both stores hold them. Columns are read from the SQLite schema (PRAGMA table_info), so that
// the copy in either direction follows it; schema.ts keeps the PostgreSQL tables column for column the same.

export type LedgerTable =
  'runs' | 'accounts' | 'items' | 'events' | 'settings' | 'account_issues' | 'export_totals' | 'unused_rows';

/** In the order rows are written (a row's references first) and read. */
export const LEDGER_TABLES: readonly LedgerTable[] = [
  'runs',
  'accounts',
  'items',
  'account_issues',
  'events',
  'settings',
  'export_totals',
  'unused_rows',
];

export interface TableSpec {
  name: LedgerTable;
  /** Column names shared by both stores, in SQLite's order. */
  columns: string[];
  /** PostgreSQL array type of each column, for unnest(). */
  pgTypes: string[];
  /** The key rows are paged and upserted by. */
  key: string[];
}

const KEYS: Record<LedgerTable, string[]> = {
  runs: ['id'],
  accounts: ['id'],
  items: ['id'],
  events: ['id'],
  settings: ['key'],
  account_issues: ['account_id', 'pos'],
  export_totals: ['run_id'],
  unused_rows: ['run_id', 'id'],
};

/**
 * The column a changed row is named by in the working copy's change table (capture.ts), where it is not the key's
 * first: an issue by its account (an account's issues are replaced whole), an unused row by its id (its run's rows are
 * the only ones a working copy holds).
 */
export const CHANGE_COLUMN: Partial<Record<LedgerTable, string>> = { account_issues: 'account_id', unused_rows: 'id' };

export function tableSpec(db: Database.Database, name: LedgerTable): TableSpec {
  const info = db.pragma(`main.table_info(${name})`) as Array<{ name: string; type: string }>;
  const columns = info.map((column) => column.name);
  const pgTypes = info.map((column) => (/INT/i.test(column.type) ? 'bigint[]' : 'text[]'));
  // SQLite keeps an issue's order in its rowid; PostgreSQL in `pos`, its place among the account's issues.
  if (name === 'account_issues')
    return { name, columns: [...columns, 'pos'], pgTypes: [...pgTypes, 'integer[]'], key: KEYS[name] };
  return { name, columns, pgTypes, key: KEYS[name] };
}

/**
 * Writes rows (arrays of column values in spec order) in one statement: unnest() of one array per column, so that a
 * page of thousands of rows is one round trip with as many parameters as columns. An existing row is replaced.
 */
export async function upsertRows(client: pg.Client, spec: TableSpec, rows: readonly unknown[][]): Promise<void> {
  if (rows.length === 0) return;
  const arrays = spec.columns.map((_, index) => rows.map((row) => row[index] ?? null));
  const unnest = spec.pgTypes.map((type, index) => `$${index + 1}::${type}`).join(', ');
  const updates = spec.columns.filter((column) => !spec.key.includes(column));
  const onConflict =
    updates.length === 0
      ? 'DO NOTHING'
      : `DO UPDATE SET ${updates.map((column) => `${column} = EXCLUDED.${column}`).join(', ')}`;
  await client.query(
    `INSERT INTO ${spec.name} (${spec.columns.join(', ')}) SELECT * FROM unnest(${unnest}) ` +
      `ON CONFLICT (${spec.key.join(', ')}) ${onConflict}`,
    arrays,
  );
}

/**
 * Issues as SQLite holds them (in account, then rowid order), with their place among their account's issues added;
 * `next` carries the places across pages.
 */
export function withPositions(rows: readonly unknown[][], next = new Map<unknown, number>()): unknown[][] {
  return rows.map((row) => {
    const pos = next.get(row[0]) ?? 0;
    next.set(row[0], pos + 1);
    return [...row, pos];
  });
}

/**
 * Writes events. Shipped from a working copy (`keepIds` false) an event gets PostgreSQL's next id, and its working
 * copy id is kept as `local_id` beside the `origin` that names the working copy, so that a shipment sent again lands
 * once. Copied from a SQLite ledger (`keepIds`), it keeps its id.
 */
export async function insertEvents(
  client: pg.Client,
  spec: TableSpec,
  rows: readonly unknown[][],
  origin: string,
  keepIds: boolean,
): Promise<void> {
  if (rows.length === 0) return;
  const arrays = spec.columns.map((_, index) => rows.map((row) => row[index] ?? null));
  const unnest = spec.pgTypes.map((type, index) => `$${index + 1}::${type}`).join(', ');
  const target = keepIds ? spec.columns : spec.columns.filter((column) => column !== 'id');
  await client.query(
    `INSERT INTO events (${target.join(', ')}, origin, local_id) ` +
      `SELECT ${target.map((column) => `u.${column}`).join(', ')}, $${spec.columns.length + 1}::text, u.id ` +
      `FROM unnest(${unnest}) AS u(${spec.columns.join(', ')}) ON CONFLICT (origin, local_id) DO NOTHING`,
    [...arrays, origin],
  );
}

/** After rows were written with their own ids, the sequences go on past them. */
export async function advanceSequences(client: pg.Client): Promise<void> {
  await client.query(`SELECT setval('runs_id_seq', GREATEST((SELECT MAX(id) FROM runs), 1))`);
  await client.query(`SELECT setval('events_id_seq', GREATEST((SELECT MAX(id) FROM events), 1))`);
}
