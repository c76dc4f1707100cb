import type { DuckDBAppender, DuckDBConnection } from '@duckdb/node-api';
import { InputError } from '../errors.js';
import { readCsvBatches, readJsonArray, readNdjson, type CsvRow } from '../sources/index.js';
import { jsonText } from './json-text.js';
import { quoteIdentifier } from './sql-text.js';
import type { ShapeSource, SourceFile } from './source-files.js';

// A source's files into one DuckDB table, read by the tool's own readers (every encoding, BOM, CRLF and quoted newline
// they handle, with the same checks and messages): every column VARCHAR as the file holds it (an empty cell, a JSON
// null: NULL, as "empty means no data" everywhere else), plus `_file` and `_line` (where the record starts).

/** What loading a source reports: its table's columns and rows. */
export interface LoadedSource {
  table: string;
  files: string[];
  columns: string[];
  rows: number;
}

export const PROVENANCE_COLUMNS = ['_file', '_line'] as const;

export async function loadSource(
  connection: DuckDBConnection,
  source: ShapeSource,
  files: SourceFile[],
): Promise<LoadedSource> {
  const first = files[0];
  if (first === undefined) throw new Error(`source ${source.table} without files`);
  const columns = first.format === 'csv' ? await csvHeader(source, first) : await jsonKeys(files);
  await createTable(connection, source, first, columns);
  const appender = await connection.createAppender(source.table);
  let rows = 0;
  try {
    for (const file of files)
      rows +=
        file.format === 'csv'
          ? await appendCsv(appender, source, file, columns)
          : await appendJson(appender, file, columns);
    appender.flushSync();
  } finally {
    appender.closeSync();
  }
  return { table: source.table, files: files.map((file) => file.file), columns, rows };
}

async function createTable(
  connection: DuckDBConnection,
  source: ShapeSource,
  file: SourceFile,
  columns: string[],
): Promise<void> {
  const seen = new Map<string, string>();
  for (const column of [...columns, ...PROVENANCE_COLUMNS]) {
    const folded = column.toLowerCase();
    const earlier = seen.get(folded);
    if (earlier !== undefined)
      throw new InputError(
        file.file,
        1,
        `the column ${JSON.stringify(column)} appears twice (as ${JSON.stringify(earlier)}; SQL names are not ` +
          `case-sensitive, and _file and _line are the provenance columns the tool adds): table ${source.table} ` +
          'cannot hold both. Rename one in the file.',
        'shape_source_duplicate_column',
      );
    seen.set(folded, column);
  }
  const list = columns.map((column) => `${quoteIdentifier(column)} VARCHAR`);
  await connection.run(
    `CREATE TABLE ${quoteIdentifier(source.table)} (${[...list, '_file VARCHAR', '_line BIGINT'].join(', ')})`,
  );
}

function csvRows(source: ShapeSource, file: SourceFile): AsyncGenerator<CsvRow[], void, undefined> {
  return readCsvBatches(file.absolutePath, { file: file.file, encoding: source.encoding, delimiter: source.delimiter });
}

/** The header's names, or column1..N of the first row when the source says it has none. */
async function csvHeader(source: ShapeSource, file: SourceFile): Promise<string[]> {
  const batches = csvRows(source, file);
  try {
    const first = await batches.next();
    const row = first.done ? undefined : first.value[0];
    if (row === undefined)
      throw new InputError(file.file, 1, 'is empty: the source has no header row and no records.', 'input_empty');
    return source.header ? row.cells : row.cells.map((_, index) => `column${index + 1}`);
  } finally {
    await batches.return(undefined);
  }
}

async function appendCsv(
  appender: DuckDBAppender,
  source: ShapeSource,
  file: SourceFile,
  columns: string[],
): Promise<number> {
  let rows = 0;
  let header = source.header;
  for await (const batch of csvRows(source, file)) {
    for (const row of batch) {
      if (header) {
        header = false;
        refuseOtherHeader(file, row, columns);
        continue;
      }
      if (row.cells.length !== columns.length)
        throw new InputError(
          file.file,
          row.line,
          `the row has ${row.cells.length} cells but the header has ${columns.length} columns (an unquoted ` +
            'delimiter in a value, or the wrong delimiter?); the source cannot be loaded until it is mended.',
          'shape_source_column_count',
        );
      for (const cell of row.cells) appendText(appender, cell);
      appendProvenance(appender, file.file, row.line);
      rows += 1;
    }
  }
  return rows;
}

/** A source's later files must have the first one's header: one table has one set of columns. */
function refuseOtherHeader(file: SourceFile, row: CsvRow, columns: string[]): void {
  if (row.cells.length === columns.length && row.cells.every((cell, index) => cell === columns[index])) return;
  throw new InputError(
    file.file,
    row.line,
    `its header is not the header of the source's first file (${columns.slice(0, 5).join(', ')}...); the files ` +
      'of one source are appended into one table and must have the same columns.',
    'shape_source_other_header',
  );
}

function appendText(appender: DuckDBAppender, value: string | undefined): void {
  if (value === undefined || value === '') appender.appendNull();
  else appender.appendVarchar(value);
}

function appendProvenance(appender: DuckDBAppender, file: string, line: number): void {
  appender.appendVarchar(file);
  appender.appendBigInt(BigInt(line));
  appender.endRow();
}

function jsonRecords(file: SourceFile): ReturnType<typeof readNdjson> {
  const options = { file: file.file, encoding: 'utf8' };
  return file.format === 'json' ? readJsonArray(file.absolutePath, options) : readNdjson(file.absolutePath, options);
}

/** JSON keys vary by record: the table's columns are every key met, in the order first met (one pass first). */
async function jsonKeys(files: SourceFile[]): Promise<string[]> {
  const keys = new Set<string>();
  for (const file of files)
    for await (const record of jsonRecords(file)) for (const key of Object.keys(record.object)) keys.add(key);
  return [...keys];
}

async function appendJson(appender: DuckDBAppender, file: SourceFile, columns: string[]): Promise<number> {
  let rows = 0;
  for await (const record of jsonRecords(file)) {
    for (const column of columns) appendText(appender, jsonText(record.object[column]));
    appendProvenance(appender, file.file, record.line);
    rows += 1;
  }
  return rows;
}
