import { InputError } from '../errors.js';

// Lines that end in a carriage return alone (CR, as classic Mac OS and some export tools write them): the readers
// split lines at LF (CSV: LF or CR LF), so such a file reads as one line: a CSV header of every row's cells (one
// unknown column per cell) or one NDJSON line of every record. Said as what it is, from the file's first read.

/** Throws an InputError when a file's first read holds a carriage return and no line feed. */
export function refuseCrOnlyLines(head: Buffer | string, file: string): void {
  const cr = typeof head === 'string' ? head.indexOf('\r') : head.indexOf(0x0d);
  if (cr === -1) return;
  const lf = typeof head === 'string' ? head.indexOf('\n') : head.indexOf(0x0a);
  if (lf !== -1) return;
  throw new InputError(
    file,
    1,
    'its lines end with a carriage return alone (CR), not with a line feed (LF) or CR LF, so it would read as one ' +
      `line; save it with LF or CR LF line endings (for example: tr '\\r' '\\n' < ${file} > fixed-${file}).`,
    'input_line_endings',
  );
}
