import type { DuckDBConnection } from '@duckdb/node-api';
import { InputError } from '../errors.js';
import { clientText, quoteIdentifier } from './sql-text.js';
import { viewPlaceName, viewReadError, type ViewLookUp, type ViewPlace } from './view-error.js';
import { keyText } from './view-rows.js';

// The team's own checks (docs/from-a-legacy-system.md "The team's own checks"): every view of the shape file named
// check_<name>, with the columns external_account_number (optional), _file, _line, message and severity (optional:
// error, the default, or warning). Every row is a problem at that legacy line, with the code check_<name>. The rows of
// every check are computed once, when the shape is opened (a check that cannot be computed stops there, named at its
// view), into one table of the engine's database file, and handed out from there: those naming an account in
// account order (the order the intake's join hands out accounts in), those naming none all at once.

export type CheckSeverity = 'error' | 'warning';

/** One row of a check view. */
export interface CheckRow {
  /** `check_<name>`: the view's name, in lower case. */
  code: string;
  /** The external account number, trimmed; undefined where the row names none. */
  key: string | undefined;
  file: string;
  line: number;
  message: string;
  severity: CheckSeverity;
}

export interface TeamChecks {
  /** The check views, in name order. */
  readonly codes: readonly string[];
  /** The rows naming no account, in legacy file and line order. */
  keyless(): Promise<CheckRow[]>;
  /** The rows naming an account, ordered by it as the join orders accounts; in batches. */
  keyed(connection: DuckDBConnection): AsyncGenerator<CheckRow[], void, undefined>;
}

export const CHECK_PREFIX = 'check_';
const REQUIRED = ['_file', '_line', 'message'] as const;
const OPTIONAL = ['external_account_number', 'severity'] as const;
const TABLE = '__team_checks';

interface CheckView {
  code: string;
  place: ViewPlace;
  columns: ReadonlySet<string>;
}

/** The check views among the views the shape file made, their columns checked. */
async function checkViews(
  connection: DuckDBConnection,
  shapeName: string,
  views: readonly string[],
  lines: ReadonlyMap<string, number>,
): Promise<CheckView[]> {
  const found: CheckView[] = [];
  for (const code of views.filter((view) => view.startsWith(CHECK_PREFIX)).sort()) {
    const place = { shapeName, view: code, line: lines.get(code) };
    const prepared = await connection.prepare(`SELECT * FROM ${quoteIdentifier(code)}`);
    const columns = Array.from({ length: prepared.columnCount }, (_, index) =>
      prepared.columnName(index).toLowerCase(),
    );
    prepared.destroySync();
    const missing = REQUIRED.filter((column) => !columns.includes(column));
    const other = columns.filter((column) => !([...REQUIRED, ...OPTIONAL] as string[]).includes(column));
    if (missing.length + other.length > 0)
      throw new InputError(
        viewPlaceName(place),
        undefined,
        `a check view has the columns external_account_number (optional), _file, _line, message and severity ` +
          `(optional: error or warning); this one ${missing.length > 0 ? `has no ${missing.join(', ')}` : ''}` +
          `${missing.length > 0 && other.length > 0 ? ' and ' : ''}` +
          `${other.length > 0 ? `has ${other.join(', ')} besides (fold them into the message)` : ''}.`,
        'shape_check_columns',
      );
    found.push({ code, place, columns: new Set(columns) });
  }
  return found;
}

/**
 * One check's rows into the checks' table; a check that cannot be computed is named at its view, as a record kind's
 * view is (out of memory or disk with the setting to raise).
 */
async function collect(connection: DuckDBConnection, check: CheckView, lookUp: Omit<ViewLookUp, 'connection'>) {
  const key = check.columns.has('external_account_number')
    ? `nullif(${keyText('external_account_number')}, '')`
    : 'NULL';
  const severity = check.columns.has('severity') ? 'CAST(severity AS VARCHAR)' : 'NULL';
  try {
    await connection.run(
      `INSERT INTO ${TABLE} SELECT '${check.code}', ${key}, CAST(_file AS VARCHAR), TRY_CAST(_line AS BIGINT), ` +
        `${clientText('CAST(message AS VARCHAR)')}, ${severity} FROM ${quoteIdentifier(check.code)}`,
    );
  } catch (error) {
    throw await viewReadError(check.place, error, { ...lookUp, connection });
  }
  const read = await connection.runAndReadAll(
    `SELECT file, line FROM ${TABLE} WHERE code = '${check.code}' AND (file IS NULL OR line IS NULL OR line < 1) ` +
      'LIMIT 1',
  );
  const [bad] = read.getRowsJS();
  if (bad !== undefined)
    throw new InputError(
      viewPlaceName(check.place),
      undefined,
      `a row has no legacy ${bad[0] === null ? '_file' : '_line'}: every row of a check names the legacy file and ` +
        'line it is about (select _file and _line of the row the check found).',
      'shape_no_provenance',
    );
}

function severityOf(text: string | null): { severity: CheckSeverity; note: string } {
  const word = (text ?? '').trim().toLowerCase();
  if (word === 'warning') return { severity: 'warning', note: '' };
  if (word === '' || word === 'error') return { severity: 'error', note: '' };
  return {
    severity: 'error',
    note: ` (severity ${JSON.stringify(text)} is neither error nor warning: taken as an error)`,
  };
}

type Cells = [string, string | null, string, bigint | number, string | null, string | null];

function checkRow(cells: Cells): CheckRow {
  const [code, key, file, line, message, severityText] = cells;
  const { severity, note } = severityOf(severityText);
  return {
    code,
    key: key ?? undefined,
    file,
    line: Number(line),
    message: `${message === null || message.trim() === '' ? `${code} found this row` : message}${note}`,
    severity,
  };
}

const COLUMNS = 'code, key, file, line, message, severity';

/**
 * Finds the shape file's check views among `views` (lower-case names), checks their columns and computes their rows;
 * undefined when it has none.
 */
export async function openTeamChecks(
  connection: DuckDBConnection,
  shapeName: string,
  made: { views: readonly string[]; lines: ReadonlyMap<string, number> } & Omit<ViewLookUp, 'connection'>,
): Promise<TeamChecks | undefined> {
  const checks = await checkViews(connection, shapeName, made.views, made.lines);
  if (checks.length === 0) return undefined;
  await connection.run(
    `CREATE TABLE ${TABLE} (code VARCHAR, key VARCHAR, file VARCHAR, line BIGINT, message VARCHAR, severity VARCHAR)`,
  );
  for (const check of checks) await collect(connection, check, made);
  return {
    codes: checks.map((check) => check.code),
    keyless: async () => {
      const read = await connection.runAndReadAll(
        `SELECT ${COLUMNS} FROM ${TABLE} WHERE key IS NULL ORDER BY file, line, code`,
      );
      return (read.getRowsJS() as Cells[]).map(checkRow);
    },
    keyed: async function* (own) {
      const query = `SELECT ${COLUMNS} FROM ${TABLE} WHERE key IS NOT NULL ORDER BY key, file, line, code`;
      try {
        const result = await own.stream(query);
        for (let chunk = await result.fetchChunk(); chunk && chunk.rowCount > 0; chunk = await result.fetchChunk())
          yield (chunk.getRows() as unknown as Cells[]).map(checkRow);
      } catch (error) {
        // Sorting the rows by account spills as a view's sort does; running short there names the settings too.
        throw made.shortage(`${shapeName} (the check views' rows)`, error) ?? error;
      }
    },
  };
}
