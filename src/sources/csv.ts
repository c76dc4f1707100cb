import { CsvError, parse } from 'csv-parse';
import { InputError } from '../errors.js';
import { utf8Chunks, type DecodeOptions } from './decode.js';
import { refuseCrOnlyLines } from './line-endings.js';
import { MAX_RECORD_BYTES, MAX_RECORD_TEXT } from './limits.js';

// CSV as a stream (docs/export-format.md "Values": header row, RFC 4180 quoting, BOM accepted; delimiter
// and encoding are mapping-file options). Rows come out as arrays, not objects: the mapping
// compiles a plan per header once, which keeps validation close to bare csv-parse speed.

/**
 * Bytes handed to csv-parse at a time: it parses what it is given at once and holds every row of it until they are
 * read, so a file's header and first rows come out after 16 KiB are parsed, not a whole 256 KiB read, the files read
 * beside it are not held up as long, and the rows die young: given whole reads, the rows of one outlived the young
 * generation and were copied and promoted (the CSV thread spent a fifth of its time collecting them).
 */
const PIECE = 16 * 1024;

export interface CsvRow {
  /** 1-based line where the row starts (header = 1); a quoted newline makes a row span lines. */
  line: number;
  cells: string[];
}

export interface CsvOptions extends DecodeOptions {
  delimiter: string;
}

/** Yields the header row first, then every data row; blank lines are skipped. */
export async function* readCsv(absolutePath: string, options: CsvOptions): AsyncGenerator<CsvRow> {
  // No `info`: it costs a third of csv-parse's time. Lines are counted here instead: a row starts
  // one line after the previous row ends, plus the newlines inside its quoted cells.
  const parser = parse({
    bom: true,
    delimiter: options.delimiter,
    relax_column_count: true,
    skip_empty_lines: false,
    record_delimiter: ['\r\n', '\n'],
    // csv-parse's buffers grow with a field: without a bound, one huge cell exhausts the heap.
    max_record_size: MAX_RECORD_BYTES,
  });
  const drained = (): Promise<void> =>
    new Promise<void>((resolve) => {
      const done = (): void => {
        parser.off('drain', done);
        parser.off('close', done);
        resolve();
      };
      parser.on('drain', done);
      parser.on('close', done);
    });
  const feed = (async () => {
    try {
      let first = true;
      for await (const chunk of utf8Chunks(absolutePath, options)) {
        if (first) refuseCrOnlyLines(chunk, options.file);
        first = false;
        for (let at = 0; at < chunk.length; at += PIECE) {
          if (parser.destroyed) return;
          if (!parser.write(chunk.subarray(at, at + PIECE))) await drained();
        }
      }
      if (!parser.destroyed) parser.end();
    } catch (error) {
      parser.destroy(error as Error);
    }
  })();
  let line = 1;
  try {
    for await (const cells of parser as AsyncIterable<string[]>) {
      const start = line;
      line += 1;
      for (const cell of cells) {
        for (let at = cell.indexOf('\n'); at !== -1; at = cell.indexOf('\n', at + 1)) line += 1;
      }
      if (cells.length === 1 && cells[0] === '') continue;
      yield { line: start, cells };
    }
  } catch (error) {
    if (!(error instanceof CsvError)) throw error;
    throw new InputError(
      options.file,
      await csvErrorLine(absolutePath, options, error, line),
      `cannot be parsed as CSV: ${plainCsvMessage(error)}`,
      'input_unparseable',
      error,
    );
  } finally {
    parser.destroy();
    await feed;
  }
}

/**
 * The line where the row holding a quote that is never closed starts (csv-parse reports the end
 * of the file, which may be a million lines further on). `from` is a row boundary, every row
 * before it complete; from there a quote toggles quoting and a newline outside quotes starts a
 * row. A quote anywhere but around a field would have failed earlier, so the toggling is exact.
 */
async function unclosedRowLine(absolutePath: string, options: CsvOptions, from: number): Promise<number> {
  let line = 1;
  let rowStart = from;
  let quoted = false;
  for await (const chunk of utf8Chunks(absolutePath, { file: options.file, encoding: options.encoding })) {
    for (let at = 0; at < chunk.length; at += 1) {
      const byte = chunk[at];
      if (byte === NEWLINE) {
        line += 1;
        if (line > from && !quoted) rowStart = line;
      } else if (byte === QUOTE && line >= from) quoted = !quoted;
    }
  }
  return rowStart;
}

const NEWLINE = 0x0a;
const QUOTE = 0x22;

/**
 * The line to name for csv-parse's error: where the row holding a never-closed quote starts, else
 * csv-parse's own line, else the line of the row being read (`line`: every row before it complete).
 */
async function csvErrorLine(absolutePath: string, options: CsvOptions, error: CsvError, line: number): Promise<number> {
  if (error.code === 'CSV_QUOTE_NOT_CLOSED') return unclosedRowLine(absolutePath, options, line);
  if (error.code === 'CSV_MAX_RECORD_SIZE') return line;
  const reported = (error as { lines?: unknown }).lines;
  return typeof reported === 'number' ? reported : line;
}

function plainCsvMessage(error: CsvError): string {
  switch (error.code) {
    case 'CSV_QUOTE_NOT_CLOSED':
      return (
        'a quoted field of the row starting on this line is never closed (a missing closing quote "); the ' +
        'rest of the file would be read as one cell.'
      );
    case 'INVALID_OPENING_QUOTE':
    case 'CSV_INVALID_CLOSING_QUOTE':
      return (
        'a quote " appears inside an unquoted field, or after a closing quote; quote the field and double ' +
        'its inner quotes ("").'
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
