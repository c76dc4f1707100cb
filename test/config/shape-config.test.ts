import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadMigrateConfig } from '../../src/config/index.js';
import { UsageError } from '../../src/errors.js';

// The mapping file's `sources` and `shape` (docs/export-format.md "Shaping legacy files with SQL"): checked before
// anything is read, every mistake naming its key; the shape file found relative to the mapping file.

const roots: string[] = [];
afterAll(() => roots.forEach((root) => rmSync(root, { recursive: true, force: true })));

function configDir(file: unknown): string {
  const dir = mkdtempSync(join(tmpdir(), 'shape-config-'));
  roots.push(dir);
  writeFileSync(join(dir, 'migrate.config.json'), JSON.stringify(file));
  return dir;
}

async function problem(file: unknown): Promise<string> {
  const error = await loadMigrateConfig({ cwd: configDir(file), env: {} }).then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(UsageError);
  return (error as UsageError).message;
}

describe('sources and shape in the mapping file', () => {
  it('completes each source and finds the shape file beside the mapping file', async () => {
    const dir = configDir({
      encoding: 'windows-1252',
      sources: { cis: { file: 'CIS_*.csv' }, finance: { files: 'FIN_*.txt', format: 'csv', delimiter: '|' } },
      shape: 'sql/shape.sql',
    });
    const config = await loadMigrateConfig({ cwd: dir, env: {} });
    expect(config.shape).toEqual({
      file: join(dir, 'sql', 'shape.sql'),
      name: 'sql/shape.sql',
      sources: [
        {
          table: 'cis',
          glob: 'CIS_*.csv',
          several: false,
          format: undefined,
          encoding: 'windows-1252',
          delimiter: ',',
          header: true,
          quote: '"',
        },
        {
          table: 'finance',
          glob: 'FIN_*.txt',
          several: true,
          format: 'csv',
          encoding: 'windows-1252',
          delimiter: '|',
          header: true,
          quote: '"',
        },
      ],
    });
  });

  it('refuses sources without a shape, and a shape without sources', async () => {
    expect(await problem({ sources: { cis: { file: 'a.csv' } } })).toContain('shape: is required with "sources"');
    expect(await problem({ shape: 'shape.sql' })).toContain('sources: is required with "shape"');
  });

  it('refuses a source with both file and files, or neither, and a table named after a record kind', async () => {
    expect(await problem({ sources: { cis: { file: 'a', files: 'b' } }, shape: 's.sql' })).toContain(
      'give "file" (a glob matching one file) or "files"',
    );
    expect(await problem({ sources: { cis: {} }, shape: 's.sql' })).toContain('give "file"');
    expect(await problem({ sources: { Accounts: { file: 'a.csv' } }, shape: 's.sql' })).toContain(
      'is the name of a record kind',
    );
    expect(await problem({ sources: { 'bad name': { file: 'a.csv' } }, shape: 's.sql' })).toContain(
      'is not a table name such as legacy_accounts',
    );
    expect(await problem({ sources: { cis: { file: 'a.csv' } }, shape: 'shape.txt' })).toContain(
      'the shape file is a .sql file',
    );
  });

  it('completes the formats legacy systems write: no quoting, named columns without a header, fixed-width', async () => {
    const layout = [
      { name: 'VKONT', start: 1, width: 12 },
      { name: 'SORT_CODE', start: 13, width: 6 },
    ];
    const dir = configDir({
      sources: {
        sap: { file: 'SAP.csv', delimiter: ';', quote: false },
        sap_notes: { file: 'NOTES.csv', quote: "'" },
        items: { file: 'ITEMS.txt', format: 'csv', header: false, columns: ['VKONT', 'OPBEL'] },
        mandates: { file: 'MANDATES.dat', format: 'fixed', columns: layout },
      },
      shape: 'shape.sql',
    });
    const sources = (await loadMigrateConfig({ cwd: dir, env: {} })).shape?.sources;
    expect(
      sources?.map(({ table, quote, header, columns, layout: placed }) => ({ table, quote, header, columns, placed })),
    ).toEqual([
      { table: 'sap', quote: false, header: true, columns: undefined, placed: undefined },
      { table: 'sap_notes', quote: "'", header: true, columns: undefined, placed: undefined },
      { table: 'items', quote: '"', header: false, columns: ['VKONT', 'OPBEL'], placed: undefined },
      { table: 'mandates', quote: '"', header: false, columns: undefined, placed: layout },
    ]);
  });

  it('refuses options that do not go with the format, and a layout that does not fit, naming each setting', async () => {
    const shaped = (source: object) => ({ sources: { legacy: { file: 'L.dat', ...source } }, shape: 's.sql' });
    const fixed = (columns: unknown) => shaped({ format: 'fixed', columns });
    expect(
      await problem(
        fixed([
          { name: 'A', start: 1, width: 4 },
          { name: 'B', start: 4, width: 2 },
        ]),
      ),
    ).toContain('sources.legacy.columns.1: B (characters 4 to 5) overlaps A (characters 1 to 4).');
    expect(
      await problem(
        fixed([
          { name: 'B', start: 3, width: 2 },
          { name: 'A', start: 1, width: 3 },
        ]),
      ),
    ).toContain('sources.legacy.columns.1: A (characters 1 to 3) overlaps B (characters 3 to 4).');
    expect(await problem(fixed([{ name: 'A', start: 0, width: 2 }]))).toContain(
      "sources.legacy.columns.0.start: start is the column's first character, a whole number counted from 1",
    );
    expect(await problem(fixed([{ name: 'A', start: 1, width: 0 }]))).toContain(
      'sources.legacy.columns.0.width: width is a whole number of characters, 1 or more',
    );
    expect(await problem(fixed([{ name: 'A', start: 1.5, width: 2 }]))).toContain(
      'sources.legacy.columns.0.start: start is the column',
    );
    expect(await problem(shaped({ format: 'fixed' }))).toContain(
      'sources.legacy.columns: is required with "format": "fixed"',
    );
    expect(await problem(fixed(['A']))).toContain('sources.legacy.columns.0: a fixed-width column is placed');
    expect(
      await problem(
        shaped({ format: 'fixed', delimiter: '|', quote: false, columns: [{ name: 'A', start: 1, width: 1 }] }),
      ),
    ).toContain(
      'sources.legacy.quote: a fixed-width file has no quote; sources.legacy.delimiter: a fixed-width file has no delimiter',
    );
    expect(
      await problem(
        fixed([
          { name: 'A', start: 1, width: 1 },
          { name: 'a', start: 2, width: 1 },
        ]),
      ),
    ).toContain('sources.legacy.columns.1: a is the name of column 0 too (SQL names are not case-sensitive)');
    expect(await problem(fixed([{ name: '_line', start: 1, width: 1 }]))).toContain(
      'sources.legacy.columns.0: _line is a column the tool adds',
    );
    expect(await problem(shaped({ columns: ['A', 'B'] }))).toContain(
      'sources.legacy.columns: names the columns of a file without a header row: give "header": false too',
    );
    expect(await problem(shaped({ header: false, columns: [{ name: 'A', start: 1, width: 1 }] }))).toContain(
      'sources.legacy.columns.0: a column of a delimited file is its name',
    );
    expect(await problem(shaped({ delimiter: ';', quote: ';' }))).toContain(
      'sources.legacy.quote: ";" is in the delimiter',
    );
    expect(await problem(shaped({ quote: '""' }))).toContain('sources.legacy.quote: quote takes one character');
    expect(await problem(shaped({ format: 'json', quote: false }))).toContain(
      'sources.legacy.quote: applies to delimited files ("format": "csv"), not json',
    );
  });
});
