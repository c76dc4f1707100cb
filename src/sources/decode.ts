import { isAscii, isUtf8 } from 'node:buffer';
import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { errnoOf, InputError, messageOf } from '../errors.js';

// Bytes -> text for every reader, in bounded chunks. Strict: a file that is not valid in its
// declared encoding, or holds NUL bytes (binary data), cannot be read at all (never
// guess, never hide). The error names the line where the first bad byte sits.

const ENCODING_LABELS: Record<string, string> = {
  utf8: 'utf-8',
  'utf-8': 'utf-8',
  latin1: 'windows-1252',
  'iso-8859-1': 'windows-1252',
  'windows-1252': 'windows-1252',
  cp1252: 'windows-1252',
  'utf-16le': 'utf-16le',
  'utf-16be': 'utf-16be',
};

const UTF16 = new Set(['utf-16le', 'utf-16be']);

export interface DecodeOptions {
  /** The file as shown in messages (relative to the export directory). */
  file: string;
  encoding: string;
  /** Called with the number of bytes read so far (progress). */
  onBytes?: (bytes: number) => void;
}

function countNewlines(text: string, end = text.length): number {
  let count = 0;
  for (let index = text.indexOf('\n'); index !== -1 && index < end; index = text.indexOf('\n', index + 1)) count += 1;
  return count;
}

/** Yields the decoded text of a file chunk by chunk; throws InputError for undecodable or binary content. */
export async function* decodeFile(absolutePath: string, options: DecodeOptions): AsyncGenerator<string> {
  for await (const chunk of checkedChunks(absolutePath, await withBomEncoding(absolutePath, options))) yield chunk.text;
}

/**
 * A UTF-16 byte-order mark decides the encoding: spreadsheet programs save "Unicode text" as
 * UTF-16 with a BOM, and no other encoding the tool reads starts with those bytes.
 */
async function withBomEncoding(absolutePath: string, options: DecodeOptions): Promise<DecodeOptions> {
  const head = await firstBytes(absolutePath, 2);
  if (head[0] === 0xff && head[1] === 0xfe) return { ...options, encoding: 'utf-16le' };
  if (head[0] === 0xfe && head[1] === 0xff) return { ...options, encoding: 'utf-16be' };
  return options;
}

/** Up to `count` bytes from the start of a file; none if it cannot be read (the read that follows reports that). */
async function firstBytes(absolutePath: string, count: number): Promise<Buffer> {
  try {
    const handle = await open(absolutePath, 'r');
    try {
      const { bytesRead, buffer } = await handle.read(Buffer.alloc(count), 0, count, 0);
      return buffer.subarray(0, bytesRead);
    } finally {
      await handle.close();
    }
  } catch {
    return Buffer.alloc(0);
  }
}

/**
 * Yields UTF-8 bytes: the file's own chunks when it is UTF-8 (csv-parse works on bytes; handing
 * it strings costs a third of its speed), else the decoded text re-encoded. Checked like decodeFile.
 */
export async function* utf8Chunks(absolutePath: string, declared: DecodeOptions): AsyncGenerator<Buffer> {
  const options = await withBomEncoding(absolutePath, declared);
  if (labelOf(options.encoding) === 'utf-8') {
    yield* checkedUtf8Bytes(absolutePath, options);
    return;
  }
  for await (const chunk of checkedChunks(absolutePath, options))
    yield chunk.utf8 ? chunk.bytes : Buffer.from(chunk.text, 'utf8');
}

function labelOf(encoding: string): string {
  return ENCODING_LABELS[encoding.toLowerCase()] ?? encoding;
}

/** Bytes at the end of `bytes` that start a UTF-8 sequence the chunk does not complete. */
export function incompleteTail(bytes: Buffer): number {
  for (let back = 1; back <= Math.min(3, bytes.length); back += 1) {
    const byte = bytes[bytes.length - back] as number;
    if ((byte & 0xc0) === 0x80) continue;
    const need = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
    return need > back ? back : 0;
  }
  return 0;
}

/**
 * UTF-8 files: the same checks as checkedChunks on the bytes themselves (isUtf8, a NUL byte),
 * without decoding the whole file to strings that csv-parse never uses (measured). At
 * the first problem the file is read again by checkedChunks, which throws the located error.
 */
async function* checkedUtf8Bytes(absolutePath: string, options: DecodeOptions): AsyncGenerator<Buffer> {
  let carry: Buffer = Buffer.alloc(0);
  let bytes = 0;
  let clean = true;
  const stream = createReadStream(absolutePath, { highWaterMark: 256 * 1024 });
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      bytes += chunk.length;
      const joined = carry.length > 0 ? Buffer.concat([carry, chunk]) : chunk;
      const cut = joined.length - incompleteTail(joined);
      const whole = joined.subarray(0, cut);
      if (whole.includes(0) || !isUtf8(whole)) {
        clean = false;
        break;
      }
      carry = joined.subarray(cut);
      options.onBytes?.(bytes);
      if (chunk.length > 0) yield whole;
    }
    if (carry.length > 0) clean = false;
  } catch {
    clean = false;
  } finally {
    stream.destroy();
  }
  if (clean) return;
  for await (const chunk of checkedChunks(absolutePath, options)) void chunk;
  throw new InputError(options.file, undefined, `is not valid ${options.encoding} text.`, 'input_bad_encoding');
}

/** Text decoded as one byte per character whose every other character is NUL: UTF-16 without a BOM. */
function looksLikeUtf16(text: string): boolean {
  const sample = text.slice(0, 400);
  let nul = 0;
  for (let index = 0; index < sample.length; index += 1) if (sample.charCodeAt(index) === 0) nul += 1;
  return sample.length >= 4 && nul * 3 >= sample.length;
}

async function* checkedChunks(
  absolutePath: string,
  options: DecodeOptions,
): AsyncGenerator<{ text: string; bytes: Buffer; utf8: boolean }> {
  const label = labelOf(options.encoding);
  if (label === 'windows-1252') await refuseUtf8AsSingleByte(absolutePath, options);
  const decoder = new TextDecoder(label, { fatal: true, ignoreBOM: false });
  const checkNul = !UTF16.has(label);
  let linesBefore = 0;
  let bytes = 0;
  const stream = createReadStream(absolutePath, { highWaterMark: 256 * 1024 });
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      bytes += chunk.length;
      let text: string;
      try {
        text = decoder.decode(chunk, { stream: true });
      } catch (error) {
        const loose = new TextDecoder(label).decode(chunk);
        const at = linesBefore + countNewlines(loose, Math.max(0, loose.indexOf('\uFFFD'))) + 1;
        throw new InputError(
          options.file,
          at,
          `is not valid ${options.encoding} text. If the export uses another encoding (latin1, windows-1252), set ` +
            `"encoding" in the mapping file.`,
          'input_bad_encoding',
          error,
        );
      }
      if (checkNul) {
        const nul = text.indexOf('\u0000');
        if (nul !== -1) {
          throw new InputError(
            options.file,
            linesBefore + countNewlines(text, nul) + 1,
            looksLikeUtf16(text)
              ? 'looks like UTF-16 text without a byte-order mark; save it as UTF-8 (or as UTF-16 with a ' +
                  'byte-order mark, "Unicode text"), or set "encoding": "utf-16le" in the mapping file.'
              : 'holds binary data (a NUL byte); an export file must be CSV, JSON or NDJSON text.',
            'input_binary',
          );
        }
      }
      linesBefore += countNewlines(text);
      options.onBytes?.(bytes);
      if (text.length > 0 || chunk.length > 0) yield { text, bytes: chunk, utf8: label === 'utf-8' };
    }
    const rest = decoder.decode();
    if (rest.length > 0) yield { text: rest, bytes: Buffer.alloc(0), utf8: false };
  } catch (error) {
    if (error instanceof InputError) throw error;
    if (error instanceof TypeError) {
      throw new InputError(
        options.file,
        linesBefore + 1,
        `ends inside a multi-byte character: not valid ${options.encoding} text.`,
        'input_bad_encoding',
        error,
      );
    }
    const code = errnoOf(error);
    throw new InputError(
      options.file,
      undefined,
      `cannot be read (${code ?? messageOf(error)}).`,
      'input_unreadable',
      error,
    );
  } finally {
    stream.destroy();
  }
}

/**
 * Whether a file is UTF-8 holding at least one multi-byte character (not plain ASCII, which reads the same in every
 * encoding the tool takes). Stops at the first chunk that is not UTF-8: a real windows-1252 file with accents
 * stops there.
 */
async function isMultiByteUtf8(absolutePath: string): Promise<boolean> {
  let carry: Buffer = Buffer.alloc(0);
  let multiByte = false;
  const stream = createReadStream(absolutePath, { highWaterMark: 256 * 1024 });
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      const joined = carry.length > 0 ? Buffer.concat([carry, chunk]) : chunk;
      const cut = joined.length - incompleteTail(joined);
      const whole = joined.subarray(0, cut);
      if (!isUtf8(whole)) return false;
      multiByte ||= !isAscii(whole);
      carry = joined.subarray(cut);
    }
  } catch {
    // Unreadable: the read that follows names the cause.
    return false;
  } finally {
    stream.destroy();
  }
  return multiByte && carry.length === 0;
}

/** The 1-based line of the first byte from 0x80 up, and that line's bytes (at most 4 KB of them). */
async function firstNonAsciiLine(absolutePath: string): Promise<{ line: number; bytes: Buffer }> {
  let line = 1;
  const stream = createReadStream(absolutePath, { highWaterMark: 256 * 1024 });
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      const at = isAscii(chunk) ? -1 : chunk.findIndex((byte) => byte >= 0x80);
      const end = at === -1 ? chunk.length : at;
      for (let index = chunk.indexOf(10); index !== -1 && index < end; index = chunk.indexOf(10, index + 1)) line += 1;
      if (at === -1) continue;
      const start = chunk.lastIndexOf(10, at) + 1;
      const stop = chunk.indexOf(10, at);
      return { line, bytes: chunk.subarray(start, Math.min(stop === -1 ? chunk.length : stop, start + 4096)) };
    }
  } finally {
    stream.destroy();
  }
  return { line, bytes: Buffer.alloc(0) };
}

/** The word around the first non-ASCII character of a line, as UTF-8 text: what the message shows. */
function wordAround(text: string): string {
  const chars = [...text];
  const at = Math.max(
    0,
    chars.findIndex((char) => char.charCodeAt(0) >= 0x80),
  );
  const separator = /[\s,;|"]/;
  let start = at;
  let end = at + 1;
  while (start > 0 && at - start < 20 && !separator.test(chars[start - 1] ?? ' ')) start -= 1;
  while (end < chars.length && end - at < 20 && !separator.test(chars[end] ?? ' ')) end += 1;
  return chars.slice(start, end).join('');
}

/**
 * A file declared in a single-byte encoding (latin1, windows-1252) whose bytes are UTF-8 with multi-byte
 * characters: read as declared, "Café" would be sent as "CafÃ©" in every record. It cannot be read as declared:
 * refused before any record is read, at the line of the first such character. (Real windows-1252 text is almost
 * never valid UTF-8: an accented letter is followed by an ASCII one, never by the byte a UTF-8 sequence needs.)
 */
async function refuseUtf8AsSingleByte(absolutePath: string, options: DecodeOptions): Promise<void> {
  if (!(await isMultiByteUtf8(absolutePath))) return;
  const { line, bytes } = await firstNonAsciiLine(absolutePath);
  const word = wordAround(bytes.toString('utf8'));
  const misread = new TextDecoder('windows-1252').decode(Buffer.from(word, 'utf8'));
  throw new InputError(
    options.file,
    line,
    `is declared "encoding": "${options.encoding}" in the mapping file, but its bytes are UTF-8: read as ` +
      `${options.encoding}, ${JSON.stringify(word)} would be sent as ${JSON.stringify(misread)}. Remove "encoding" ` +
      `from the mapping file (UTF-8 is the default) or set it to "utf-8".`,
    'input_encoding_mismatch',
  );
}
