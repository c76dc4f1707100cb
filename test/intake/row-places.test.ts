import { appendFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadMigrateConfig } from '../../src/config/index.js';
import { InputError } from '../../src/errors.js';
import { openExportInOrder } from '../../src/intake/export-in-order.js';
import { openExport } from '../../src/intake/index.js';
import { validateExport } from '../../src/intake/validate-export.js';
import { jsonReport } from '../../src/commands/validate/validation-report.js';
import { proveOrder } from '../../src/intake/order-proof.js';
import { placeRows } from '../../src/intake/row-places.js';
import { openScratchFile } from '../../src/intake/scratch-file.js';
import { findExportFiles, readCsv, type CsvRow } from '../../src/sources/index.js';
import { accountKeyOf, compareKeys } from '../../src/sources/key-order.js';
import { readPlacedCsv } from '../../src/sources/placed-rows.js';
import { indexRows, MAX_KEY_BYTES, sortedByKey } from '../../src/sources/row-index.js';

// Files out of order read by their rows' places (sources/row-index.ts, intake/indexed-file.ts): the same rows, cells
// and lines as the full read, in external account number order (rows of one account in file order), however many
// runs; and every file the scan cannot place exactly, or whose bytes the full read refuses, left to the sort on disk.

const base = mkdtempSync(path.join(os.tmpdir(), 'migrate-places-test-'));
afterAll(() => rmSync(base, { recursive: true, force: true }));

let seed = 29;
const random = (): number => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
const pick = <T>(items: T[]): T => items[Math.floor(random() * items.length)] as T;

describe('sortedByKey (radix sort of key bytes)', () => {
  it('gives the order of compareKeys, rows of one key in the order they came, whatever the keys hold', () => {
    const parts = ['A', 'a', '0', '9', '-', 'é', 'ÿ', '\ue000', '\u{1f600}', '\u0001', ' ', '~'];
    const keys = Array.from({ length: 3000 }, () =>
      Array.from({ length: Math.floor(random() * 5) }, () => pick(parts)).join(''),
    );
    const matrix = new Uint8Array(keys.length * MAX_KEY_BYTES);
    let width = 0;
    keys.forEach((key, row) => {
      const bytes = Buffer.from(key, 'utf8');
      matrix.set(bytes, row * MAX_KEY_BYTES);
      width = Math.max(width, bytes.length);
    });
    const order = sortedByKey(matrix, keys.length, width, [new Uint32Array(keys.length), new Uint32Array(keys.length)]);
    const expected = keys.map((_, row) => row).sort((a, b) => compareKeys(keys[a] as string, keys[b] as string));
    expect([...order]).toEqual(expected);
    // UTF-16 order differs here (a key above U+FFFF against U+E000): the case is real.
    expect([...keys].sort()).not.toEqual(expected.map((row) => keys[row]));
  });
});

async function fullReadWithHeader(file: string, encoding = 'utf-8'): Promise<CsvRow[]> {
  const rows: CsvRow[] = [];
  for await (const row of readCsv(file, { file: path.basename(file), encoding, delimiter: ',' })) rows.push(row);
  return rows;
}

/** A file as the full read gives it: its data rows (the header left out), in file order. */
async function fullRead(file: string, encoding = 'utf-8'): Promise<CsvRow[]> {
  return (await fullReadWithHeader(file, encoding)).slice(1);
}

/** The file's rows read at their places, after an index of runs of `runRows` rows. */
async function placedRead(file: string, runRows: number, encoding = 'utf-8'): Promise<CsvRow[]> {
  const scratch = openScratchFile(base, 'places');
  try {
    const input = { absolutePath: file, delimiter: ',', encoding, keyIndex: 0 };
    const result = await indexRows(input, scratch.fd, undefined, runRows);
    if (result.order !== 'indexed') throw new Error(result.reason);
    const places = { fd: scratch.fd, runs: result.runs, rows: result.rows };
    const rows: CsvRow[] = [];
    const options = { file: path.basename(file), encoding, delimiter: ',' };
    for await (const batch of readPlacedCsv(file, options, places)) rows.push(...batch);
    // The header first, as the full read gives it.
    expect(rows.shift()).toEqual((await fullReadWithHeader(file, encoding))[0]);
    return rows;
  } finally {
    scratch.close();
  }
}

/** What reading by places must give: the full read's rows by key (a row without one first), stable. */
const inKeyOrder = (rows: CsvRow[]): CsvRow[] =>
  [...rows].sort((a, b) => compareKeys(accountKeyOf(a.cells[0] ?? '') ?? '', accountKeyOf(b.cells[0] ?? '') ?? ''));

function awkwardCsv(rows: number, newline: string): string {
  const cells = ['', 'plain', '"two\nlines"', '"a ""quoted"" word"', '"comma, inside"', 'ünïcødé', '€100', '"\r\n"'];
  const keys = ['A1', 'A10', 'A2', 'B1', ' A1 ', '"A2"', 'é1', 'Z', '""', ''];
  const lines = ['external_account_number,body,other'];
  for (let row = 0; row < rows; row += 1) {
    if (row % 97 === 13) lines.push('');
    lines.push([pick(keys), pick(cells), pick(cells)].join(','));
  }
  return lines.join(newline);
}

describe('rows read at their places', () => {
  it.each([
    ['LF, one run', '\n', 100_000],
    ['CRLF, many runs', '\r\n', 7],
    ['LF, a run per row', '\n', 1],
  ])('are the full read in key order, with its cells and lines (%s)', async (_, newline, runRows) => {
    const file = path.join(mkdtempSync(path.join(base, 'file-')), 'notes.csv');
    // A byte-order mark, and a last row without its newline.
    writeFileSync(file, `\ufeff${awkwardCsv(600, newline)}`);
    const full = await fullRead(file);
    expect(full.length).toBeGreaterThan(590);
    expect(await placedRead(file, runRows)).toEqual(inKeyOrder(full));
  });

  it('reads a single-byte file as the full read decodes it', async () => {
    const file = path.join(mkdtempSync(path.join(base, 'file-')), 'notes.csv');
    const text = 'external_account_number,body\nB2,Caf\xe9\nA1,na\xefve\nB2,"\xa3 12,\n50"\nA1,last';
    writeFileSync(file, Buffer.from(text, 'latin1'));
    const full = await fullRead(file, 'windows-1252');
    expect(full.map((row) => row.cells[1])).toEqual(['Café', 'naïve', '£ 12,\n50', 'last']);
    expect(await placedRead(file, 2, 'windows-1252')).toEqual(inKeyOrder(full));
  });
});

const ACCOUNTS = 'external_account_number,account_type,billing_address.country,account_billing_options.period_length\n';
const NOTES = 'external_account_number,body\n';

function exportDir(files: Record<string, string | Buffer>): string {
  const dir = mkdtempSync(path.join(base, 'export-'));
  for (const [name, content] of Object.entries(files)) writeFileSync(path.join(dir, name), content);
  return dir;
}

const accounts = `${ACCOUNTS}A1,DOMESTIC,GB,MONTHLY\nA2,DOMESTIC,GB,MONTHLY\nA3,DOMESTIC,GB,MONTHLY\n`;

describe('which files out of order are read by their rows places', () => {
  // The odd row comes after the first row out of order (the proof stops there) and after the first 256 KiB (the
  // header's read checks and parses those).
  const out = `${NOTES}A2,b\nA1,a\n${'A3,padding\n'.repeat(30_000)}`;
  it.each([
    ['a file out of order that the scan reads exactly', `${out}A3,c\n`, 'placed'],
    ['a quote inside an unquoted field', `${out}A3,c"d\n`, 'sorted'],
    ['a NUL byte', `${out}A3,c\u0000\n`, 'sorted'],
    ['bytes that are not UTF-8', Buffer.from(`${out}A3,caf\xe9\n`, 'latin1'), 'sorted'],
    ['an account number longer than the places hold', `${out}${'A'.repeat(40)},c\n`, 'sorted'],
  ])('%s', async (_, notes, how) => {
    const dir = exportDir({ 'accounts.csv': accounts, 'notes.csv': notes });
    const config = await loadMigrateConfig({ cwd: dir, exportDir: dir, env: { MIGRATE_SUPPLIER: 'ACME' } });
    const { files } = await findExportFiles(dir, undefined);
    const proof = await proveOrder(files, config);
    expect([...proof.toSort]).toEqual(['notes.csv']);
    const places = await placeRows(files, proof, config, { scratchDir: base });
    places.close();
    expect({ placed: [...places.indexes.keys()], sorted: [...places.toSort] }).toEqual(
      how === 'placed' ? { placed: ['notes.csv'], sorted: [] } : { placed: [], sorted: ['notes.csv'] },
    );
  });

  it('names bytes the full read refuses at their line, as the sort on disk does', async () => {
    const dir = exportDir({
      'accounts.csv': accounts,
      'notes.csv': Buffer.from(`${NOTES}A2,b\nA1,a\n${'A3,padding\n'.repeat(30_000)}A3,caf\xe9\n`, 'latin1'),
    });
    const config = await loadMigrateConfig({ cwd: dir, exportDir: dir, env: { MIGRATE_SUPPLIER: 'ACME' } });
    const reading = (async () => {
      const reader = await openExportInOrder(dir, config, { today: '2026-11-22', scratchDir: base });
      try {
        for await (const entry of reader.entries()) void entry;
      } finally {
        await reader.close();
      }
    })();
    await expect(reading).rejects.toThrow(InputError);
    await expect(reading).rejects.toThrow(/^notes\.csv:30004: is not valid utf-?8 text/);
  });

  it('stops, naming the file as changed, when a file read by its places changes after it was scanned', async () => {
    const dir = exportDir({ 'accounts.csv': accounts, 'notes.csv': `${NOTES}A2,b\nA1,a\nA3,c\n` });
    const config = await loadMigrateConfig({ cwd: dir, exportDir: dir, env: { MIGRATE_SUPPLIER: 'ACME' } });
    const reader = await openExportInOrder(dir, config, { today: '2026-11-22', scratchDir: base });
    appendFileSync(path.join(dir, 'notes.csv'), 'A1,written after the scan\n');
    const reading = (async () => {
      for await (const entry of reader.entries()) void entry;
    })();
    await expect(reading).rejects.toMatchObject({ code: 'input_changed_while_read', file: 'notes.csv' });
    await reader.close();
  });

  it('reads an export with a file placed and a file sorted whole as the scratch join reads it, errors at their lines', async () => {
    const long = 'L'.repeat(40);
    const dir = exportDir({
      'accounts.csv': `${ACCOUNTS}A3,DOMESTIC,GB,MONTHLY\nA1,DOMESTIC,GB,MONTHLY\nA2,NOT_A_TYPE,GB,MONTHLY\n`,
      'customers.csv':
        'external_account_number,given_name,family_name,mobile\n' +
        'A2,Bo,Two,\nA1,Ada,One,+447911123456\nA3,Cy,Three,not a phone\nA1,Di,One,\n',
      // Placed? No: an account number longer than the places hold sends it to the sort on disk.
      'notes.csv': `${NOTES}A3,third\n${long},orphan\nA1,first\n,no key\nA1,second\n`,
    });
    const config = await loadMigrateConfig({ cwd: dir, exportDir: dir, env: { MIGRATE_SUPPLIER: 'ACME' } });
    const report = async (reader: Parameters<typeof validateExport>[0]): Promise<unknown> => {
      try {
        const validation = await validateExport(reader);
        const chunks: string[] = [];
        for await (const chunk of jsonReport(validation)) chunks.push(chunk);
        validation.close();
        return JSON.parse(chunks.join('')) as unknown;
      } finally {
        await reader.close();
      }
    };
    const { files } = await findExportFiles(dir, undefined);
    const places = await placeRows(files, await proveOrder(files, config), config, { scratchDir: base });
    places.close();
    expect({ placed: [...places.indexes.keys()].sort(), sorted: [...places.toSort] }).toEqual({
      placed: ['accounts.csv', 'customers.csv'],
      sorted: ['notes.csv'],
    });
    const inOrder = await report(await openExportInOrder(dir, config, { today: '2026-11-22', scratchDir: base }));
    const scratch = await report(await openExport(dir, config, { today: '2026-11-22', scratchDir: base }));
    expect(inOrder).toEqual(scratch);
    expect(JSON.stringify(inOrder)).toMatch(/"file":"customers.csv","line":4/);
  });
});
