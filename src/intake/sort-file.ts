import { readSync, writeSync } from 'node:fs';
import { StringDecoder } from 'node:string_decoder';
import type { RecordData } from '../mapping/join-groups.js';
import type { KeyedRecord, OpenedFile } from './read-export.js';
import { openScratchFile, type ScratchFile } from './scratch-file.js';
import { compareKeys } from '../sources/key-order.js';
import { MergeHeap } from '../sources/merge-heap.js';

// One export file's records in external account number order (records of one account in file
// order), whatever order the file has, in bounded memory: an external merge sort. Records are
// encoded into a run buffer of RUN_BYTES (outside the JavaScript heap: text kept as strings until
// its run was written filled the heap with garbage, 165 MB at a million accounts); each full run
// is sorted by key and written to a scratch file (0600, unlinked at once: scratch-file.ts), and
// the runs are merged. A file that fits in one run never touches the disk. The streaming join
// reads through this an unsorted file whose rows the key scan cannot place (row-places.ts: a file
// out of order is otherwise read by its rows' places), so the sorted files still stream beside it.

/** Bytes of encoded records per run (two buffers of this size per file being sorted). */
const RUN_BYTES = 4 << 20;
/**
 * Bytes read from a run at a time while merging: this budget shared by the file's runs, 4-64 KB
 * each (a million-account export sorts to dozens of runs per file).
 */
const READ_BUDGET = 512 << 10;
const READ_BYTES = { min: 4 << 10, max: 64 << 10 };
const BATCH = 512;

// A record on disk: `key US line TAG data`, records separated by RS. TAG is US before cells
// joined by US, or GS before JSON (a JSON record, or cells holding a separator). A key with a
// control character or a unit from U+D800 up: `GS` + JSON of [line, key, data]; its run's keys
// are then compared with compareKeys, not as plain strings.
const US = '\u001f';
const RS = '\u001e';
const GS = '\u001d';
const PLAIN_KEY = /^[\u0020-\ud7ff]*$/;
const LINE_DIGITS = 10;

export function encodeRecord(record: KeyedRecord): { text: string; plain: boolean } {
  const { key, line, data } = record;
  if (!PLAIN_KEY.test(key)) return { text: `${GS}${JSON.stringify([line, key, data])}`, plain: false };
  const head = `${key}${US}${String(line).padStart(LINE_DIGITS, '0')}`;
  if (Array.isArray(data)) {
    const cells = data.join(US);
    if (cells.indexOf(RS) === -1 && separators(cells) === data.length - 1)
      return { text: `${head}${US}${cells}`, plain: true };
  }
  return { text: `${head}${GS}${JSON.stringify(data)}`, plain: true };
}

function separators(text: string): number {
  let count = 0;
  for (let at = text.indexOf(US); at !== -1; at = text.indexOf(US, at + 1)) count += 1;
  return count;
}

export function decodeRecord(text: string): KeyedRecord {
  if (text.charCodeAt(0) === 0x1d) {
    const [line, key, data] = JSON.parse(text.slice(1)) as [number, string, RecordData];
    return { line, key, data };
  }
  const keyEnd = text.indexOf(US);
  const dataStart = keyEnd + LINE_DIGITS + 2;
  const payload = text.slice(dataStart);
  return {
    key: text.slice(0, keyEnd),
    line: Number(text.slice(keyEnd + 1, dataStart - 1)),
    data: text.charCodeAt(dataStart - 1) === 0x1f ? payload.split(US) : (JSON.parse(payload) as RecordData),
  };
}

/** The order of a run's records: by key, records of one key in file order. */
function sortRun(keys: string[], plain: boolean): number[] {
  const order = keys.map((_, index) => index);
  const compare = plain ? (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0) : compareKeys;
  return order.sort((a, b) => compare(keys[a] as string, keys[b] as string) || a - b);
}

/** A run on the scratch file: its bytes, and whether its keys are all plain (compared as native strings). */
interface Run {
  start: number;
  end: number;
  plain: boolean;
}

/** One sorted run on the scratch file, read back a block at a time. */
class RunReader {
  head: KeyedRecord | undefined;
  readonly #decoder = new StringDecoder('utf8');
  readonly #buffer: Buffer;
  #records: string[] = [];
  #next = 0;
  #rest = '';
  #position: number;

  constructor(
    readonly order: number,
    readonly fd: number,
    readonly run: Run,
    blockBytes: number,
  ) {
    this.#buffer = Buffer.alloc(blockBytes);
    this.#position = run.start;
    this.advance();
  }

  advance(): void {
    while (this.#next >= this.#records.length) {
      if (this.#position >= this.run.end) {
        this.head = undefined;
        return;
      }
      const read = readSync(
        this.fd,
        this.#buffer,
        0,
        Math.min(this.#buffer.length, this.run.end - this.#position),
        this.#position,
      );
      if (read === 0) throw new Error('a sorted run ended early on the scratch file');
      this.#position += read;
      const text = this.#rest + this.#decoder.write(this.#buffer.subarray(0, read));
      this.#records = text.split(RS);
      this.#rest = this.#records.pop() ?? '';
      this.#next = 0;
    }
    this.head = decodeRecord(this.#records[this.#next] as string);
    this.#next += 1;
  }
}

/** Run readers ordered by their head record's key, then by run (earlier runs hold earlier lines). */
function headBefore(a: RunReader, b: RunReader): boolean {
  const [left, right] = [(a.head as KeyedRecord).key, (b.head as KeyedRecord).key];
  const order = a.run.plain && b.run.plain ? (left === right ? 0 : left < right ? -1 : 1) : compareKeys(left, right);
  return order < 0 || (order === 0 && a.order < b.order);
}

/**
 * One file's sort: reading starts at once (the run phase, beside the other files' reads), and
 * records() hands out the merged runs once the file has been read to its end.
 */
class FileSort {
  readonly #scratchDir: string | undefined;
  readonly #runBytes: number;
  readonly #runs: Run[] = [];
  readonly #read: Promise<void>;
  #scratch: ScratchFile | undefined;
  #written = 0;
  // The run being filled: encoded records in #buffer, where each starts and ends, and its key.
  #buffer: Buffer;
  #used = 0;
  #starts: number[] = [];
  #ends: number[] = [];
  #keys: string[] = [];
  #plain = true;
  #stopped = false;

  constructor(batches: AsyncIterable<KeyedRecord[]>, scratchDir: string | undefined, runBytes: number) {
    this.#scratchDir = scratchDir;
    this.#runBytes = runBytes;
    this.#buffer = Buffer.allocUnsafe(runBytes);
    this.#read = this.#readRuns(batches);
    // Its error is thrown by records(); until then it must not count as unhandled.
    this.#read.catch(() => undefined);
  }

  async #readRuns(batches: AsyncIterable<KeyedRecord[]>): Promise<void> {
    for await (const batch of batches) {
      if (this.#stopped) return;
      for (const record of batch) this.#add(record);
    }
    if (this.#scratch && this.#keys.length > 0) this.#writeRun();
  }

  #add(record: KeyedRecord): void {
    const { text, plain } = encodeRecord(record);
    // At most 3 UTF-8 bytes per UTF-16 unit: it fits, or the run is written first (a record larger
    // than a whole run gets a buffer of its own).
    if (this.#used + text.length * 3 > this.#buffer.length && this.#keys.length > 0) this.#writeRun();
    if (text.length * 3 > this.#buffer.length) this.#buffer = Buffer.allocUnsafe(text.length * 3);
    this.#starts.push(this.#used);
    this.#used += this.#buffer.write(text, this.#used);
    this.#ends.push(this.#used);
    this.#keys.push(record.key);
    this.#plain &&= plain;
  }

  /** The run's records in sorted order, as byte ranges of #buffer; the run is then empty. */
  #takeRun(): { ranges: Array<[number, number]>; plain: boolean } {
    const order = sortRun(this.#keys, this.#plain);
    const ranges = order.map((index): [number, number] => [this.#starts[index] as number, this.#ends[index] as number]);
    const plain = this.#plain;
    this.#used = 0;
    this.#starts = [];
    this.#ends = [];
    this.#keys = [];
    this.#plain = true;
    return { ranges, plain };
  }

  #writeRun(): void {
    this.#scratch ??= openScratchFile(this.#scratchDir, 'sort');
    const source = this.#buffer;
    const { ranges, plain } = this.#takeRun();
    const out = Buffer.allocUnsafe(ranges.reduce((sum, [start, end]) => sum + end - start + 1, 0));
    let at = 0;
    for (const [start, end] of ranges) {
      at += source.copy(out, at, start, end);
      out[at] = 0x1e;
      at += 1;
    }
    writeSync(this.#scratch.fd, out, 0, out.length, this.#written);
    this.#runs.push({ start: this.#written, end: this.#written + out.length, plain });
    this.#written += out.length;
    if (source.length > this.#runBytes) this.#buffer = Buffer.allocUnsafe(this.#runBytes);
  }

  async *records(): AsyncGenerator<KeyedRecord[], void, undefined> {
    await this.#read;
    if (!this.#scratch) {
      // The whole file fitted in one run: no disk.
      const source = this.#buffer;
      const { ranges } = this.#takeRun();
      for (let start = 0; start < ranges.length; start += BATCH) {
        yield ranges.slice(start, start + BATCH).map(([from, to]) => decodeRecord(source.toString('utf8', from, to)));
      }
      return;
    }
    const fd = this.#scratch.fd;
    const blockBytes = Math.max(READ_BYTES.min, Math.min(READ_BYTES.max, Math.floor(READ_BUDGET / this.#runs.length)));
    const readers = this.#runs.map((run, order) => new RunReader(order, fd, run, blockBytes));
    const heap = new MergeHeap(
      readers.filter((reader) => reader.head),
      headBefore,
    );
    let out: KeyedRecord[] = [];
    for (let top = heap.top(); top?.head; top = heap.top()) {
      out.push(top.head);
      top.advance();
      heap.settleTop(!top.head);
      if (out.length >= BATCH) {
        yield out;
        out = [];
      }
    }
    if (out.length > 0) yield out;
  }

  /** Stops reading (at the next batch). */
  stop(): void {
    this.#stopped = true;
  }

  /** After stop() and once the source is closed: waits for the read to end, then removes the scratch file. */
  async close(): Promise<void> {
    await this.#read.catch(() => undefined);
    this.#scratch?.close();
    this.#scratch = undefined;
    this.#keys = [];
  }
}

/**
 * The same file, its records in external account number order (reading starts now); close()
 * stops both. `runBytes`: the run size (tests use small runs to get many).
 */
export function sortedFile(opened: OpenedFile, scratchDir: string | undefined, runBytes = RUN_BYTES): OpenedFile {
  const sort = new FileSort(opened.records, scratchDir, runBytes);
  const records = sort.records();
  return {
    plan: opened.plan,
    records,
    close: async () => {
      sort.stop();
      await records.return(undefined);
      await opened.close();
      await sort.close();
    },
  };
}
