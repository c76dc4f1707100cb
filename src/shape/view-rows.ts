import type { DuckDBConnection } from '@duckdb/node-api';
import { InputError } from '../errors.js';
import type { ShapedRow, ShapedView } from './shaped-view.js';
import { clientText, quoteIdentifier, quoteLiteral } from './sql-text.js';
import { viewPlaceName, viewReadError, type ViewLookUp, type ViewPlace } from './view-error.js';
import { legacyRowsOfText, ROWS_COLUMN, type LegacyRow } from './legacy-rows.js';

// A view's rows in the order the intake's join reads records in: by external account number as the tool compares
// them (trimmed as JavaScript trims, then byte order: DuckDB's default collation orders UTF-8 bytes, as
// sources/key-order.ts does), and within an account in the view's own order. DuckDB sorts (spilling to its
// temporary directory past its memory limit); rows come out a chunk at a time, never the whole view in memory.

/** What String.prototype.trim removes, for DuckDB's trim(text, characters). */
const JS_WHITESPACE =
  '\t\n\u000b\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029' +
  '\u202f\u205f\u3000\ufeff';

/** A key column as the intake's join compares keys: trimmed as JavaScript trims (then byte order, DuckDB's default). */
export function keyText(column: string): string {
  return `trim(CAST(${quoteIdentifier(column)} AS VARCHAR), '${JS_WHITESPACE}')`;
}

/** The view's rows ordered by key then the view's own order; with `keys`, only the rows of those accounts. */
function orderedQuery(view: ShapedView, keyColumn: string, keys?: readonly string[]): string {
  const cells = view.columns.map((column) => clientText(`CAST(${quoteIdentifier(column)} AS VARCHAR)`));
  const key = keyText(keyColumn);
  const only = keys === undefined ? '' : ` WHERE ${key} IN (${keys.map(quoteLiteral).join(', ') || 'NULL'})`;
  const rows = view.hasRows ? [`CAST(to_json(${ROWS_COLUMN}) AS VARCHAR) AS ${ROWS_COLUMN}`] : [];
  return (
    `SELECT ${[...cells, 'CAST(_file AS VARCHAR) AS _file', 'CAST(_line AS BIGINT) AS _line', ...rows].join(', ')} ` +
    'FROM ' +
    `(SELECT *, row_number() OVER () AS __row FROM ${quoteIdentifier(view.kind)})${only} ORDER BY ${key}, __row`
  );
}

/** Where the view is made, the engine's shortages and the sources its failing values are looked up in. */
export interface ViewReading extends Omit<ViewLookUp, 'connection'> {
  place: ViewPlace;
}

/** The table a view's whole read sorts it into, left behind for the control totals (source-use.ts). */
export const sortedTable = (view: ShapedView): string => `__sorted_${view.kind}`;

export async function* viewRows(
  connection: DuckDBConnection,
  reading: ViewReading,
  view: ShapedView,
  keyColumn: string,
  keys?: readonly string[],
): AsyncGenerator<ShapedRow[], void, undefined> {
  const fetch = async <T>(step: () => Promise<T>): Promise<T> => {
    try {
      return await step();
    } catch (error) {
      throw await viewReadError(reading.place, error, { ...reading, connection });
    }
  };
  // The whole view is sorted into a table of the engine's database file first, one view at a time (a sort spills to
  // disk past the memory limit), then read back in that order: five views streamed from five open sorts at once held
  // every sorted run in memory and ran out of it at 100,000 accounts.
  const sorted = keys === undefined ? sortedTable(view) : undefined;
  if (sorted !== undefined)
    await fetch(() => connection.run(`CREATE OR REPLACE TABLE ${sorted} AS ${orderedQuery(view, keyColumn)}`));
  const query = sorted === undefined ? orderedQuery(view, keyColumn, keys) : `SELECT * FROM ${sorted}`;
  const result = await fetch(() => connection.stream(query));
  const width = view.columns.length;
  const next = () => fetch(() => result.fetchChunk());
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
