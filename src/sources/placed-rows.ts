import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { InputError } from '../errors.js';
import { readCsv, type CsvOptions, type CsvRow } from './csv.js';
import { CsvRowError, CsvRowSplitter } from './csv-rows.js';
import { MergeHeap } from './merge-heap.js';
import { PLACE_BYTES, type IndexRun } from './row-index.js';

// A CSV file out of external account number order, read in that order by its rows' places: the key scan sorted every
// row's key, line and bytes into runs on a scratch file (row-index.ts); here the runs are merged and each row is read
// at its place and split into cells as the full read splits them (csv-rows.ts), a batch of rows at a time, on the
// CSV thread like any CSV file (csv-thread.ts). The first account can go once the file has been scanned, not once it
// has been parsed and sorted.

/** A file's sorted runs of row places on the scratch file open as `fd` (plain data: it crosses to the CSV thread). */
export interface RowPlaces {
  fd: number;
  runs: IndexRun[];
  rows: number;
}

/** Rows parsed at a time. */
const BATCH = 256;
/** Bytes read from a run at a time while merging, shared by the file's runs. */
const READ_BUDGET = 512 << 10;
const READ_BYTES = { min: 4 << 10, max: 64 << 10 };

/** One run of places on the scratch file, read a block at a time; `at` is its head record in `block`. */
class RunCursor {
  readonly size: number;
  readonly block: Buffer;
  at = 0;
  #filled = 0;
  #position: number;

  constructor(
    readonly order: number,
    readonly fd: number,
    readonly run: IndexRun,
    blockBytes: number,
  ) {
    this.size = run.width + PLACE_BYTES;
    this.block = Buffer.allocUnsafe(Math.max(1, Math.floor(blockBytes / this.size)) * this.size);
    this.#position = run.start;
    this.#fill();
  }

  get done(): boolean {
    return this.at >= this.#filled;
  }

  /** Moves to the next record (false at the run's end). */
  advance(): boolean {
    this.at += this.size;
    if (this.at < this.#filled) return true;
    this.#fill();
    return !this.done;
  }

  #fill(): void {
    const want = Math.min(this.block.length, this.run.end - this.#position);
    let read = 0;
    while (read < want) {
      const got = readSync(this.fd, this.block, read, want - read, this.#position + read);
      if (got === 0) throw new Error('a run of row places ended early on the scratch file');
      read += got;
    }
    this.#position += read;
    this.#filled = read;
    this.at = 0;
  }
}

/** The key of a's head record against b's: their bytes, a shorter key padded with zero bytes; then run order. */
function before(a: RunCursor, b: RunCursor): boolean {
  const width = Math.max(a.run.width, b.run.width);
  for (let index = 0; index < width; index += 1) {
    const left = index < a.run.width ? (a.block[a.at + index] as number) : 0;
    const right = index < b.run.width ? (b.block[b.at + index] as number) : 0;
    if (left !== right) return left < right;
  }
  return a.order < b.order;
}

/**
 * readCsv's rows of the file (the header first, then the data rows, blank lines left out, with their lines and the
 * same errors), the data rows in external account number order (rows of one account in file order), in batches.
 */
export async function* readPlacedCsv(
  absolutePath: string,
  options: CsvOptions,
  places: RowPlaces,
): AsyncGenerator<CsvRow[], void, undefined> {
  const rows = readCsv(absolutePath, { file: options.file, encoding: options.encoding, delimiter: options.delimiter });
  let header: CsvRow | undefined;
  try {
    const first = await rows.next();
    header = first.done ? undefined : first.value;
  } finally {
    await rows.return(undefined);
  }
  if (header === undefined) return;
  yield [header];
  for (const batch of placedRows(absolutePath, options, places)) if (batch.length > 0) yield batch;
}

/** The data rows at their places, in batches, read synchronously (each batch a few reads of the page cache). */
function* placedRows(absolutePath: string, options: CsvOptions, places: RowPlaces): Generator<CsvRow[], void> {
  const fd = openSync(absolutePath, 'r');
  const decoder = /^utf-?8$/i.test(options.encoding) ? undefined : new TextDecoder('windows-1252');
  const blockBytes = Math.max(
    READ_BYTES.min,
    Math.min(READ_BYTES.max, Math.floor(READ_BUDGET / Math.max(1, places.runs.length))),
  );
  const cursors = places.runs.map((run, order) => new RunCursor(order, places.fd, run, blockBytes));
  const heap = new MergeHeap(
    cursors.filter((cursor) => !cursor.done),
    before,
  );
  const lines = new Uint32Array(BATCH);
  const fileBytes = fstatSync(fd).size;
  let bytes: Buffer = Buffer.allocUnsafe(64 << 10);
  let done = 0;
  try {
    for (;;) {
      let count = 0;
      let used = 0;
      // Rows that follow each other in the file (an account's rows written together) are read in one go: a span.
      let span = { at: 0, position: 0, length: 0 };
      const readSpan = (): void => {
        if (span.length === 0) return;
        readRow(fd, bytes, span.at, span.length, span.position, options.file);
        used = span.at + span.length;
        // The file's last row may end without a newline: the rows after it here must not join it.
        if (bytes[used - 1] !== 0x0a) bytes[used++] = 0x0a;
      };
      for (let top = heap.top(); top !== undefined && count < BATCH; top = heap.top()) {
        const at = top.at + top.run.width;
        const length = top.block.readUInt32LE(at + 4);
        const position = top.block.readDoubleLE(at + 8);
        if (span.length > 0 && position === span.position + span.length) {
          if (span.at + span.length + length + 1 > bytes.length)
            bytes = grown(bytes, used, span.at + span.length + length + 1);
          span.length += length;
        } else {
          readSpan();
          if (used + length + 1 > bytes.length) bytes = grown(bytes, used, used + length + 1);
          span = { at: used, position, length };
        }
        lines[count] = top.block.readUInt32LE(at);
        count += 1;
        heap.settleTop(!top.advance());
      }
      readSpan();
      if (count === 0) return;
      done += count;
      const rows = parsedRows(bytes.subarray(0, used), decoder, options, lines, count);
      options.onBytes?.(Math.round((fileBytes * done) / Math.max(1, places.rows)));
      yield rows;
    }
  } finally {
    closeSync(fd);
  }
}

function grown(bytes: Buffer, used: number, need: number): Buffer {
  const larger = Buffer.allocUnsafe(Math.max(need, bytes.length * 2));
  bytes.copy(larger, 0, 0, used);
  return larger;
}

function readRow(fd: number, into: Buffer, at: number, length: number, position: number, file: string): void {
  for (let read = 0; read < length;) {
    const got = readSync(fd, into, at + read, length - read, position + read);
    if (got === 0) throw shorterThanScanned(file);
    read += got;
  }
}

/** The rows of one batch, each with the line the scan gave it. */
function parsedRows(
  bytes: Buffer,
  decoder: { decode(bytes: Uint8Array): string } | undefined,
  { delimiter, file }: CsvOptions,
  lines: Uint32Array,
  count: number,
): CsvRow[] {
  let records: CsvRow[];
  try {
    const splitter = new CsvRowSplitter(delimiter);
    splitter.push(decoder === undefined ? bytes : Buffer.from(decoder.decode(bytes), 'utf8'));
    splitter.end();
    records = splitter.rows();
  } catch (error) {
    if (!(error instanceof CsvRowError)) throw error;
    throw new InputError(
      file,
      lines[0],
      `cannot be parsed as CSV here, though the whole file was scanned before: ${error.csv.message}`,
      'input_unparseable',
      error.csv,
    );
  }
  if (records.length !== count) throw shorterThanScanned(file);
  const rows: CsvRow[] = [];
  for (let index = 0; index < count; index += 1) {
    const { cells } = records[index] as CsvRow;
    if (cells.length === 1 && cells[0] === '') continue;
    rows.push({ line: lines[index] as number, cells });
  }
  return rows;
}

/** The rows read at their places are not the rows the scan found: the file changed after it was scanned. */
function shorterThanScanned(file: string): InputError {
  return new InputError(
    file,
    undefined,
    'changed while it was read (its rows are no longer where this run found them): the export is still being ' +
      'written, or was replaced. Nothing of it is blamed on its data; rerun when the export is complete.',
    'input_changed_while_read',
  );
}
