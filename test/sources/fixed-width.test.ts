import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { InputError } from '../../src/errors.js';
import { readFixedWidth, type FixedRow } from '../../src/sources/index.js';

// Fixed-width lines (docs/export-format.md "Sources"): columns in characters of the encoding, values untrimmed, the
// columns past a line's end NULL, a line ending inside a column refused at its line; lines counted as in every file,
// a header line among them ("header": true skips it).

const root = mkdtempSync(join(tmpdir(), 'fixed-width-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const COLUMNS = [
  { name: 'ID', start: 1, width: 3 },
  { name: 'NAME', start: 5, width: 4 },
  { name: 'TAIL', start: 9, width: 2 },
];

async function read(bytes: Buffer | string, encoding = 'utf8', header = false): Promise<FixedRow[]> {
  const path = join(root, `f${Math.random().toString(36).slice(2)}.dat`);
  writeFileSync(path, bytes);
  const rows: FixedRow[] = [];
  const options = { file: 'f.dat', encoding, columns: COLUMNS, setting: 's.columns', header };
  for await (const batch of readFixedWidth(path, options)) rows.push(...batch);
  return rows;
}

async function refusal(bytes: string, header = false): Promise<InputError> {
  const error = await read(bytes, 'utf8', header).then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(InputError);
  return error as InputError;
}

describe('fixed-width lines', () => {
  it('cuts each line at its columns, in characters, leaving gaps and text past the layout unread', async () => {
    const text = '\ufeff001|Zoë TTextra\r\n\r\n002 😀, "xy\n004\n005 \t  ;  \n';
    expect(await read(text)).toEqual([
      { line: 1, cells: ['001', 'Zoë ', 'TT'] },
      { line: 3, cells: ['002', '😀, "', 'xy'] },
      { line: 4, cells: ['004', undefined, undefined] },
      { line: 5, cells: ['005', '\t  ;', '  '] },
    ]);
  });

  it('counts windows-1252 characters one byte each', async () => {
    const bytes = Buffer.from('001 £5é,AB\n', 'latin1');
    expect(await read(bytes, 'windows-1252')).toEqual([{ line: 1, cells: ['001', '£5é,', 'AB'] }]);
  });

  it('reads a last line without a line feed, and lines across the reads of a large file', async () => {
    const number = (index: number): string => String(index).padStart(6, '0');
    const lines = Array.from({ length: 40_000 }, (_, index) => `${number(index).slice(3)} é€😀Z${number(index)}`);
    const rows = await read(lines.join('\n'));
    expect(rows).toHaveLength(40_000);
    expect(rows[39_999]).toEqual({ line: 40_000, cells: ['999', 'é€😀Z', '03'] });
    const wrong = rows.filter(
      (row, index) =>
        row.line !== index + 1 ||
        row.cells.join('|') !== `${number(index).slice(3)}|é€😀Z|${number(index).slice(0, 2)}`,
    );
    expect(wrong).toEqual([]);
  });

  it('refuses a line that ends inside a column, at its line', async () => {
    const error = await refusal('001 Zoë TT\n\n002 Zo\n');
    expect(error.message).toBe(
      'f.dat:3: the line is 6 characters long and ends inside NAME (characters 5 to 8); a line holds each column of ' +
        'the layout (s.columns in the mapping file) in full, or ends before a column starts (the columns that start ' +
        "past its end are then NULL). Check that the line is whole and that the source's encoding and layout are the " +
        "file's.",
    );
    expect((await refusal('001 Zoë T')).line).toBe(1);
  });

  it('skips a first line that names the columns with a header, counting it', async () => {
    const text = '\ufeffID  Name\r\n001 Zoë TT\r\n\r\n002 Zo\r\n';
    expect(await read(text.replace('002 Zo', '002'), 'utf8', true)).toEqual([
      { line: 2, cells: ['001', 'Zoë ', 'TT'] },
      { line: 4, cells: ['002', undefined, undefined] },
    ]);
    expect(await read('ID  NAME', 'utf8', true)).toEqual([]);
    expect((await refusal(text, true)).line).toBe(4);
  });

  it('names the header setting where the first line ends inside a column, without a header', async () => {
    const error = await refusal('ID  Nam\n001 Zoë TT\n');
    expect([error.line, error.code]).toEqual([1, 'input_fixed_width_short']);
    expect(error.message).toContain(
      'f.dat:1: the line is 7 characters long and ends inside NAME (characters 5 to 8); ',
    );
    expect(error.message).toMatch(
      / A first line that names the columns is skipped with "header": true beside s\.columns\.$/,
    );
  });

  it('refuses a line longer than a record may be, at its line', async () => {
    const error = await refusal(`001 abcdef\n${'x'.repeat(4 * 1024 * 1024 + 1)}`);
    expect([error.line, error.code]).toEqual([2, 'input_unparseable']);
  });
});
