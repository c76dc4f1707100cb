import type { DuckDBConnection } from '@duckdb/node-api';
import { InputError } from '../errors.js';
import type { ShapedRow, ShapedView } from './shaped-view.js';
import { clientText, quoteIdentifier, quoteLiteral } from './sql-text.js';

// A view's rows in the order the intake's join reads records in: by external account number as the tool compares
// them (trimmed as JavaScript trims, then byte order: DuckDB's default collation orders UTF-8 bytes, as
// sources/key-order.ts does), and within an account in the view's own order. DuckDB sorts (spilling to its
// temporary directory past its memory limit); rows come out a chunk at a time, never the whole view in memory.

/** What String.prototype.trim removes, for DuckDB's trim(text, characters). */
const JS_WHITESPACE =
  '\t\n\u000b\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029' +
  '\u202f\u205f\u3000\ufeff';

/** The view's rows ordered by key then the view's own order; with `keys`, only the rows of those accounts. */
function orderedQuery(view: ShapedView, keyColumn: string, keys?: readonly string[]): string {
  const cells = view.columns.map((column) => clientText(`CAST(${quoteIdentifier(column)} AS VARCHAR)`));
  const key = `trim(CAST(${quoteIdentifier(keyColumn)} AS VARCHAR), '${JS_WHITESPACE}')`;
  const only = keys === undefined ? '' : ` WHERE ${key} IN (${keys.map(quoteLiteral).join(', ') || 'NULL'})`;
  return (
    `SELECT ${[...cells, 'CAST(_file AS VARCHAR) AS _file', 'CAST(_line AS BIGINT) AS _line'].join(', ')} FROM ` +
    `(SELECT *, row_number() OVER () AS __row FROM ${quoteIdentifier(view.kind)})${only} ORDER BY ${key}, __row`
  );
}

/**
 * An error met while the view's rows are computed (a CAST of a value that does not convert, ...): it stops the read,
 * named at the view; try_cast keeps such a value for validation to report at its line instead.
 */
function viewError(shapeName: string, view: ShapedView, error: unknown): InputError {
  const message = (error instanceof Error ? error.message : String(error)).replace(/\s*\n\s*/g, ' ').trim();
  const advice = message.startsWith('Out of Memory')
    ? "The views are sorted within the engine's memory limit (src/defaults.ts shapeMemoryLimit), spilling to TMPDIR: " +
      'check the free space there, or simplify the views that join or aggregate the most rows.'
    : 'Mend the legacy value, or let the SQL keep it (try_cast gives NULL where CAST fails; passing the text on lets ' +
      'validation name the bad value at its legacy line).';
  return new InputError(
    `${shapeName} (view ${view.kind})`,
    undefined,
    `the view cannot be read: ${message.replace(/\s*Possible solutions:.*$/, '')}. ${advice}`,
    'shape_view_error',
    error,
  );
}

/** The table a view's whole read sorts it into, left behind for the control totals (source-use.ts). */
export const sortedTable = (view: ShapedView): string => `__sorted_${view.kind}`;

export async function* viewRows(
  connection: DuckDBConnection,
  shapeName: string,
  view: ShapedView,
  keyColumn: string,
  keys?: readonly string[],
): AsyncGenerator<ShapedRow[], void, undefined> {
  const fetch = async <T>(step: () => Promise<T>): Promise<T> => {
    try {
      return await step();
    } catch (error) {
      throw viewError(shapeName, view, error);
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
    const rows: ShapedRow[] = [];
    for (let row = 0; row < chunk.rowCount; row += 1) {
      const file = files[row];
      const line = lines[row];
      if (typeof file !== 'string' || typeof line !== 'bigint' || line < 1n)
        throw new InputError(
          `view ${view.kind}`,
          undefined,
          `a row has no legacy ${typeof file === 'string' ? '_line' : '_file'} (${String(line ?? file)}): ` +
            'select _file and _line of the source row each record comes from.',
          'shape_no_provenance',
        );
      const cells = new Array<string>(width);
      for (let column = 0; column < width; column += 1) cells[column] = (columns[column]?.[row] as string | null) ?? '';
      rows.push({ file, line: Number(line), cells });
    }
    yield rows;
  }
}
