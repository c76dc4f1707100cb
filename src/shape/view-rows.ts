import type { DuckDBConnection, DuckDBResult } from '@duckdb/node-api';
import { InputError } from '../errors.js';
import type { ShapedRow, ShapedView } from './shaped-view.js';
import { clientText, quoteIdentifier, quoteLiteral } from './sql-text.js';
import { viewPlaceName, viewReadError, type ViewLookUp, type ViewPlace } from './view-error.js';
import { legacyRowsOfText, ROWS_COLUMN, type LegacyRow } from './legacy-rows.js';

// A view's rows in the order the intake's join reads records in: by external account number as the tool compares
// them (trimmed as JavaScript trims, then byte order: DuckDB's default collation orders UTF-8 bytes, as
// sources/key-order.ts does), and within an account in the view's own order. Rows come out a chunk at a time, never
// the whole view in this process's memory.
//
// The engine's sort does not spill rows of about 2 KB or more (an account's ledgers as JSON are that long): sorted
// whole, a view of such rows must fit within the engine's memory limit, and 1,000,000 accounts with their posting
// history did not fit in 1GB (test/bench/results.md). So a view is first written as it comes into a table of the
// engine's database file (on disk past the memory limit), with each row's key and size; its keys alone are then
// sorted (small rows, which spill), cut into ranges of keys whose rows fit a share of the memory limit, and the rows
// of one range at a time are sorted into a second table and read back. A view that fits is one range.

/** What String.prototype.trim removes, for DuckDB's trim(text, characters). */
const JS_WHITESPACE =
  '\t\n\u000b\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029' +
  '\u202f\u205f\u3000\ufeff';

/** A key column as the intake's join compares keys: trimmed as JavaScript trims (then byte order, DuckDB's default). */
export function keyText(column: string): string {
  return `trim(CAST(${quoteIdentifier(column)} AS VARCHAR), '${JS_WHITESPACE}')`;
}

/** The view's columns as the reader takes them: its cells as text, `_file`, `_line` and, where it has them, `_rows`. */
function readColumns(view: ShapedView): string[] {
  const cells = view.columns.map(
    (column, at) => `${clientText(`CAST(${quoteIdentifier(column)} AS VARCHAR)`)} AS ${cellName(at)}`,
  );
  const rows = view.hasRows ? [`CAST(to_json(${ROWS_COLUMN}) AS VARCHAR) AS ${ROWS_COLUMN}`] : [];
  return [...cells, 'CAST(_file AS VARCHAR) AS _file', 'CAST(_line AS BIGINT) AS _line', ...rows];
}

const cellName = (at: number): string => `__cell_${at}`;

/** The names of readColumns, as selected again from a table they were written to. */
function readNames(view: ShapedView): string[] {
  return [...view.columns.map((_, at) => cellName(at)), '_file', '_line', ...(view.hasRows ? [ROWS_COLUMN] : [])];
}

/** Where a view is made, the engine's shortages and the sources its failing values are looked up in. */
export interface ViewReading extends Omit<ViewLookUp, 'connection'> {
  place: ViewPlace;
  /** The engine's memory limit: a range of a view sorted at once takes a share of it. */
  memoryBytes: number;
}

/**
 * The table a view's whole read writes it to, as it comes (its columns as readColumns names them, then `__key`,
 * `__row` and `__bytes`), left behind for the control totals (source-use.ts).
 */
export const viewTable = (view: ShapedView): string => `__view_${view.kind}`;

/**
 * Set once the sources are loaded, before the views are read: the tables the reader writes (each view as it comes, a
 * range sorted) are scratch, written and read once, and stored uncompressed. Compressing them took more CPU than the
 * sort itself (1,000,000 rows of 49 columns: 32.6 s of CPU written compressed then sorted, 11.5 s uncompressed, 16.2 s
 * for the sort alone), at three to four times the disk (held to `--shape-temp-limit` like every engine file).
 */
export const UNCOMPRESSED_TABLES = "SET force_compression = 'uncompressed'";

/** The share of the engine's memory limit the rows of one range may take: the views are read side by side. */
const RANGE_SHARE = 1 / 4;

/** What a cell takes in the engine's sort beyond its text (its place in the row, a string's header). */
const CELL_BYTES = 16;

/**
 * Rows whose text is shorter than this the engine's sort spills (measured in 256MB: 400,000 rows of 1,000 characters
 * sorted, 200,000 of 2,000 did not): a view of such rows is sorted whole, in one pass over its table.
 */
const SPILLED_ROW_BYTES = 1000;

/**
 * The view's rows in account order, a chunk at a time. Read whole, the view is left in viewTable; with `keys`, only
 * the rows of those accounts are read, from the view itself.
 */
export async function* viewRows(
  connection: DuckDBConnection,
  reading: ViewReading,
  view: ShapedView,
  keyColumn: string,
  keys?: readonly string[],
): AsyncGenerator<ShapedRow[], void, undefined> {
  const engine = async <T>(step: () => Promise<T>): Promise<T> => {
    try {
      return await step();
    } catch (error) {
      throw await viewReadError(reading.place, error, { ...reading, connection });
    }
  };
  if (keys !== undefined) {
    const key = keyText(keyColumn);
    const only = `${key} IN (${keys.map(quoteLiteral).join(', ') || 'NULL'})`;
    yield* chunkRows(
      reading,
      view,
      await engine(() =>
        connection.stream(
          `SELECT ${readColumns(view).join(', ')} FROM (SELECT *, row_number() OVER () AS __row FROM ` +
            `${quoteIdentifier(view.kind)}) WHERE ${only} ORDER BY ${key}, __row`,
        ),
      ),
      engine,
    );
    return;
  }
  const table = viewTable(view);
  const sorted = `__range_${view.kind}`;
  const cellBytes = view.columns.map((_, at) => `coalesce(strlen(${cellName(at)}), 0)`).join(' + ') || '0';
  await engine(() =>
    connection.run(
      `CREATE OR REPLACE TABLE ${table} AS SELECT *, ${cellBytes} AS __bytes FROM (SELECT ` +
        `${readColumns(view).join(', ')}, ${keyText(keyColumn)} AS __key, __row FROM ` +
        `(SELECT *, row_number() OVER () AS __row FROM ${quoteIdentifier(view.kind)}))`,
    ),
  );
  const budget = { bytes: reading.memoryBytes * RANGE_SHARE, perRow: CELL_BYTES * (view.columns.length + 3) };
  const firsts = await engine(() => rangeFirstKeys(connection, table, budget));
  for (let range = 0; range < Math.max(firsts.length, 1); range += 1) {
    await engine(() =>
      connection.run(
        `CREATE OR REPLACE TABLE ${sorted} AS SELECT ${readNames(view).join(', ')} FROM ${table} ` +
          `WHERE ${rangeCondition(firsts, range)} ORDER BY __key, __row`,
      ),
    );
    yield* chunkRows(reading, view, await engine(() => connection.stream(`SELECT * FROM ${sorted}`)), engine);
  }
  await engine(() => connection.run(`DROP TABLE ${sorted}`));
}

/**
 * The first key of each range of keys whose rows take at most `budget.bytes` in the sort together (an account's rows
 * are never cut: one account past the budget is a range of its own), in key order; none where the view is sorted
 * whole (rows the sort spills, or no keyed row).
 */
async function rangeFirstKeys(
  connection: DuckDBConnection,
  table: string,
  budget: { bytes: number; perRow: number },
): Promise<string[]> {
  const longest = await connection.runAndReadAll(`SELECT coalesce(max(__bytes), 0) FROM ${table}`);
  if (Number(longest.getRowsJS()[0]?.[0] ?? 0) < SPILLED_ROW_BYTES) return [];
  const read = await connection.runAndReadAll(
    'SELECT min(__key) AS first FROM (SELECT __key, bytes, sum(bytes) OVER (ORDER BY __key ROWS UNBOUNDED ' +
      `PRECEDING) AS upto FROM (SELECT __key, sum(__bytes + ${budget.perRow}) AS bytes FROM ${table} ` +
      `WHERE __key IS NOT NULL GROUP BY __key)) GROUP BY floor((upto - bytes) / ` +
      `${Math.max(1, Math.floor(budget.bytes))}) ORDER BY first`,
  );
  return (read.getRowsJS() as Array<[string]>).map(([first]) => first);
}

/** The rows of the range-th range of keys; the last takes the rows without a key too (the sort puts them last). */
function rangeCondition(firsts: readonly string[], range: number): string {
  const from = range === 0 ? [] : [`__key >= ${quoteLiteral(firsts[range] ?? '')}`];
  const next = firsts[range + 1];
  if (next !== undefined) return [...from, `__key < ${quoteLiteral(next)}`].join(' AND ');
  return from.length === 0 ? 'true' : `(${from[0] ?? ''} OR __key IS NULL)`;
}

/** A streamed result's rows, a chunk at a time, as the view's rows. */
async function* chunkRows(
  reading: ViewReading,
  view: ShapedView,
  result: DuckDBResult,
  engine: <T>(step: () => Promise<T>) => Promise<T>,
): AsyncGenerator<ShapedRow[], void, undefined> {
  const width = view.columns.length;
  const next = () => engine(() => result.fetchChunk());
  for (let chunk = await next(); chunk && chunk.rowCount > 0; chunk = await next()) {
    const columns = chunk.getColumns();
    const files = columns[width] ?? [];
    const lines = columns[width + 1] ?? [];
    const legacy = view.hasRows ? (columns[width + 2] ?? []) : undefined;
    const rows: ShapedRow[] = [];
    for (let row = 0; row < chunk.rowCount; row += 1) {
      const file = files[row];
      const line = lines[row];
      if (typeof file !== 'string' || typeof line !== 'bigint' || line < 1n)
        throw new InputError(
          viewPlaceName(reading.place),
          undefined,
          `a row has no legacy ${typeof file === 'string' ? '_line' : '_file'} (${String(line ?? file)}): ` +
            'select _file and _line of the source row each record comes from.',
          'shape_no_provenance',
        );
      const cells = new Array<string>(width);
      for (let column = 0; column < width; column += 1) cells[column] = (columns[column]?.[row] as string | null) ?? '';
      rows.push({ file, line: Number(line), cells, ...(legacy ? { rows: rowsOf(reading, legacy[row]) } : {}) });
    }
    yield rows;
  }
}

/** A row's `_rows`, read; a value that is no list of legacy rows stops the read, named at the view. */
function rowsOf(reading: ViewReading, value: unknown): LegacyRow[] {
  const rows = typeof value === 'string' ? legacyRowsOfText(value) : value === null ? [] : undefined;
  if (rows !== undefined) return rows;
  throw new InputError(
    viewPlaceName(reading.place),
    undefined,
    `_rows holds ${JSON.stringify(String(value)).slice(0, 80)}: it names every legacy row of a record as a list of ` +
      "'file:line' texts (list(_file || ':' || _line)) or of structs (list({'file': _file, 'line': _line})).",
    'shape_rows',
  );
}
