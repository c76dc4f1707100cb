import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { InputError } from '../../src/errors.js';
import { openShape, type ShapedExport, type ShapeSource } from '../../src/shape/index.js';
import { jsonText } from '../../src/shape/json-text.js';
import { readCsv, readNdjson } from '../../src/sources/index.js';

// The sources' tables hold exactly what the tool's own readers read from the legacy files, whatever the load goes
// through (DuckDB's CSV reader over a canonical file): every value byte for byte, an empty or absent value NULL, the
// file and the line where each record starts, and the rows in the files' order (a view's own order within an account
// comes from it). The oracle is the tool's reader, run here on the same files, plus values written by hand.

const roots: string[] = [];
afterAll(() => roots.forEach((root) => rmSync(root, { recursive: true, force: true })));

function scratch(): string {
  const dir = mkdtempSync(join(tmpdir(), 'shape-exact-'));
  roots.push(dir);
  return dir;
}

const CSV: Omit<ShapeSource, 'table' | 'glob'> = {
  several: false,
  format: undefined,
  encoding: 'utf8',
  delimiter: ',',
  header: true,
};

const QUOTES = '"'.repeat(300_000);

/** UTF-8 with a BOM, CRLF, and every case a canonical file must carry unchanged. */
const NASTY = [
  '\ufeffID,TEXT,OTHER',
  '1,"He said ""hi""",plain',
  '2,"multi\r\nline\nvalue",',
  '3,"",""',
  '4,"""",x',
  '5,"\ufeffopens with a byte order mark",NULL',
  '6, lead and trail ,\\N',
  '7,"a,b",tab\there',
  '',
  `8,"${QUOTES}${QUOTES}",\u2028`,
  '9,"\ufeff",😀 \u00a0',
  '10,\'single\',"last, without a newline"',
].join('\r\n');

/** Windows-1252: £, €, curly quotes and é are single bytes that must arrive as those characters. */
const WINDOWS_1252 = Buffer.from('ID,TEXT\r\n1,"Caf\xe9 \xa3152.85 \x80"\r\n2,"\x93quoted\x94"\r\n', 'latin1');

const NDJSON = '{"ID":"1","N":1.10,"O":{"a":[1,2.50]},"E":"","Z":null}\n{"ID":"2","B":true,"T":"\ufeffx"}\n';

interface TableRow {
  table: string;
  file: string;
  line: number;
  values: Array<[string, string | null]>;
}

/** What the tool's CSV reader reads: the header's names, then each row's cells with '' as NULL. */
async function csvExpected(dir: string, table: string, file: string, source: ShapeSource): Promise<TableRow[]> {
  const rows: TableRow[] = [];
  let header: string[] | undefined;
  for await (const row of readCsv(join(dir, file), { file, encoding: source.encoding, delimiter: source.delimiter })) {
    if (header === undefined) header = row.cells;
    else {
      const names = header;
      const values = row.cells.map((cell, index): [string, string | null] => [names[index] ?? '', cell || null]);
      rows.push({ table, file, line: row.line, values });
    }
  }
  return rows;
}

async function ndjsonExpected(dir: string, table: string, file: string, columns: string[]): Promise<TableRow[]> {
  const rows: TableRow[] = [];
  for await (const record of readNdjson(join(dir, file), { file, encoding: 'utf8' })) {
    const values = columns.map((column): [string, string | null] => [column, jsonText(record.object[column]) || null]);
    rows.push({ table, file, line: record.line, values });
  }
  return rows;
}

async function tableRows(shaped: ShapedExport, expected: TableRow[]): Promise<TableRow[]> {
  const rows = await shaped.sourceRows(expected.map(({ file, line }) => ({ file, line })));
  return rows.map(({ table, file, line, values }) => ({ table, file, line, values }));
}

function open(dir: string, sources: ShapeSource[], view: string, memory = 64e6): Promise<ShapedExport> {
  const temp = scratch();
  writeFileSync(join(temp, 'shape.sql'), view);
  return openShape({
    exportDir: dir,
    shapeFile: join(temp, 'shape.sql'),
    shapeName: 'shape.sql',
    sources,
    limits: { memory: { bytes: memory, source: 'flag' }, tempDisk: { bytes: 1e9, source: 'flag' } },
    tempRoot: temp,
  });
}

describe('the sources as loaded', () => {
  it('hold every value of awkward files exactly as the tool reads them, in the files order', async () => {
    const dir = scratch();
    writeFileSync(join(dir, 'NASTY.csv'), NASTY);
    writeFileSync(join(dir, 'OLD_1252.csv'), WINDOWS_1252);
    writeFileSync(join(dir, 'rows.ndjson'), NDJSON);
    const sources: ShapeSource[] = [
      { ...CSV, table: 'nasty', glob: 'NASTY.csv' },
      { ...CSV, table: 'old', glob: 'OLD_*.csv', encoding: 'windows-1252' },
      { ...CSV, table: 'json', glob: '*.ndjson', format: 'ndjson' },
    ];
    // Every row of the nasty file under one key: the view's own order is the table's.
    const view =
      "CREATE VIEW accounts AS SELECT 'K' AS external_account_number, TEXT AS billing_name, _file, _line FROM nasty;";
    const shaped = await open(dir, sources, view);
    try {
      const expected = [
        ...(await csvExpected(dir, 'nasty', 'NASTY.csv', sources[0] as ShapeSource)),
        ...(await csvExpected(dir, 'old', 'OLD_1252.csv', sources[1] as ShapeSource)),
        ...(await ndjsonExpected(dir, 'json', 'rows.ndjson', ['ID', 'N', 'O', 'E', 'Z', 'B', 'T'])),
      ];
      expect(expected).toHaveLength(10 + 2 + 2);
      expect(await tableRows(shaped, expected)).toEqual(expected);

      const cell = (table: string, line: number, column: string) =>
        expected.find((row) => row.table === table && row.line === line)?.values.find(([name]) => name === column)?.[1];
      // Written by hand, so that the reader and the load cannot agree on a wrong value. A quoted newline makes a record
      // span lines: the second record starts on line 3 and the third on line 6.
      expect(cell('nasty', 2, 'ID')).toBe('1');
      expect(cell('nasty', 2, 'TEXT')).toBe('He said "hi"');
      expect(cell('nasty', 3, 'TEXT')).toBe('multi\r\nline\nvalue');
      expect(cell('nasty', 3, 'OTHER')).toBeNull();
      expect([cell('nasty', 6, 'TEXT'), cell('nasty', 6, 'OTHER')]).toEqual([null, null]);
      expect(cell('nasty', 7, 'TEXT')).toBe('"');
      expect(cell('nasty', 8, 'TEXT')).toBe('\ufeffopens with a byte order mark');
      expect(cell('nasty', 8, 'OTHER')).toBe('NULL');
      expect(cell('nasty', 9, 'TEXT')).toBe(' lead and trail ');
      expect(cell('nasty', 9, 'OTHER')).toBe('\\N');
      expect(cell('nasty', 12, 'TEXT')).toBe('"'.repeat(300_000));
      expect(cell('nasty', 13, 'TEXT')).toBe('\ufeff');
      expect(cell('nasty', 14, 'OTHER')).toBe('last, without a newline');
      expect(cell('old', 2, 'TEXT')).toBe('Café £152.85 €');
      expect(cell('old', 3, 'TEXT')).toBe('\u201cquoted\u201d');
      expect(cell('json', 1, 'O')).toBe('{"a":[1,2.50]}');
      expect([cell('json', 1, 'N'), cell('json', 1, 'E'), cell('json', 1, 'Z'), cell('json', 1, 'B')]).toEqual([
        '1.10',
        null,
        null,
        null,
      ]);
      expect(cell('json', 2, 'T')).toBe('\ufeffx');

      const view = shaped.views.find((each) => each.kind === 'accounts');
      const rows = [];
      for await (const batch of shaped.rows(view as NonNullable<typeof view>, 'external_account_number'))
        rows.push(...batch);
      const nasty = expected.filter((row) => row.table === 'nasty');
      expect(rows.map((row) => row.line)).toEqual(nasty.map((row) => row.line));
      // As a view hands them on (NULL as ''), a value opening with U+FEFF included.
      expect(rows.map((row) => row.cells[1])).toEqual(nasty.map((row) => row.values[1]?.[1] ?? ''));
    } finally {
      await shaped.close();
    }
  });

  it('hold the legacy CIS fixture exactly as the tool reads it, and leave no canonical file behind', async () => {
    const dir = join(import.meta.dirname, '..', '..', 'fixtures', 'legacy-cis');
    const config = JSON.parse(readFileSync(join(dir, 'migrate.config.json'), 'utf8')) as {
      sources: Record<string, { file: string; encoding?: string; delimiter?: string }>;
    };
    const sources = Object.entries(config.sources).map(([table, source]): ShapeSource => ({
      ...CSV,
      table,
      glob: source.file,
      ...source,
    }));
    const files = readdirSync(dir);
    const view =
      'CREATE VIEW accounts AS SELECT ACCOUNT_NO AS external_account_number, _file, _line FROM cis_accounts;';
    const shaped = await open(dir, sources, view);
    try {
      const expected: TableRow[] = [];
      for (const source of sources) {
        const file = files.find((name) => name.startsWith(source.glob.replace('*', '').split('.')[0] ?? '-'));
        expected.push(...(await csvExpected(dir, source.table, file ?? source.glob, source)));
      }
      expect(expected.length).toBeGreaterThan(1500);
      const actual: TableRow[] = [];
      for (const source of sources)
        actual.push(
          ...(await tableRows(
            shaped,
            expected.filter((row) => row.table === source.table),
          )),
        );
      const order = (row: TableRow) => `${row.table}:${row.file}:${String(row.line).padStart(6, '0')}`;
      expect(actual.sort((a, b) => order(a).localeCompare(order(b)))).toEqual(
        expected.sort((a, b) => order(a).localeCompare(order(b))),
      );
      expect(shaped.sources.map((source) => source.rows)).toEqual(
        sources.map((source) => expected.filter((row) => row.table === source.table).length),
      );
      const temp = readdirSync(roots.at(-1) ?? '', { recursive: true }).map(String);
      expect(temp.filter((name) => name.endsWith('.csv'))).toEqual([]);
    } finally {
      await shaped.close();
    }
  });

  it('says which file the engine could not load, and the setting to raise, when it runs out of memory', async () => {
    const dir = scratch();
    writeFileSync(join(dir, 'NASTY.csv'), NASTY);
    const view = 'CREATE VIEW accounts AS SELECT ID AS external_account_number, _file, _line FROM nasty;';
    const error = await open(dir, [{ ...CSV, table: 'nasty', glob: 'NASTY.csv' }], view, 1e6).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(InputError);
    expect((error as InputError).message).toMatch(
      /^source nasty \(NASTY\.csv\): the shape engine ran out of memory: it may use 1MB \(--shape-memory 1MB\)\. .*--shape-memory 2MB/,
    );
    expect(readdirSync(roots.at(-1) ?? '')).toEqual(['shape.sql']);
  });
});
