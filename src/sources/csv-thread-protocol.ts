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

export function encodeBatch(rows: CsvRow[]): EncodedBatch {
  const lines = rows.map((row) => row.line);
  const joined = rows.map((row) => row.cells.join(US));
  const cells = rows.reduce((sum, row) => sum + row.cells.length, 0);
  const text = joined.join(RS);
  // Exactly one separator between cells and between rows means no cell holds one.
  const separators = occurrences(text, US) + occurrences(text, RS);
  const expected = cells - rows.length + Math.max(0, rows.length - 1);
  return separators === expected
    ? { text, json: false, lines }
    : { text: JSON.stringify(rows.map((row) => row.cells)), json: true, lines };
}

function occurrences(text: string, char: string): number {
  let count = 0;
  for (let at = text.indexOf(char); at !== -1; at = text.indexOf(char, at + 1)) count += 1;
  return count;
}

export function decodeBatch(batch: EncodedBatch): CsvRow[] {
  if (batch.lines.length === 0) return [];
  const cells: string[][] = batch.json
    ? (JSON.parse(batch.text) as string[][])
    : batch.text.split(RS).map((row) => row.split(US));
  return cells.map((row, index) => ({ line: batch.lines[index] ?? 0, cells: row }));
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
