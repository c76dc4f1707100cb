import type { DuckDBConnection } from '@duckdb/node-api';
import { InputError } from '../errors.js';
import type { ShortageOf } from './engine-limits.js';
import type { LoadedSource } from './load-sources.js';
import { quoteIdentifier, quoteLiteral } from './sql-text.js';

// An error met while a view's rows are computed (a record kind's view or a team's check view), named where the team
// can act on it: running short of the engine's memory or temporary disk with the setting to raise (engine-limits.ts);
// anything else (a CAST of a value that does not convert, a strptime of a date that does not parse, ...) at the view's
// CREATE VIEW line in the shape file and, where the engine's message says which value (and from which column), at the
// legacy rows holding that value.

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

/** What naming a view's failure needs: the engine's shortages, and where a failing value is looked up. */
export interface ViewLookUp {
  /** Running short of the engine's memory or disk, told with the setting to raise (engine-limits.ts). */
  shortage: ShortageOf;
  connection?: DuckDBConnection;
  sources: readonly LoadedSource[];
}

/**
 * The error of a view that cannot be read: it stops the read, named at the view's line in the shape file. A shortage
 * of memory or disk names the setting to raise; any other failure the legacy rows of the value, with try_cast to keep
 * such a value for validation to report at its line instead.
 */
export async function viewReadError(place: ViewPlace, error: unknown, lookUp: ViewLookUp): Promise<InputError> {
  const short = lookUp.shortage(viewPlaceName(place), error);
  if (short !== undefined) return short;
  const full = error instanceof Error ? error.message : String(error);
  const message = full
    .replace(/\n+LINE \d+:[\s\S]*$/, '')
    .replace(/\s*\n\s*/g, ' ')
    .replace(/\s*Possible solutions:.*$/, '')
    .trim();
  const rows = await valueRows(lookUp.connection, lookUp.sources, full);
  return new InputError(
    viewPlaceName(place),
    undefined,
    `the view cannot be read: ${message.replace(/\.$/, '')}.${rows} Mend the legacy value, or let the SQL keep it ` +
      '(try_cast gives NULL where CAST fails; passing the text on lets validation name the bad value at its legacy ' +
      'line).',
    'shape_view_error',
    error,
  );
}
