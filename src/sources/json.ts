import { InputError } from '../errors.js';
import { refuseCrOnlyLines } from './line-endings.js';
import { decodeFile, type DecodeOptions } from './decode.js';
import { JsonSyntaxError, parseJson } from './json-value.js';
import { MAX_RECORD_BYTES, MAX_RECORD_TEXT } from './limits.js';

// JSON arrays and NDJSON as streams (docs/export-format.md "Files"): only the current record is held in
// memory, so a large `.json` export reads in bounded memory like a CSV one. A record's numbers come out marked with
// their source text (json-value.ts), never as binary doubles.

export interface JsonRecord {
  /** 1-based line where the record starts. */
  line: number;
  object: Record<string, unknown>;
}

function asRecord(file: string, line: number, value: unknown, what: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new InputError(
      file,
      line,
      `${what} is not a JSON object; every record must be an object such as {"external_account_number": "..."}.`,
      'input_unparseable',
    );
  }
  return value as Record<string, unknown>;
}

function newlinesBefore(text: string, end: number): number {
  let count = 0;
  for (let at = text.indexOf('\n'); at !== -1 && at < end; at = text.indexOf('\n', at + 1)) count += 1;
  return count;
}

/** What to say about a record the parser refused, and its code. */
function refusal(error: JsonSyntaxError, what: string): { message: string; code: string } {
  switch (error.problem) {
    case 'duplicate_key':
      return {
        message:
          `${what} has the key ${JSON.stringify(error.key)} twice in one object; JSON does not say which value ` +
          `counts and it is never guessed: keep one of them.`,
        code: 'input_duplicate_key',
      };
    case 'nul_character':
      return {
        message: `${what} holds a NUL character (\\u0000) in a string; an export holds text: remove it.`,
        code: 'input_binary',
      };
    default:
      return { message: `${what} is not valid JSON (${error.message}).`, code: 'input_unparseable' };
  }
}

/**
 * One record, read by the export's JSON parser (json-value.ts): numbers keep their source text, a key twice in one
 * object is an error. The error's line is the line of the problem inside the record.
 */
function parseElement(file: string, line: number, text: string, what: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = parseJson(text);
  } catch (error) {
    if (!(error instanceof JsonSyntaxError)) throw error;
    const { message, code } = refusal(error, what);
    throw new InputError(file, line + newlinesBefore(text, error.offset), message, code, error);
  }
  return asRecord(file, line, value, what);
}

/** Scanner state of a JSON array read chunk by chunk. */
interface ArrayScan {
  state: 'start' | 'between' | 'element' | 'end';
  depth: number;
  inString: boolean;
  escaped: boolean;
  line: number;
  startLine: number;
  buffer: string;
  count: number;
}

/** Yields each element of a top-level JSON array of objects. */
export async function* readJsonArray(absolutePath: string, options: DecodeOptions): AsyncGenerator<JsonRecord> {
  const scan: ArrayScan = {
    state: 'start',
    depth: 0,
    inString: false,
    escaped: false,
    line: 1,
    startLine: 1,
    buffer: '',
    count: 0,
  };
  let first = true;
  for await (let text of decodeFile(absolutePath, options)) {
    if (first && text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    if (first) refuseCrOnlyLines(text, options.file);
    first = false;
    yield* scanChunk(options.file, scan, text);
  }
  if (scan.state !== 'end') {
    const what =
      scan.state === 'start'
        ? 'is empty: expected a JSON array of records'
        : 'ends before its JSON array is closed (truncated file?)';
    throw new InputError(options.file, scan.line, what, 'input_unparseable');
  }
}

function* scanChunk(file: string, scan: ArrayScan, text: string): Generator<JsonRecord> {
  let elementStart = scan.state === 'element' ? 0 : -1;
  for (let index = 0; index < text.length; index += 1) {
    const char = text.charCodeAt(index);
    if (char === 10) scan.line += 1;
    if (scan.state === 'element') {
      if (scan.inString) {
        if (scan.escaped) scan.escaped = false;
        else if (char === 92) scan.escaped = true;
        else if (char === 34) scan.inString = false;
        continue;
      }
      if (char === 34) scan.inString = true;
      else if (char === 123 || char === 91) scan.depth += 1;
      else if (char === 125 || char === 93) {
        scan.depth -= 1;
        if (scan.depth === 0) {
          const body = scan.buffer + text.slice(elementStart, index + 1);
          scan.buffer = '';
          scan.state = 'between';
          scan.count += 1;
          yield { line: scan.startLine, object: parseElement(file, scan.startLine, body, `record ${scan.count}`) };
        }
      }
      continue;
    }
    if (char === 32 || char === 9 || char === 10 || char === 13) continue;
    if (scan.state === 'start') {
      if (char !== 91)
        throw new InputError(
          file,
          scan.line,
          'is not a JSON array: a .json export file must hold [ {record}, {record}, ... ] (use .ndjson for one ' +
            'object per line).',
          'input_unparseable',
        );
      scan.state = 'between';
    } else if (scan.state === 'between') {
      if (char === 44) continue;
      if (char === 93) {
        scan.state = 'end';
        continue;
      }
      if (char !== 123)
        throw new InputError(file, scan.line, `record ${scan.count + 1} is not a JSON object.`, 'input_unparseable');
      scan.state = 'element';
      scan.depth = 1;
      scan.startLine = scan.line;
      elementStart = index;
    } else {
      throw new InputError(file, scan.line, 'has text after the end of its JSON array.', 'input_unparseable');
    }
  }
  if (scan.state === 'element') {
    scan.buffer += text.slice(elementStart);
    if (scan.buffer.length > MAX_RECORD_BYTES) throw tooLong(file, scan.startLine, `record ${scan.count + 1}`);
  }
}

/** A record beyond the limit: refused before it can exhaust memory (docs/limits.md). */
function tooLong(file: string, line: number, what: string): InputError {
  return new InputError(
    file,
    line,
    `${what} is longer than the limit of ${MAX_RECORD_TEXT} per record (a value that is far too large, or a ` +
      `string or object that is never closed); shorten or remove it.`,
    'input_record_too_large',
  );
}

/** Yields each non-blank line of an NDJSON (JSON Lines) file as a record. */
export async function* readNdjson(absolutePath: string, options: DecodeOptions): AsyncGenerator<JsonRecord> {
  let pending = '';
  let line = 1;
  let first = true;
  for await (let text of decodeFile(absolutePath, options)) {
    if (first && text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    if (first) refuseCrOnlyLines(text, options.file);
    first = false;
    pending += text;
    let start = 0;
    for (let newline = pending.indexOf('\n'); newline !== -1; newline = pending.indexOf('\n', start)) {
      const record = lineRecord(options.file, line, pending.slice(start, newline));
      if (record) yield record;
      line += 1;
      start = newline + 1;
    }
    pending = pending.slice(start);
    if (pending.length > MAX_RECORD_BYTES) throw tooLong(options.file, line, `line ${line}`);
  }
  const last = lineRecord(options.file, line, pending);
  if (last) yield last;
}

function lineRecord(file: string, line: number, text: string): JsonRecord | undefined {
  const trimmed = text.trim();
  if (trimmed === '') return undefined;
  return { line, object: parseElement(file, line, trimmed, `line ${line}`) };
}
