import type { CsvError } from 'csv-parse';
import { CsvRowError, CsvRowSplitter, type CsvRow } from './csv-rows.js';
import { InputError } from '../errors.js';
import { utf8Chunks, type DecodeOptions } from './decode.js';
import { refuseCrOnlyLines } from './line-endings.js';
import { MAX_RECORD_TEXT } from './limits.js';

// CSV as a stream (docs/export-format.md "Values": header row, RFC 4180 quoting, BOM accepted; delimiter
// and encoding are mapping-file options), split into rows by csv-rows.ts. Rows come out as arrays, not objects: the
// mapping compiles a plan per header once, which keeps validation close to bare csv-parse speed.

export type { CsvRow } from './csv-rows.js';

/**
 * Bytes of a read split into rows at a time: a file's header and first rows come out after 16 KiB are split, not a
 * whole 256 KiB read, the files read beside it are not held up as long, and its rows die young (the rows of a whole
 * read outlived the CSV thread's young generation and were copied and promoted: a fifth of its time went to
 * collecting them).
 */
const PIECE = 16 * 1024;

const BOM = Buffer.from([0xef, 0xbb, 0xbf]);

export interface CsvOptions extends DecodeOptions {
  delimiter: string;
  /** The character fields are quoted with (default `"`); false: never quoted (a `"` is a character of the value). */
  quote?: string | false | undefined;
}

/** Yields the header row first, then every data row; blank lines are skipped. */
export async function* readCsv(absolutePath: string, options: CsvOptions): AsyncGenerator<CsvRow> {
  for await (const rows of readCsvRows(absolutePath, options)) yield* rows;
}

/** readCsv's rows, as many at a time as a piece of the file completes (none left out: never an empty array). */
export async function* readCsvRows(absolutePath: string, options: CsvOptions): AsyncGenerator<CsvRow[]> {
  const splitter = new CsvRowSplitter(options.delimiter, options.quote);
  try {
    let first = true;
    for await (const read of utf8Chunks(absolutePath, options)) {
      let chunk = read;
      if (first) {
        refuseCrOnlyLines(chunk, options.file);
        if (chunk.subarray(0, BOM.length).equals(BOM)) chunk = chunk.subarray(BOM.length);
      }
      first = false;
      splitter.push(chunk);
      for (let rows = splitter.rows(PIECE); rows.length > 0; rows = splitter.rows(PIECE)) {
        const kept = withoutBlankLines(rows);
        if (kept.length > 0) yield kept;
      }
    }
    splitter.end();
    const last = withoutBlankLines(splitter.rows());
    if (last.length > 0) yield last;
  } catch (error) {
    if (!(error instanceof CsvRowError)) throw error;
    throw new InputError(
      options.file,
      error.line,
      `cannot be parsed as CSV: ${plainCsvMessage(error.csv, options.quote ?? '"')}`,
      'input_unparseable',
      error.csv,
    );
  }
}

function withoutBlankLines(rows: CsvRow[]): CsvRow[] {
  return rows.some(isBlank) ? rows.filter((row) => !isBlank(row)) : rows;
}

const isBlank = (row: CsvRow): boolean => row.cells.length === 1 && row.cells[0] === '';

function plainCsvMessage(error: CsvError, quote: string | false): string {
  switch (error.code) {
    case 'CSV_QUOTE_NOT_CLOSED':
      return (
        `a quoted field of the row starting on this line is never closed (a missing closing quote ${quote}); the ` +
        'rest of the file would be read as one cell.'
      );
    case 'INVALID_OPENING_QUOTE':
    case 'CSV_INVALID_CLOSING_QUOTE':
      return (
        `a quote ${quote} appears inside an unquoted field, or after a closing quote; quote the field and double ` +
        `its inner quotes (${quote}${quote}).`
      );
    case 'CSV_MAX_RECORD_SIZE':
      return (
        `the row starting on this line is longer than the limit of ${MAX_RECORD_TEXT} per record (a field ` +
        `that is far too large, or a quote that is never closed); shorten or remove it.`
      );
    case 'CSV_NON_TRIMABLE_CHAR_AFTER_CLOSING_QUOTE':
      return 'text follows a closing quote; quote the whole field.';
    default:
      return `${error.message.replace(/\.$/, '')}.`;
  }
}
