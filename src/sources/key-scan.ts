import { isAscii as isAsciiBytes, isUtf8 } from 'node:buffer';
import { open, type FileHandle } from 'node:fs/promises';
import { incompleteTail } from './decode.js';
import { accountKeyOf, compareKeys } from './key-order.js';
import { MAX_RECORD_BYTES } from './limits.js';

// The proof that a CSV file is in external account number order, read from its bytes: one pass
// that splits rows as RFC 4180 does (quoted fields, doubled quotes, newlines inside quotes, CRLF)
// and looks at one column only. It is a proof, not a guess: where the bytes hold anything the
// scan does not read exactly as csv-parse would (a quote inside an unquoted field, text after a
// closing quote, a delimiter of several bytes, UTF-16), the answer is `unproven` and the file
// is sorted on disk like an unsorted one. It stops at the first row out of order.
//
// The same scan also gives every row's place (`scanRowPlaces`): its key, line and bytes, for the files found out of
// order (intake reads their rows by these places, in key order, without sorting the rows themselves). There it also
// checks what the full read would refuse (bytes not valid in the encoding, a NUL byte, a row longer than a record
// may be): such a file is `unproven`, and the full read names the problem at its line.

export interface KeyScanInput {
  absolutePath: string;
  /** The file's delimiter (the mapping file's, default `,`). */
  delimiter: string;
  /** The mapping file's encoding label (`utf-8`, `latin1`, `windows-1252`, ...). */
  encoding: string;
  /** The 0-based column of external_account_number, as the header maps it. */
  keyIndex: number;
}

export type KeyScanResult =
  /** Every row's key is at or after the one before (rows without a key do not count). */
  | { order: 'sorted'; rows: number }
  /** `line` (1-based, header = 1) holds `key`, which sorts before `previousKey` on an earlier line. */
  | { order: 'unsorted'; line: number; key: string; previousKey: string }
  /** The bytes could not be read exactly enough to prove anything. */
  | { order: 'unproven'; reason: string };

const LF = 0x0a;
const CR = 0x0d;
const QUOTE = 0x22;
const FIRST_READ = 1 << 20;
const READ = 4 << 20;
/** A row longer than csv-parse's limit fails the real read anyway; the scan gives up before it. */
const MAX_BUFFER = 2 * MAX_RECORD_BYTES + READ;
/**
 * The longest row whose place is given: a third of a record's limit, so that no row read by its place can exceed the
 * limit once re-encoded as UTF-8 (a longer row sends the file to the full read, which names it).
 */
const MAX_PLACED_ROW = Math.floor(MAX_RECORD_BYTES / 3);
const NEED_MORE = -1;
const FAILED = -2;

const SINGLE_BYTE = new Set(['latin1', 'iso-8859-1', 'windows-1252', 'cp1252']);
const UTF8 = new Set(['utf8', 'utf-8']);

/**
 * Every data row of a file, in file order: its external account number (undefined: none), the line where it starts,
 * and its bytes [start, end) in the file (the newline that ends it included).
 */
export type RowPlaceSink = (key: string | undefined, line: number, start: number, end: number) => void;

/** Scans a CSV file's key column; `signal` stops it between reads (the promise then rejects with the abort reason). */
export async function scanKeyOrder(input: KeyScanInput, signal?: AbortSignal): Promise<KeyScanResult> {
  return scan(input, undefined, signal);
}

/**
 * Scans the whole file, handing every data row's place to `onRow` (the answer is then `sorted` whatever the order:
 * the rows are read, not judged), or `unproven` when the scan cannot read it exactly or the full read would refuse it.
 */
export async function scanRowPlaces(
  input: KeyScanInput,
  onRow: RowPlaceSink,
  signal?: AbortSignal,
): Promise<KeyScanResult> {
  return scan(input, onRow, signal);
}

async function scan(
  input: KeyScanInput,
  onRow: RowPlaceSink | undefined,
  signal?: AbortSignal,
): Promise<KeyScanResult> {
  const encoding = input.encoding.toLowerCase();
  if (!UTF8.has(encoding) && !SINGLE_BYTE.has(encoding))
    return { order: 'unproven', reason: `its encoding (${input.encoding}) is not read byte by byte` };
  const delimiter = Buffer.from(input.delimiter, 'utf8');
  if (delimiter.length !== 1 || (delimiter[0] as number) >= 0x80 || [LF, CR, QUOTE].includes(delimiter[0] as number))
    return { order: 'unproven', reason: `its delimiter ${JSON.stringify(input.delimiter)} is not one plain byte` };
  const handle = await open(input.absolutePath, 'r');
  try {
    const scan = new KeyScan(handle, input.keyIndex, delimiter[0] as number, !UTF8.has(encoding), onRow);
    return await scan.run(signal);
  } finally {
    await handle.close();
  }
}

class KeyScan {
  #buffer = Buffer.allocUnsafe(FIRST_READ + READ);
  /** The bytes read and not consumed: `#data` is `#buffer` up to what was read (searches never see stale bytes). */
  #data = this.#buffer.subarray(0, 0);
  #eof = false;
  #position = 0;
  /** The next quote at or after `#quoteFrom` in `#data` (-1: none), so that a file without quotes is searched once. */
  #quoteAt = -1;
  #quoteFrom = Infinity;
  // Where the key column of the row just read lies, and the newlines inside its quoted fields.
  #keyStart = -1;
  #keyEnd = -1;
  #keyQuoted = false;
  #innerLines = 0;
  #failure = '';
  readonly #decoder: { decode(bytes: Uint8Array): string } | undefined;
  /** The file offset of `#data[0]`. */
  #base = 0;
  /** Places only: the bytes checked as the full read checks them, up to this file offset. */
  readonly #bytes = { checkedTo: 0, allUtf8: true, nonAscii: false, bad: '' };

  constructor(
    readonly handle: FileHandle,
    readonly keyIndex: number,
    readonly delimiter: number,
    singleByte: boolean,
    readonly onRow?: RowPlaceSink,
  ) {
    this.#decoder = singleByte ? new TextDecoder('windows-1252') : undefined;
  }

  async run(signal?: AbortSignal): Promise<KeyScanResult> {
    await this.#fill(0, FIRST_READ);
    if (hasUtf16Bom(this.#data)) return { order: 'unproven', reason: 'it is UTF-16 text (a byte-order mark)' };
    let at = hasUtf8Bom(this.#data) && this.#decoder === undefined ? 3 : 0;
    let line = 1;
    let rows = 0;
    let previous: { key: string; line: number } | undefined;
    let header = true;
    for (;;) {
      if (this.#bytes.bad !== '') return { order: 'unproven', reason: this.#bytes.bad };
      if (at >= this.#data.length && this.#eof) return this.#ended(rows);
      const next = this.#row(at);
      if (next === FAILED) return { order: 'unproven', reason: `line ${line}: ${this.#failure}` };
      if (next === NEED_MORE) {
        if (this.#eof) return { order: 'unproven', reason: `line ${line}: the file ends inside a row` };
        signal?.throwIfAborted();
        at = await this.#refill(at);
        if (at < 0) return { order: 'unproven', reason: `line ${line}: a row longer than the scan reads` };
        continue;
      }
      const rowLine = line;
      line += 1 + this.#innerLines;
      const rowStart = at;
      at = next;
      if (header) {
        header = false;
        continue;
      }
      rows += 1;
      const key = this.#keyStart < 0 ? undefined : accountKeyOf(this.#keyText());
      if (this.onRow) {
        if (next - rowStart > MAX_PLACED_ROW)
          return { order: 'unproven', reason: `line ${rowLine}: a row longer than the scan places` };
        this.onRow(key, rowLine, this.#base + rowStart, this.#base + next);
        continue;
      }
      if (key === undefined) continue;
      if (previous !== undefined && compareKeys(key, previous.key) < 0)
        return { order: 'unsorted', line: rowLine, key, previousKey: previous.key };
      previous = { key, line: rowLine };
    }
  }

  /**
   * Reads the row starting at `at`: returns where the next row starts, NEED_MORE when the bytes
   * read so far end inside it, or FAILED (`#failure` says why).
   */
  #row(at: number): number {
    const data = this.#data;
    const end = data.length;
    let pos = at;
    let field = 0;
    this.#keyStart = -1;
    this.#innerLines = 0;
    for (;;) {
      if (field > this.keyIndex) {
        // Past the key: the rest of the row is one search for its newline, unless a quote comes first.
        const newline = data.indexOf(LF, pos);
        if (newline !== -1 && this.#nextQuote(pos) > newline) return newline + 1;
        if (newline === -1 && this.#nextQuote(pos) === Infinity) return this.#eof ? end : NEED_MORE;
      }
      const start = pos;
      const quoted = pos < end && data[pos] === QUOTE;
      pos = quoted ? this.#quotedEnd(pos) : this.#plainEnd(pos);
      if (pos < 0) return pos;
      if (field === this.keyIndex) {
        this.#keyStart = start;
        this.#keyEnd = pos;
        this.#keyQuoted = quoted;
      }
      if (pos >= end) return end; // the last row, without a newline (#plainEnd/#quotedEnd asked for more before eof)
      const byte = data[pos];
      if (byte === this.delimiter) {
        pos += 1;
        field += 1;
      } else if (byte === LF) return pos + 1;
      else if (byte === CR && quoted) {
        if (pos + 1 >= end) return this.#eof ? end : NEED_MORE;
        if (data[pos + 1] === LF) return pos + 2;
        return this.#fail('a carriage return after a closing quote, not followed by a newline');
      } else return this.#fail('text after a closing quote');
    }
  }

  /** Where an unquoted field that starts at `at` ends (at its delimiter, newline or the end of the file). */
  #plainEnd(at: number): number {
    const data = this.#data;
    for (let pos = at; pos < data.length; pos += 1) {
      const byte = data[pos];
      if (byte === this.delimiter || byte === LF) return pos;
      if (byte === QUOTE) return this.#fail('a quote inside an unquoted field');
    }
    return this.#eof ? data.length : NEED_MORE;
  }

  /** Where a quoted field that starts at `at` (its opening quote) ends: just after its closing quote. */
  #quotedEnd(at: number): number {
    const data = this.#data;
    let from = at + 1;
    for (;;) {
      const quote = data.indexOf(QUOTE, from);
      if (quote === -1) return this.#eof ? this.#fail('a quoted field that is never closed') : NEED_MORE;
      for (
        let newline = data.indexOf(LF, from);
        newline !== -1 && newline < quote;
        newline = data.indexOf(LF, newline + 1)
      )
        this.#innerLines += 1;
      if (quote + 1 >= data.length && !this.#eof) return NEED_MORE;
      if (data[quote + 1] !== QUOTE) return quote + 1;
      from = quote + 2;
    }
  }

  #nextQuote(from: number): number {
    // No quote in [#quoteFrom, #quoteAt): the answer for any later `from` up to #quoteAt is the same.
    if (from >= this.#quoteFrom && (this.#quoteAt === -1 || this.#quoteAt >= from))
      return this.#quoteAt === -1 ? Infinity : this.#quoteAt;
    this.#quoteFrom = from;
    this.#quoteAt = this.#data.indexOf(QUOTE, from);
    return this.#quoteAt === -1 ? Infinity : this.#quoteAt;
  }

  #keyText(): string {
    const start = this.#keyQuoted ? this.#keyStart + 1 : this.#keyStart;
    const end = this.#keyQuoted ? this.#keyEnd - 1 : this.#keyEnd;
    const bytes = this.#data.subarray(start, end);
    let text: string;
    if (isAscii(bytes)) text = bytes.toString('latin1');
    else text = this.#decoder === undefined ? bytes.toString('utf8') : this.#decoder.decode(bytes);
    return this.#keyQuoted ? text.replaceAll('""', '"') : text;
  }

  #fail(reason: string): number {
    this.#failure = reason;
    return FAILED;
  }

  /**
   * Keeps the bytes from `at` on, reads more after them; returns where `at` is now, or -1 when a row outgrew the
   * buffer.
   */
  async #refill(at: number): Promise<number> {
    const kept = this.#data.length - at;
    if (at === 0 && this.#data.length + READ > this.#buffer.length) {
      if (this.#buffer.length >= MAX_BUFFER) return -1;
      const larger = Buffer.allocUnsafe(Math.min(MAX_BUFFER, this.#buffer.length * 2));
      this.#data.copy(larger, 0);
      this.#buffer = larger;
    } else if (at > 0) this.#buffer.copy(this.#buffer, 0, at, this.#data.length);
    await this.#fill(kept, READ);
    return 0;
  }

  async #fill(kept: number, want: number): Promise<void> {
    const length = Math.min(want, this.#buffer.length - kept);
    let filled = 0;
    while (filled < length && !this.#eof) {
      const { bytesRead } = await this.handle.read(this.#buffer, kept + filled, length - filled, this.#position);
      this.#position += bytesRead;
      filled += bytesRead;
      this.#eof = bytesRead === 0;
    }
    this.#data = this.#buffer.subarray(0, kept + filled);
    this.#base = this.#position - this.#data.length;
    this.#quoteFrom = Infinity;
    this.#quoteAt = -1;
    if (this.onRow) this.#checkBytes();
  }

  /**
   * The bytes read since the last check, checked as the full read checks them (sources/decode.ts): no NUL byte; UTF-8
   * text valid; single-byte text not UTF-8 with multi-byte characters (that is refused as a whole at the end).
   */
  #checkBytes(): void {
    const checks = this.#bytes;
    const from = checks.checkedTo - this.#base;
    const end = this.#eof ? this.#data.length : this.#data.length - incompleteTail(this.#data);
    if (end <= from) return;
    const bytes = this.#data.subarray(from, end);
    checks.checkedTo = this.#base + end;
    if (bytes.includes(0)) checks.bad = 'it holds a NUL byte';
    const ascii = isAsciiBytes(bytes);
    if (this.#decoder === undefined && !ascii && !isUtf8(bytes)) checks.bad = 'it is not valid UTF-8';
    checks.nonAscii ||= !ascii;
    checks.allUtf8 &&= ascii || isUtf8(bytes);
  }

  #ended(rows: number): KeyScanResult {
    if (this.onRow && this.#decoder !== undefined && this.#bytes.allUtf8 && this.#bytes.nonAscii)
      return { order: 'unproven', reason: 'its bytes are UTF-8 where a single-byte encoding is declared' };
    return { order: 'sorted', rows };
  }
}

function hasUtf8Bom(data: Buffer): boolean {
  return data[0] === 0xef && data[1] === 0xbb && data[2] === 0xbf;
}

function hasUtf16Bom(data: Buffer): boolean {
  return (data[0] === 0xff && data[1] === 0xfe) || (data[0] === 0xfe && data[1] === 0xff);
}

function isAscii(bytes: Buffer): boolean {
  for (const byte of bytes) if (byte >= 0x80) return false;
  return true;
}
