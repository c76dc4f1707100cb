import { open, type FileHandle } from 'node:fs/promises';
import { PRIVATE_FILE_MODE } from '../private-files.js';
import { quoteLiteral } from './sql-text.js';

// The canonical file a source's legacy file is loaded through (docs/export-format.md "Shaping legacy files with SQL"):
// the tool's readers read the legacy file (every encoding, BOM, CRLF, quoted newline, check and message at the legacy
// line) and write each record here as plain UTF-8 CSV that DuckDB's own reader takes back without re-interpreting
// anything: every value quoted (inner quotes doubled; an empty or absent value `""`, read as NULL as the tables hold
// it), then the record's legacy line; read with an explicit column list, every column text, no sniffing.
// DuckDB's reader loads it in C++, with one call per file where DuckDB's appender took one per value. A value opening
// with U+FEFF arrives whole: DuckDB skips a byte order mark only at a file's start, and this file opens with a quote.

export interface CanonicalFile {
  readonly path: string;
  /** Every value of the record, in the table's column order; `undefined` or '' is NULL. */
  write(line: number, cells: ReadonlyArray<string | undefined>): void;
  /** Writes out what is buffered; awaited between batches so memory stays bounded. */
  flush(): Promise<void>;
  close(): Promise<WrittenFile>;
}

export interface WrittenFile {
  rows: number;
  /** The longest record written, in UTF-16 code units (at most 3 UTF-8 bytes each): what the reader must take. */
  longest: number;
}

/** Text buffered before it is written out. */
const FLUSH_AT = 1 << 20;
const QUOTE = /"/g;

const holdsQuote = (value: string | undefined): boolean => value?.includes('"') === true;

export async function createCanonicalFile(path: string): Promise<CanonicalFile> {
  const handle: FileHandle = await open(path, 'wx', PRIVATE_FILE_MODE);
  let buffered: string[] = [];
  let size = 0;
  let rows = 0;
  let longest = 0;
  const flush = async (): Promise<void> => {
    if (buffered.length === 0) return;
    const text = buffered.join('');
    buffered = [];
    size = 0;
    await handle.write(text);
  };
  return {
    path,
    write(line, cells) {
      const values = cells.some(holdsQuote) ? cells.map((value) => value?.replace(QUOTE, '""')) : cells;
      const record = `"${values.join('","')}",${line}\n`;
      buffered.push(record);
      size += record.length;
      if (record.length > longest) longest = record.length;
      rows += 1;
    },
    flush: () => (size >= FLUSH_AT ? flush() : Promise.resolve()),
    close: async () => {
      try {
        await flush();
      } finally {
        await handle.close();
      }
      return { rows, longest };
    },
  };
}

/** The reader's buffer at least: smaller ones read a large file in more pieces. */
const LEAST_BUFFER = 4 << 20;

/**
 * DuckDB's read_csv of a canonical file of `width` values and the line: nothing detected, nothing converted. Its
 * longest line is the file's longest record (3 UTF-8 bytes at most per UTF-16 unit); its buffer twice that (DuckDB's
 * default, 16 times the longest line, would be 200 MB for a record of the 4 MiB the tool's readers allow, far past the
 * engine's memory limit).
 */
export function canonicalReader(path: string, width: number, written: Pick<WrittenFile, 'longest'>): string {
  const longest = 3 * written.longest + 16;
  const columns = Array.from({ length: width }, (_, index) => `'c${index}': 'VARCHAR'`);
  const options = [
    `columns = {${[...columns, "'_line': 'BIGINT'"].join(', ')}}`,
    'header = false',
    'auto_detect = false',
    "delim = ','",
    `quote = '"'`,
    `escape = '"'`,
    "new_line = '\\n'",
    "nullstr = ''",
    'allow_quoted_nulls = true',
    'strict_mode = true',
    'null_padding = false',
    'ignore_errors = false',
    `max_line_size = ${longest}`,
    `buffer_size = ${Math.max(LEAST_BUFFER, 2 * longest)}`,
  ];
  return `read_csv(${quoteLiteral(path)}, ${options.join(', ')})`;
}
