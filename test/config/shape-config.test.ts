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
        },
        {
          table: 'finance',
          glob: 'FIN_*.txt',
          several: true,
          format: 'csv',
          encoding: 'windows-1252',
          delimiter: '|',
          header: true,
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
});
