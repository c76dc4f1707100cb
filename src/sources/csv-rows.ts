import { CsvError } from 'csv-parse';
import { parse, type Options } from 'csv-parse/sync';
import { MAX_RECORD_BYTES } from './limits.js';

// CSV rows from UTF-8 bytes (docs/export-format.md "Values": RFC 4180 quoting). A row with no quote byte is its text
// split at the delimiter: RFC 4180 leaves such a field nothing to unquote (it holds no delimiter, quote or line break),
// so the split is what csv-parse returns for it, at a fraction of csv-parse's cost (PapaParse's "fast mode" rests on
// the same rule). Rows holding a quote go to csv-parse, a run of them at a time: every quoting rule and every error is
// csv-parse's own. Where a row holding a quote ends is found by its quotes taken in pairs (the rest of a quoted
// field is quoted until the next quote; a doubled quote closes and reopens): exact for any row csv-parse accepts, and
// csv-parse refuses every other row from its start, where the stream of rows stands between two whole rows.

export interface CsvRow {
  /** 1-based line where the row starts (header = 1); a quoted newline makes a row span lines. */
  line: number;
  cells: string[];
}

/** csv-parse refused a row: its error, and the line to name (where the row starts, or csv-parse's line within it). */
export class CsvRowError extends Error {
  constructor(
    readonly csv: CsvError,
    readonly line: number,
  ) {
    super(csv.message);
  }
}

const LF = 0x0a;
const CR = 0x0d;
const EMPTY = Buffer.alloc(0);

/**
 * Rows of a CSV byte stream: `push` the bytes as they are read, take the rows they complete with `rows`, and say
 * `end` after the last bytes (the rest is then the last row). A row the bytes so far do not complete is held and
 * joined to the next bytes: one copy per read, not per row.
 */
export class CsvRowSplitter {
  #buffer: Buffer = EMPTY;
  #at = 0;
  #ended = false;
  /** Line of the next row. */
  #line = 1;
  readonly #delimiter: string;
  /** The quote character's byte; -1: no quoting, every row is split at the delimiter. */
  readonly #quote: number;
  readonly #parseOptions: Options<string[]>;

  /** `quote`: the one ASCII character fields are quoted with (RFC 4180's `"`); false: fields are never quoted. */
  constructor(delimiter: string, quote: string | false = '"') {
    this.#delimiter = delimiter;
    this.#quote = quote === false ? -1 : quote.charCodeAt(0);
    this.#parseOptions = {
      delimiter,
      quote,
      escape: quote,
      relax_column_count: true,
      skip_empty_lines: false,
      record_delimiter: ['\r\n', '\n'],
      // csv-parse's buffers grow with a field: without a bound, one huge cell exhausts the heap.
      max_record_size: MAX_RECORD_BYTES,
    };
  }

  push(bytes: Buffer): void {
    const held = this.#buffer.subarray(this.#at);
    this.#buffer = held.length === 0 ? bytes : Buffer.concat([held, bytes]);
    this.#at = 0;
  }

  /** No bytes follow: what is held is the last row. */
  end(): void {
    this.#ended = true;
  }

  /**
   * The next rows the bytes pushed complete, blank lines included (one empty cell), until about `budget` bytes of them
   * are taken; none: every complete row is taken. Throws CsvRowError where csv-parse refuses a row.
   */
  rows(budget = Number.POSITIVE_INFINITY): CsvRow[] {
    const buffer = this.#buffer;
    const stop = Math.min(buffer.length, this.#at + budget);
    const rows: CsvRow[] = [];
    let at = this.#at;
    const quoteByte = this.#quote;
    let quote = quoteByte === -1 ? -1 : buffer.indexOf(quoteByte, at);
    while (at < stop) {
      if (quote !== -1 && quote < at) quote = buffer.indexOf(quoteByte, at);
      const newline = buffer.indexOf(LF, at);
      const rowEnd = newline === -1 ? buffer.length : newline;
      if ((quote === -1 || quote > rowEnd) && (newline !== -1 || this.#ended) && rowEnd - at <= MAX_RECORD_BYTES) {
        rows.push({ line: this.#line, cells: this.#plainCells(buffer, at, rowEnd) });
        this.#line += 1;
        at = rowEnd + 1;
        continue;
      }
      const run = this.#quotedRun(buffer, at, stop);
      if (run.length === 0) break;
      this.#parseRun(buffer, at, run, rows);
      at = run[run.length - 1] as number;
    }
    this.#at = Math.min(at, buffer.length);
    if (rows.length === 0 && !this.#ended && buffer.length - this.#at > MAX_RECORD_BYTES) this.#refuseLongRow();
    return rows;
  }

  /** A row longer than a record may be that does not end (a quote never closed, no line break), named at its start. */
  #refuseLongRow(): never {
    try {
      parse(this.#buffer.subarray(this.#at), this.#parseOptions);
    } catch (error) {
      if (error instanceof CsvError) throw new CsvRowError(error, this.#line + lineWithin(error));
      throw error;
    }
    const message = `Max Record Size: record exceed the maximum of ${MAX_RECORD_BYTES}`;
    const tooLong = new CsvError('CSV_MAX_RECORD_SIZE', message, {} as never);
    throw new CsvRowError(tooLong, this.#line);
  }

  #plainCells(buffer: Buffer, start: number, newline: number): string[] {
    const stop = newline > start && buffer[newline - 1] === CR && buffer[newline] === LF ? newline - 1 : newline;
    return buffer.toString('utf8', start, stop).split(this.#delimiter);
  }

  /**
   * The ends (after each row's line feed) of the rows from `start` that hold a quote, up to the first row that holds
   * none or is not complete yet (once ended, the last row ends with the bytes), or past `stop`. Empty: the first row is
   * not complete.
   */
  #quotedRun(buffer: Buffer, start: number, stop: number): number[] {
    const ends: number[] = [];
    let at = start;
    for (;;) {
      const rowEnd = quotedRowEnd(buffer, at, this.#quote);
      if (rowEnd === -1) {
        if (this.#ended) ends.push(buffer.length);
        return ends;
      }
      ends.push(rowEnd);
      at = rowEnd;
      if (at >= stop) return ends;
      const newline = buffer.indexOf(LF, at);
      const quote = this.#quote === -1 ? -1 : buffer.indexOf(this.#quote, at);
      if (quote === -1 || (newline !== -1 && newline < quote)) return ends;
    }
  }

  /** Parses the rows from `start` to each of `ends` with csv-parse, in one call while they parse. */
  #parseRun(buffer: Buffer, start: number, ends: number[], rows: CsvRow[]): void {
    const last = ends[ends.length - 1] as number;
    let records: string[][] | undefined;
    try {
      records = parse(buffer.subarray(start, last), this.#parseOptions);
    } catch (error) {
      if (!(error instanceof CsvError)) throw error;
    }
    if (records?.length === ends.length) {
      let from = start;
      records.forEach((cells, index) => {
        const to = ends[index] as number;
        rows.push({ line: this.#line, cells });
        this.#line += linesOf(buffer, from, to);
        from = to;
      });
      return;
    }
    // A row csv-parse refuses (or rows it reads otherwise): each row on its own, to name the one it refuses.
    let from = start;
    for (const to of ends) {
      let cells: string[][];
      try {
        cells = parse(buffer.subarray(from, to), this.#parseOptions);
      } catch (error) {
        if (!(error instanceof CsvError)) throw error;
        throw new CsvRowError(error, this.#line + lineWithin(error));
      }
      for (const row of cells) rows.push({ line: this.#line, cells: row });
      this.#line += linesOf(buffer, from, to);
      from = to;
    }
  }
}

/** Lines from `from` to `to`: its line feeds, and one for a last row that has none. */
function linesOf(buffer: Buffer, from: number, to: number): number {
  let lines = 0;
  for (let at = buffer.indexOf(LF, from); at !== -1 && at < to; at = buffer.indexOf(LF, at + 1)) lines += 1;
  return buffer[to - 1] === LF ? lines : lines + 1;
}

/** Lines past a row's first where csv-parse stopped: none for a quote never closed or a row too long (its start). */
function lineWithin(error: CsvError): number {
  if (error.code === 'CSV_QUOTE_NOT_CLOSED' || error.code === 'CSV_MAX_RECORD_SIZE') return 0;
  const reported = (error as { lines?: unknown }).lines;
  return typeof reported === 'number' && reported > 0 ? reported - 1 : 0;
}

/**
 * Where the row starting at `start` ends (after its line feed), its quotes (byte `quote`; -1: none) taken in pairs; -1:
 * not within the bytes (no line feed after its last quote pair, or a quote still open).
 */
function quotedRowEnd(buffer: Buffer, start: number, quote: number): number {
  let at = start;
  let newline = buffer.indexOf(LF, at);
  for (;;) {
    const open = quote === -1 ? -1 : buffer.indexOf(quote, at);
    if (newline !== -1 && (open === -1 || newline < open)) return newline + 1;
    if (open === -1) return -1;
    const close = buffer.indexOf(quote, open + 1);
    if (close === -1) return -1;
    at = close + 1;
    if (newline !== -1 && newline < at) newline = buffer.indexOf(LF, at);
  }
}
