import type { DuckDBConnection } from '@duckdb/node-api';
import { InputError } from '../errors.js';
import type { LoadedSource } from './load-sources.js';
import { quoteIdentifier, quoteLiteral } from './sql-text.js';

// An error met while a view's rows are computed (a CAST of a value that does not convert, a strptime of a date that
// does not parse, ...) named where the team can act on it: the view's CREATE VIEW line in the shape file and, where
// the engine's message says which value (and from which column), the legacy rows holding that value.

/** Where a view is made: the shape file as messages name it, the view, and the line of its CREATE VIEW. */
export interface ViewPlace {
  shapeName: string;
  view: string;
  /** Undefined where the shape file's text does not show it (a view made by a macro, a name built otherwise). */
  line: number | undefined;
}

/** Legacy rows named for a value, at most. */
const ROWS_NAMED = 3;

/** The value an engine message quotes, and the column it was cast from when it says so. */
export function quotedValue(message: string): { value: string; column?: string } | undefined {
  const value =
    /Could not convert string (?:'([^']*)'|"([^"]*)")/.exec(message) ??
    /Could not parse string "([^"]*)"/.exec(message) ??
    /(?:invalid|incorrect) [\w ]*format[^"']*(?:"([^"]*)"|'([^']*)')/i.exec(message);
  const text = value?.slice(1).find((group) => group !== undefined);
  if (text === undefined) return undefined;
  const column = /when casting from source column (\S+)/.exec(message)?.[1];
  return column === undefined ? { value: text } : { value: text, column };
}

/** `shape.sql:12 (view accounts)`: where the view's problems are named. */
export function viewPlaceName(place: ViewPlace): string {
  return `${place.shapeName}${place.line === undefined ? '' : `:${place.line}`} (view ${place.view})`;
}

/**
 * The legacy rows holding `value`: in its column where a source has a column of that name, else in any column; the
 * first few, as `file:line (column)`.
 */
async function rowsHolding(
  connection: DuckDBConnection,
  sources: readonly LoadedSource[],
  found: { value: string; column?: string },
): Promise<string[]> {
  const named: string[] = [];
  for (const source of sources) {
    const own = source.columns.find((column) => column.toLowerCase() === found.column?.toLowerCase());
    const columns = own === undefined ? source.columns : [own];
    for (const column of columns) {
      if (named.length >= ROWS_NAMED) return named;
      const read = await connection.runAndReadAll(
        `SELECT _file, _line FROM ${quoteIdentifier(source.table)} WHERE ${quoteIdentifier(column)} = ` +
          `${quoteLiteral(found.value)} ORDER BY _file, _line LIMIT ${ROWS_NAMED - named.length}`,
      );
      for (const [file, line] of read.getRowsJS() as Array<[string, bigint]>) named.push(`${file}:${line} (${column})`);
    }
  }
  return named;
}

/** The sentence naming the legacy rows of the value the engine quoted; '' when it quoted none or none holds it. */
async function valueRows(
  connection: DuckDBConnection | undefined,
  sources: readonly LoadedSource[],
  message: string,
): Promise<string> {
  const found = quotedValue(message);
  if (found === undefined || connection === undefined) return '';
  const rows = await rowsHolding(connection, sources, found).catch(() => []);
  if (rows.length === 0) return '';
  const more = rows.length >= ROWS_NAMED ? ', ...' : '';
  return ` The value ${JSON.stringify(found.value)} is in ${rows.join(', ')}${more}.`;
}

/**
 * The error of a view that cannot be read: it stops the read, named at the view's line in the shape file and at the
 * legacy rows of the value; try_cast keeps such a value for validation to report at its line instead.
 */
export async function viewReadError(
  place: ViewPlace,
  error: unknown,
  lookUp: { connection?: DuckDBConnection; sources: readonly LoadedSource[] },
): Promise<InputError> {
  const full = error instanceof Error ? error.message : String(error);
  const message = full
    .replace(/\n+LINE \d+:[\s\S]*$/, '')
    .replace(/\s*\n\s*/g, ' ')
    .replace(/\s*Possible solutions:.*$/, '')
    .trim();
  const advice = message.startsWith('Out of Memory')
    ? "The views are sorted within the shape engine's memory limit, spilling to TMPDIR: check the free space there, " +
      'or simplify the views that join or aggregate the most rows.'
    : 'Mend the legacy value, or let the SQL keep it (try_cast gives NULL where CAST fails; passing the text on lets ' +
      'validation name the bad value at its legacy line).';
  const rows = await valueRows(lookUp.connection, lookUp.sources, full);
  return new InputError(
    viewPlaceName(place),
    undefined,
    `the view cannot be read: ${message.replace(/\.$/, '')}.${rows} ${advice}`,
    'shape_view_error',
    error,
  );
}
