import { rm } from 'node:fs/promises';
import path from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import { FatalError, InputError, messageOf } from '../errors.js';
import { readCsvBatches, readFixedWidth, readJsonArray, readNdjson, type CsvRow } from '../sources/index.js';
import { canonicalReader, createCanonicalFile, type CanonicalFile, type WrittenFile } from './canonical-csv.js';
import { jsonText } from './json-text.js';
import { quoteIdentifier, quoteLiteral } from './sql-text.js';
import type { ShapeSource, SourceFile } from './source-files.js';

// A source's files into one DuckDB table, read by the tool's own readers (every encoding, BOM, CRLF and quoted newline
// they handle, with the same checks and messages; CSV with its source's quoting and column names, fixed-width lines,
// JSON): every column VARCHAR as the file holds it (an empty cell, a JSON null, a column past a fixed-width line's
// end: NULL, as "empty means no data" everywhere else), plus `_file` and `_line` (where the record starts). Each file
// goes through a canonical file in the scratch directory that DuckDB's own CSV reader loads (canonical-csv.ts),
// before the engine is locked; the canonical file is removed once loaded.

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
  scratch: string,
): Promise<LoadedSource> {
  const first = files[0];
  if (first === undefined) throw new Error(`source ${source.table} without files`);
  const columns = await columnsOf(source, files, first);
  await createTable(connection, source, first, columns);
  let rows = 0;
  for (const [index, file] of files.entries()) {
    const canonical = await createCanonicalFile(path.join(scratch, `canonical-${index}.csv`));
    try {
      const written = await writeCanonical(canonical, source, file, columns);
      await insertCanonical(connection, source, file, canonical.path, columns.length, written);
      rows += written.rows;
    } finally {
      await rm(canonical.path, { force: true });
    }
  }
  return { table: source.table, files: files.map((file) => file.file), columns, rows };
}

/** The legacy file read by the tool's readers into the canonical file; closed however the read ends. */
async function writeCanonical(
  canonical: CanonicalFile,
  source: ShapeSource,
  file: SourceFile,
  columns: string[],
): Promise<WrittenFile> {
  try {
    if (file.format === 'csv') await writeCsv(canonical, source, file, columns);
    else if (file.format === 'fixed') await writeFixed(canonical, source, file);
    else await writeJson(canonical, file, columns);
  } catch (error) {
    await canonical.close();
    throw error;
  }
  return canonical.close();
}

async function insertCanonical(
  connection: DuckDBConnection,
  source: ShapeSource,
  file: SourceFile,
  canonicalPath: string,
  width: number,
  written: WrittenFile,
): Promise<void> {
  const values = [...Array.from({ length: width }, (_, index) => `c${index}`), quoteLiteral(file.file), '_line'];
  try {
    await connection.run(
      `INSERT INTO ${quoteIdentifier(source.table)} SELECT ${values.join(', ')} ` +
        `FROM ${canonicalReader(canonicalPath, width, written)}`,
    );
  } catch (error) {
    // The legacy file was read whole and well: what fails here is the engine (memory, disk), not the file.
    const message = messageOf(error).replace(/\s*\n[\s\S]*$/, '');
    throw new FatalError(
      `${file.file} was read but could not be loaded into the shape engine (table ${source.table}): ${message}. ` +
        "Check the free space under TMPDIR (the shape engine's tables and sorts live there).",
      'shape_source_load',
      error,
    );
  }
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

/** The table's columns: the layout's or the source's names, the CSV header's, or every JSON key met. */
async function columnsOf(source: ShapeSource, files: SourceFile[], first: SourceFile): Promise<string[]> {
  if (first.format === 'fixed') return (source.layout ?? []).map((column) => column.name);
  if (first.format !== 'csv') return jsonKeys(files);
  return source.columns ?? csvHeader(source, first);
}

/** The source's CSV rows; a file that does not parse is named at its line, with the source's quoting options. */
async function* csvRows(source: ShapeSource, file: SourceFile): AsyncGenerator<CsvRow[], void, undefined> {
  const options = { file: file.file, encoding: source.encoding, delimiter: source.delimiter, quote: source.quote };
  try {
    yield* readCsvBatches(file.absolutePath, options);
  } catch (error) {
    if (!(error instanceof InputError) || error.code !== 'input_unparseable' || source.quote === false) throw error;
    const detail = error.message.slice(`${error.file}${error.line === undefined ? '' : `:${error.line}`}: `.length);
    if (!detail.includes('quote')) throw error;
    const other = (source.quote ?? '"') === '"' ? '; one quoted with another character, with "quote": "\'"' : '';
    throw new InputError(
      error.file,
      error.line,
      `${detail} A file whose fields are never quoted (a quote is a character of the value, as in SAP downloads) ` +
        `reads with "quote": false in sources.${source.table}${other}.`,
      error.code,
      error,
    );
  }
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

async function writeCsv(canonical: CanonicalFile, source: ShapeSource, file: SourceFile, columns: string[]) {
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
          `the row has ${row.cells.length} cells but ${named(source, columns.length)} (an unquoted ` +
            'delimiter in a value, or the wrong delimiter?); the source cannot be loaded until it is mended.',
          'shape_source_column_count',
        );
      canonical.write(row.line, row.cells);
    }
    await canonical.flush();
  }
}

function named(source: ShapeSource, count: number): string {
  if (source.columns) return `sources.${source.table}.columns in the mapping file names ${count}`;
  return source.header ? `the header has ${count} columns` : `the first row has ${count}`;
}

async function writeFixed(canonical: CanonicalFile, source: ShapeSource, file: SourceFile): Promise<void> {
  const options = {
    file: file.file,
    encoding: source.encoding,
    columns: source.layout ?? [],
    setting: `sources.${source.table}.columns`,
    header: source.header,
  };
  for await (const rows of readFixedWidth(file.absolutePath, options)) {
    for (const row of rows) canonical.write(row.line, row.cells);
    await canonical.flush();
  }
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

async function writeJson(canonical: CanonicalFile, file: SourceFile, columns: string[]): Promise<void> {
  for await (const record of jsonRecords(file)) {
    canonical.write(
      record.line,
      columns.map((column) => jsonText(record.object[column])),
    );
    await canonical.flush();
  }
}
