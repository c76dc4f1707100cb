import type { DuckDBConnection } from '@duckdb/node-api';
import type { ControlCount, SourceFileUse, UnusedRow } from '../ledger/index.js';
import type { LoadedSource } from './load-sources.js';
import type { ShapedView } from './shaped-view.js';
import { legacyRowsOfText, ROWS_COLUMN } from './legacy-rows.js';
import { quoteIdentifier } from './sql-text.js';
import { viewTable } from './view-rows.js';

// Which legacy rows reached a record (docs/control-totals.md): a row whose file and line a view's row carries, unless
// that view row itself became no record (no account number, an account that is not in the export: `dropped`). Worked
// out by the engine over the views' sorted tables (view-rows.ts), which every view's read leaves behind: the sets of
// rows live in its database file and its memory limit, never in this process, whatever the export's size.

/** A view row that became no record: its kind and the legacy row it carries. */
export interface DroppedRow {
  kind: string;
  file: string;
  line: number;
}

export interface SourceUse {
  /** Every legacy file of every source: rows read, rows that reached a record. */
  files: SourceFileUse[];
  /** What the export's control files declare of the files' rows, beside the rows read. */
  controlCounts: ControlCount[];
  /** The rows that reached none, in batches, source by source, in file and line order. */
  unused(): AsyncGenerator<UnusedRow[], void, undefined>;
}

const USED = 'migrate_rows_used';
const DROPPED = 'migrate_rows_dropped';
const CARRIED = 'migrate_rows_carried';

/** A source declared as the extract's control file: the columns naming a file and the rows it holds. */
export interface ControlSource {
  table: string;
  fileColumn: string;
  rowsColumn: string;
}

export async function sourceUse(
  connection: DuckDBConnection,
  loaded: readonly LoadedSource[],
  views: readonly ShapedView[],
  dropped: AsyncIterable<DroppedRow>,
  controls: readonly ControlSource[] = [],
): Promise<SourceUse> {
  // A control file's rows are counts of the others, not records: it is compared with them, never counted among them.
  const isControl = (source: LoadedSource): boolean => controls.some((control) => control.table === source.table);
  const sources = loaded.filter((source) => !isControl(source));
  await connection.run(`CREATE OR REPLACE TABLE ${DROPPED} (kind VARCHAR, _file VARCHAR, _line BIGINT)`);
  const appender = await connection.createAppender(DROPPED);
  for await (const row of dropped) {
    appender.appendVarchar(row.kind);
    appender.appendVarchar(row.file);
    appender.appendBigInt(BigInt(row.line));
    appender.endRow();
  }
  appender.closeSync();
  await usedRows(connection, views);
  const files: SourceFileUse[] = [];
  for (const source of sources) {
    const counted = await connection.runAndReadAll(
      `SELECT s._file, count(*), count(u._line) FROM ${quoteIdentifier(source.table)} s ` +
        `LEFT JOIN ${USED} u ON u._file = s._file AND u._line = s._line GROUP BY s._file`,
    );
    const byFile = new Map(
      (counted.getRows() as Array<[string, bigint, bigint]>).map(([file, read, used]) => [file, [read, used]]),
    );
    for (const file of source.files) {
      const [read, used] = byFile.get(file) ?? [0n, 0n];
      files.push({ source: source.table, file, rowsRead: Number(read), rowsUsed: Number(used) });
    }
  }
  const controlCounts: ControlCount[] = [];
  for (const control of controls) controlCounts.push(...(await controlRows(connection, control, files)));
  return { files, controlCounts, unused: () => unusedRows(connection, sources) };
}

/**
 * A control file's rows, each set beside the rows read of the file it names: by its name in the export directory, or
 * by its base name (a control file names the files as the extract wrote them, without a folder).
 */
async function controlRows(
  connection: DuckDBConnection,
  control: ControlSource,
  files: readonly SourceFileUse[],
): Promise<ControlCount[]> {
  const read = await connection.runAndReadAll(
    `SELECT _file, _line, trim(CAST(${quoteIdentifier(control.fileColumn)} AS VARCHAR)), ` +
      `trim(CAST(${quoteIdentifier(control.rowsColumn)} AS VARCHAR)) FROM ${quoteIdentifier(control.table)} ` +
      'ORDER BY _file, _line',
  );
  const baseName = (name: string): string => name.slice(name.lastIndexOf('/') + 1);
  return (read.getRows() as Array<[string, bigint, string | null, string | null]>).map(
    ([controlFile, line, named, declared]) => {
      const file = named ?? '';
      const match = files.find((each) => each.file === file) ?? files.find((each) => baseName(each.file) === file);
      return { controlFile, line: Number(line), file, declared: declared ?? '', read: match?.rowsRead };
    },
  );
}

/** Control counts that do not agree with the rows read, one line each (validate's warnings, the report's page). */
export function controlMismatchLines(counts: readonly ControlCount[]): string[] {
  return counts.flatMap((count) => {
    const at = `${count.controlFile}:${count.line}`;
    if (count.read === undefined)
      return [`${at} declares ${count.declared} row(s) of ${count.file}, a file no source of the export reads`];
    if (/^\d+$/.test(count.declared) && Number(count.declared) === count.read) return [];
    return [`${at} declares ${count.declared} row(s) of ${count.file}; ${count.read} were read`];
  });
}

/**
 * The legacy rows the views' records carry, each once: every view row's `_file` and `_line`, and the rows its `_rows`
 * names (docs/export-format.md "The shape"), unless that view row became no record. A view's
 * `_rows` lists are read through this process a chunk at a time, their rows appended to the engine's table.
 */
async function usedRows(connection: DuckDBConnection, views: readonly ShapedView[]): Promise<void> {
  await connection.run(`CREATE OR REPLACE TABLE ${CARRIED} (_file VARCHAR, _line BIGINT)`);
  for (const view of views) {
    const dropped = `SELECT _file, _line FROM ${DROPPED} WHERE kind = '${view.kind}'`;
    const made = `${viewTable(view)} s ANTI JOIN (${dropped}) d ON d._file = s._file AND d._line = s._line`;
    await connection.run(`INSERT INTO ${CARRIED} SELECT s._file, s._line FROM ${made}`);
    if (!view.hasRows) continue;
    const appender = await connection.createAppender(CARRIED);
    const result = await connection.stream(`SELECT s.${ROWS_COLUMN} FROM ${made} WHERE s.${ROWS_COLUMN} IS NOT NULL`);
    for (let chunk = await result.fetchChunk(); chunk && chunk.rowCount > 0; chunk = await result.fetchChunk())
      for (const [text] of chunk.getRows() as Array<[string]>)
        for (const row of legacyRowsOfText(text) ?? []) {
          appender.appendVarchar(row.file);
          appender.appendBigInt(BigInt(row.line));
          appender.endRow();
        }
    appender.closeSync();
  }
  for (const view of views.filter((each) => each.columns.includes(LEDGERS_COLUMN))) await ledgerRows(connection, view);
  await connection.run(`CREATE OR REPLACE TABLE ${USED} AS SELECT DISTINCT _file, _line FROM ${CARRIED}`);
}

const LEDGERS_COLUMN = 'ledgers';
const LEDGER_TRANSACTIONS = ['historical_statement_transactions', 'current_statement_transactions'];

/**
 * The postings a view's `ledgers` carry (docs/from-a-legacy-system.md "History in ledgers"): each ledger, and each of
 * its transactions, may name its legacy row by `_file` and `_line`; those rows reached a record too.
 */
async function ledgerRows(connection: DuckDBConnection, view: ShapedView): Promise<void> {
  const dropped = `SELECT _file, _line FROM ${DROPPED} WHERE kind = '${view.kind}'`;
  const made = `${viewTable(view)} s ANTI JOIN (${dropped}) d ON d._file = s._file AND d._line = s._line`;
  // The view's table holds its columns first, in its order, under names of their places: read by position.
  const at = view.columns.indexOf(LEDGERS_COLUMN);
  const appender = await connection.createAppender(CARRIED);
  const result = await connection.stream(`SELECT s.* FROM ${made}`);
  for (let chunk = await result.fetchChunk(); chunk && chunk.rowCount > 0; chunk = await result.fetchChunk())
    for (const text of chunk.getColumns()[at] ?? [])
      if (typeof text === 'string')
        for (const row of originsInLedgers(text)) {
          appender.appendVarchar(row.file);
          appender.appendBigInt(BigInt(row.line));
          appender.endRow();
        }
  appender.closeSync();
}

/** Every `_file`/`_line` pair a ledgers cell names, on a ledger or on one of its transactions. */
function originsInLedgers(text: string): Array<{ file: string; line: number }> {
  let ledgers: unknown;
  try {
    ledgers = JSON.parse(text);
  } catch {
    return []; // Not JSON: the mapping names the cell at its line; it names no row here.
  }
  const origins: Array<{ file: string; line: number }> = [];
  const take = (item: unknown): void => {
    if (item === null || typeof item !== 'object') return;
    const { _file: file, _line: line } = item as { _file?: unknown; _line?: unknown };
    if (typeof file === 'string' && Number.isInteger(Number(line)) && Number(line) > 0)
      origins.push({ file, line: Number(line) });
  };
  for (const ledger of Array.isArray(ledgers) ? ledgers : []) {
    take(ledger);
    for (const key of LEDGER_TRANSACTIONS) {
      const transactions: unknown =
        ledger === null || typeof ledger !== 'object' ? undefined : Reflect.get(ledger, key);
      if (Array.isArray(transactions)) transactions.forEach(take);
    }
  }
  return origins;
}

async function* unusedRows(
  connection: DuckDBConnection,
  sources: readonly LoadedSource[],
): AsyncGenerator<UnusedRow[], void, undefined> {
  for (const source of sources) {
    const result = await connection.stream(
      `SELECT s._file, s._line FROM ${quoteIdentifier(source.table)} s ANTI JOIN ${USED} u ` +
        'ON u._file = s._file AND u._line = s._line ORDER BY s._file, s._line',
    );
    for (let chunk = await result.fetchChunk(); chunk && chunk.rowCount > 0; chunk = await result.fetchChunk()) {
      const rows = chunk.getRows() as Array<[string, bigint]>;
      yield rows.map(([file, line]) => ({ source: source.table, file, line: Number(line) }));
    }
  }
}
