import { InputError } from '../errors.js';
import type { CsvOptions, CsvRow } from './csv.js';
import type { RowPlaces } from './placed-rows.js';

// The messages between the main thread and the CSV parsing thread (csv-thread.ts and
// csv-thread-worker.ts). Rows travel as one string per batch, so that crossing threads costs a
// copy of the text rather than a structured clone of thousands of small arrays.

/** Rows per batch, in the worker and in the in-thread fallback alike. */
export const ROWS_PER_BATCH = 1000;

/** `places`: the file's rows are read at these places (placed-rows.ts), not in file order. */
export type CsvThreadOptions = Omit<CsvOptions, 'onBytes'> & { places?: RowPlaces };

export type ToWorker =
  | { type: 'open'; id: number; absolutePath: string; options: CsvThreadOptions }
  | { type: 'credit'; id: number }
  | { type: 'close'; id: number };

export type SerializedError =
  | { kind: 'input'; file: string; line: number | undefined; message: string; code: string }
  | { kind: 'other'; message: string; stack: string | undefined };

export type FromWorker =
  | { type: 'rows'; id: number; batch: EncodedBatch; bytes: number }
  | { type: 'end'; id: number; bytes: number }
  | { type: 'error'; id: number; error: SerializedError };

/** Rows of a batch: cells joined by US and rows by RS, or JSON when a cell holds either. */
export interface EncodedBatch {
  text: string;
  json: boolean;
  lines: number[];
}

const US = '\u001f';
const RS = '\u001e';

/**
 * Builds a batch row by row, as the rows are parsed: each row's cells become one string at once, so the parser's cell
 * strings die young (held in a batch of a thousand rows they outlived the young generation and were copied, then
 * promoted, at every collection).
 */
export class BatchEncoder {
  #rows: string[] = [];
  #cells: string[][] | undefined;
  #lines: number[] = [];
  #chars = 0;

  get rows(): number {
    return this.#lines.length;
  }

  /** Characters of the cells added since the last take. */
  get chars(): number {
    return this.#chars;
  }

  add(row: CsvRow): void {
    this.#lines.push(row.line);
    const joined = row.cells.join(US);
    this.#chars += joined.length;
    if (this.#cells) {
      this.#cells.push(row.cells);
      return;
    }
    // Exactly cells - 1 separators in the row means no cell holds one; else the batch goes as JSON.
    if (joined.indexOf(RS) === -1 && occurrences(joined, US) === row.cells.length - 1) this.#rows.push(joined);
    else {
      this.#cells = this.#rows.map((text) => text.split(US));
      this.#cells.push(row.cells);
    }
  }

  take(): EncodedBatch {
    const batch = this.#cells
      ? { text: JSON.stringify(this.#cells), json: true, lines: this.#lines }
      : { text: this.#rows.join(RS), json: false, lines: this.#lines };
    this.#rows = [];
    this.#cells = undefined;
    this.#lines = [];
    this.#chars = 0;
    return batch;
  }
}

function occurrences(text: string, char: string): number {
  let count = 0;
  for (let at = text.indexOf(char); at !== -1; at = text.indexOf(char, at + 1)) count += 1;
  return count;
}

/** Rows handed to the consumer at a time: cells are split from a batch's text only as they are used. */
const ROWS_PER_PIECE = 100;

/**
 * A batch's rows in pieces of a hundred: a thousand rows' cells split at once outlived the main thread's young
 * generation while the join used them, and were promoted and collected again as old ones.
 */
export function* decodeBatch(batch: EncodedBatch): Generator<CsvRow[], void, undefined> {
  if (batch.lines.length === 0) return;
  const { lines } = batch;
  if (batch.json) {
    const cells = JSON.parse(batch.text) as string[][];
    yield cells.map((row, index) => ({ line: lines[index] ?? 0, cells: row }));
    return;
  }
  const rows = batch.text.split(RS);
  for (let start = 0; start < rows.length; start += ROWS_PER_PIECE) {
    const end = Math.min(rows.length, start + ROWS_PER_PIECE);
    const piece: CsvRow[] = [];
    for (let index = start; index < end; index += 1)
      piece.push({ line: lines[index] ?? 0, cells: (rows[index] as string).split(US) });
    yield piece;
  }
}

export function serializeError(error: unknown): SerializedError {
  if (error instanceof InputError) {
    const prefix = `${error.line === undefined ? error.file : `${error.file}:${error.line}`}: `;
    return {
      kind: 'input',
      file: error.file,
      line: error.line,
      message: error.message.slice(prefix.length),
      code: error.code,
    };
  }
  const plain = error instanceof Error ? error : new Error(String(error));
  return { kind: 'other', message: plain.message, stack: plain.stack };
}

export function deserializeError(error: SerializedError): Error {
  if (error.kind === 'input') return new InputError(error.file, error.line, error.message, error.code);
  const restored = new Error(`CSV parsing thread: ${error.message}`);
  if (error.stack !== undefined) restored.stack = error.stack;
  return restored;
}
