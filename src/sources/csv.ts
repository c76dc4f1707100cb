import { CsvError, parse } from 'csv-parse';
import { InputError } from '../errors.js';
import { decodeFile, type DecodeOptions } from './decode.js';

// CSV as a stream (input-format "Values": header row, RFC 4180 quoting, BOM accepted; delimiter
// and encoding are mapping-file options). Rows come out as arrays, not objects: the mapping
// compiles a plan per header once, which keeps validation close to bare csv-parse speed.

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
  const parser = parse({ bom: true, delimiter: options.delimiter, info: true, relax_column_count: true, skip_empty_lines: true });
  const feed = (async () => {
    try {
      for await (const text of decodeFile(absolutePath, options)) {
        if (!parser.write(text)) await new Promise<void>((resolve) => parser.once('drain', resolve));
      }
      parser.end();
    } catch (error) {
      parser.destroy(error as Error);
    }
  })();
  let lastLine = 0;
  let lastEmpty = 0;
  try {
    for await (const item of parser as AsyncIterable<{ record: string[]; info: { lines: number; empty_lines: number } }>) {
      const line = lastLine + 1 + (item.info.empty_lines - lastEmpty);
      lastLine = item.info.lines;
      lastEmpty = item.info.empty_lines;
      yield { line, cells: item.record };
    }
  } catch (error) {
    throw toInputError(options.file, error, lastLine + 1);
  } finally {
    parser.destroy();
    await feed;
  }
}

function toInputError(file: string, error: unknown, fallbackLine: number): unknown {
  if (error instanceof InputError) return error;
  if (error instanceof CsvError) {
    const line = typeof (error as { lines?: unknown }).lines === 'number' ? (error as unknown as { lines: number }).lines : fallbackLine;
    return new InputError(file, line, `cannot be parsed as CSV: ${plainCsvMessage(error)}`, 'input_unparseable', error);
  }
  return error;
}

function plainCsvMessage(error: CsvError): string {
  switch (error.code) {
    case 'CSV_QUOTE_NOT_CLOSED':
      return 'a quoted field is never closed (a missing closing quote "); the rest of the file would be read as one cell.';
    case 'CSV_INVALID_CLOSING_QUOTE':
      return 'a quote " appears inside an unquoted field, or after a closing quote; quote the field and double its inner quotes ("").';
    case 'CSV_NON_TRIMABLE_CHAR_AFTER_CLOSING_QUOTE':
      return 'text follows a closing quote; quote the whole field.';
    default:
      return `${error.message.replace(/\.$/, '')}.`;
  }
}
