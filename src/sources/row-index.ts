import { writeSync } from 'node:fs';
import { scanRowPlaces, type KeyScanInput } from './key-scan.js';

// A CSV file's rows in external account number order, as places, not rows: the key scan gives every row's key, line
// and bytes (key-scan.ts); they are collected in runs of RUN_ROWS, each run sorted by key (rows of one key in file
// order) and written to a scratch file the caller opened. Intake merges the runs and reads each row at its place
// (intake/indexed-file.ts). What is sorted is a small fixed-size record per row, by a radix sort of the key's bytes,
// instead of every row's cells compared as strings: the file is never parsed to be put in order.

/** Rows per run: about 4 MB of keys and 3 MB of places while a run is being filled. */
const RUN_ROWS = 128 * 1024;
/** The longest key (UTF-8 bytes) a run holds; a longer one sends the file to the full sort. */
export const MAX_KEY_BYTES = 32;
/** Bytes of a place after its key: the line (u32), the row's length (u32), its offset in the file (f64). */
export const PLACE_BYTES = 16;

/** One sorted run in the scratch file: its bytes, and the key width of its records (`width + PLACE_BYTES` each). */
export interface IndexRun {
  start: number;
  end: number;
  width: number;
}

export type RowIndexResult =
  { order: 'indexed'; rows: number; runs: IndexRun[] } | { order: 'unproven'; reason: string };

/** Scans a file and writes its sorted runs to `fd` from offset 0 (`runRows`: rows per run; tests use small runs). */
export async function indexRows(
  input: KeyScanInput,
  fd: number,
  signal?: AbortSignal,
  runRows = RUN_ROWS,
): Promise<RowIndexResult> {
  const runs = new RunWriter(fd, runRows);
  let tooLong: number | undefined;
  const scanned = await scanRowPlaces(
    input,
    (key, line, start, end) => {
      if (tooLong === undefined && !runs.add(key ?? '', line, start, end)) tooLong = line;
    },
    signal,
  );
  if (scanned.order === 'unproven') return scanned;
  if (tooLong !== undefined)
    return { order: 'unproven', reason: `line ${tooLong}: an account number longer than ${MAX_KEY_BYTES} bytes` };
  runs.flush();
  return { order: 'indexed', rows: runs.rows, runs: runs.runs };
}

class RunWriter {
  readonly runs: IndexRun[] = [];
  rows = 0;
  readonly #keys: Uint8Array;
  readonly #lines: Uint32Array;
  readonly #lengths: Uint32Array;
  readonly #starts: Float64Array;
  readonly #order: readonly [Uint32Array, Uint32Array];
  #count = 0;
  #width = 0;
  #written = 0;

  constructor(
    readonly fd: number,
    readonly runRows: number,
  ) {
    this.#keys = new Uint8Array(runRows * MAX_KEY_BYTES);
    this.#lines = new Uint32Array(runRows);
    this.#lengths = new Uint32Array(runRows);
    this.#starts = new Float64Array(runRows);
    this.#order = [new Uint32Array(runRows), new Uint32Array(runRows)];
  }

  /** Adds a row's place; false when its key is too long to be held. */
  add(key: string, line: number, start: number, end: number): boolean {
    const at = this.#count * MAX_KEY_BYTES;
    let length = 0;
    for (let index = 0; index < key.length; index += 1) {
      const unit = key.charCodeAt(index);
      if (unit >= 0x80) {
        length = -1;
        break;
      }
      if (index >= MAX_KEY_BYTES) return false;
      this.#keys[at + index] = unit;
      length += 1;
    }
    if (length < 0) {
      const bytes = Buffer.from(key, 'utf8');
      if (bytes.length > MAX_KEY_BYTES) return false;
      this.#keys.set(bytes, at);
      length = bytes.length;
    }
    this.#keys.fill(0, at + length, at + MAX_KEY_BYTES);
    this.#width = Math.max(this.#width, length);
    this.#lines[this.#count] = line;
    this.#lengths[this.#count] = end - start;
    this.#starts[this.#count] = start;
    this.#count += 1;
    this.rows += 1;
    if (this.#count === this.runRows) this.flush();
    return true;
  }

  /** Sorts the run being filled and writes it. */
  flush(): void {
    const count = this.#count;
    if (count === 0) return;
    const width = this.#width;
    const order = sortedByKey(this.#keys, count, width, this.#order);
    const size = width + PLACE_BYTES;
    const out = Buffer.allocUnsafe(count * size);
    const keys = this.#keys;
    for (let rank = 0; rank < count; rank += 1) {
      const row = order[rank] as number;
      const to = rank * size;
      const from = row * MAX_KEY_BYTES;
      for (let byte = 0; byte < width; byte += 1) out[to + byte] = keys[from + byte] as number;
      out.writeUInt32LE(this.#lines[row] as number, to + width);
      out.writeUInt32LE(this.#lengths[row] as number, to + width + 4);
      out.writeDoubleLE(this.#starts[row] as number, to + width + 8);
    }
    for (let done = 0; done < out.length;)
      done += writeSync(this.fd, out, done, out.length - done, this.#written + done);
    this.runs.push({ start: this.#written, end: this.#written + out.length, width });
    this.#written += out.length;
    this.#count = 0;
    this.#width = 0;
  }
}

/**
 * The rows' order by key, rows of one key in the order they were added: a least-significant-byte radix sort (stable)
 * of the keys' UTF-8 bytes, padded with zero bytes (a key holds none: the scan refuses a NUL byte), which is the order
 * of compareKeys (code points). A byte position every key shares is skipped.
 */
export function sortedByKey(
  keys: Uint8Array,
  count: number,
  width: number,
  buffers: readonly [Uint32Array, Uint32Array],
): Uint32Array {
  let from = buffers[0];
  let to = buffers[1];
  for (let row = 0; row < count; row += 1) from[row] = row;
  const counts = new Uint32Array(256);
  for (let byte = width - 1; byte >= 0; byte -= 1) {
    counts.fill(0);
    for (let row = 0; row < count; row += 1) {
      const value = keys[row * MAX_KEY_BYTES + byte] as number;
      counts[value] = (counts[value] as number) + 1;
    }
    if (counts[keys[byte] as number] === count) continue;
    let sum = 0;
    for (let value = 0; value < 256; value += 1) {
      const here = counts[value] as number;
      counts[value] = sum;
      sum += here;
    }
    for (let rank = 0; rank < count; rank += 1) {
      const row = from[rank] as number;
      const value = keys[row * MAX_KEY_BYTES + byte] as number;
      const rankTo = counts[value] as number;
      to[rankTo] = row;
      counts[value] = rankTo + 1;
    }
    [from, to] = [to, from];
  }
  return from;
}
