import { InputError } from '../errors.js';
import { utf8Chunks, type DecodeOptions } from './decode.js';
import { refuseCrOnlyLines } from './line-endings.js';
import { MAX_RECORD_BYTES, MAX_RECORD_TEXT } from './limits.js';

// Fixed-width lines (docs/export-format.md "Shaping legacy files with SQL", fixed-width sources): each column is the
// characters from its start (1-based) for its width, in characters of the file's encoding (one byte each in
// windows-1252, one character however many bytes in UTF-8), exactly as they stand: no trimming, and a delimiter or a
// quote is a character like any other. A line may end before a column starts (those trailing columns are NULL), never
// inside one. Text past the last column, and between columns, is not read. An empty line is skipped; with a header,
// each file's first line (the columns' titles, placed however the system wrote them) is not read, and the records
// keep their line numbers (the first is line 2).

/** One column of a fixed-width layout: its name, first character (1-based) and width in characters. */
export interface FixedColumn {
  name: string;
  start: number;
  width: number;
}

/** A line's values in the layout's order; undefined: the line ends before the column. */
export interface FixedRow {
  line: number;
  cells: Array<string | undefined>;
}

export interface FixedWidthOptions extends DecodeOptions {
  columns: readonly FixedColumn[];
  /** The setting that declares the layout, as messages name it (`sources.mandates.columns`). */
  setting: string;
  /** The first line names the columns: it is no record. */
  header?: boolean;
}

const LF = 0x0a;
const CR = 0x0d;
const BOM = Buffer.from([0xef, 0xbb, 0xbf]);
const SURROGATE = /[\ud800-\udfff]/;

/** The file's lines as rows of the layout, as many at a time as a read of the file completes. */
export async function* readFixedWidth(absolutePath: string, options: FixedWidthOptions): AsyncGenerator<FixedRow[]> {
  let held = Buffer.alloc(0);
  let line = 1;
  let first = true;
  for await (const read of utf8Chunks(absolutePath, options)) {
    let chunk = read;
    if (first) {
      refuseCrOnlyLines(chunk, options.file);
      if (chunk.subarray(0, BOM.length).equals(BOM)) chunk = chunk.subarray(BOM.length);
      first = false;
    }
    const bytes = held.length === 0 ? chunk : Buffer.concat([held, chunk]);
    const rows: FixedRow[] = [];
    let at = 0;
    for (let newline = bytes.indexOf(LF); newline !== -1; newline = bytes.indexOf(LF, at)) {
      const row = isHeader(line, options) ? undefined : rowOf(bytes, at, newline, line, options);
      if (row) rows.push(row);
      line += 1;
      at = newline + 1;
    }
    held = Buffer.from(bytes.subarray(at));
    if (held.length > MAX_RECORD_BYTES)
      throw new InputError(
        options.file,
        line,
        `the line is longer than the limit of ${MAX_RECORD_TEXT} per record (a file that is not fixed-width lines?).`,
        'input_unparseable',
      );
    if (rows.length > 0) yield rows;
  }
  const last = held.length === 0 || isHeader(line, options) ? undefined : rowOf(held, 0, held.length, line, options);
  if (last) yield [last];
}

const isHeader = (line: number, options: FixedWidthOptions): boolean => line === 1 && options.header === true;

/** The line from `start` to `end` (its line feed, or the end of the file); undefined for an empty line. */
function rowOf(
  bytes: Buffer,
  start: number,
  end: number,
  line: number,
  options: FixedWidthOptions,
): FixedRow | undefined {
  const stop = end > start && bytes[end - 1] === CR ? end - 1 : end;
  if (stop === start) return undefined;
  const text = bytes.toString('utf8', start, stop);
  // Characters, not UTF-16 units: a character beyond the Basic Multilingual Plane (an emoji) is one character.
  const characters = SURROGATE.test(text) ? Array.from(text) : undefined;
  const length = characters ? characters.length : text.length;
  const cells = options.columns.map((column) => {
    const from = column.start - 1;
    const to = from + column.width;
    if (length >= to) return characters ? characters.slice(from, to).join('') : text.slice(from, to);
    if (length <= from) return undefined;
    throw new InputError(
      options.file,
      line,
      `the line is ${length} characters long and ends inside ${column.name} (characters ${column.start} to ${to}); ` +
        `a line holds each column of the layout (${options.setting} in the mapping file) in full, or ends before a ` +
        'column starts (the columns that start past its end are then NULL). Check that the line is whole and that ' +
        "the source's encoding and layout are the file's." +
        (line === 1 && options.header !== true
          ? ` A first line that names the columns is skipped with "header": true beside ${options.setting}.`
          : ''),
      'input_fixed_width_short',
    );
  });
  return { line, cells };
}
