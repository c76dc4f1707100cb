import { appendFileSync, mkdtempSync, readFileSync, renameSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadMigrateConfig } from '../../src/config/index.js';
import { InputError } from '../../src/errors.js';
import { openExportInOrder } from '../../src/intake/export-in-order.js';
import { writeE2eExport } from '../e2e/export.js';

// An export file that changes while it is read (grows, shrinks, is replaced) is named as such, exit 2, "changed while
// it was read ... rerun when the export is complete", not blamed on its data (docs/export-format.md "Files that cannot
// be read"). The real reader on a CSV export that streams; the file is changed after the first account is handed
// out, while the join still reads it.

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

async function readChanging(change: (accounts: string) => void): Promise<unknown> {
  const root = mkdtempSync(path.join(os.tmpdir(), 'changed-while-read-'));
  dirs.push(root);
  // A CSV export in order streams: the join still reads accounts.csv after handing out the first account.
  const { dir } = writeE2eExport(root, 300, 'CWR', 'spec', { clean: true, order: 'sorted' });
  const config = await loadMigrateConfig({ cwd: dir, exportDir: dir, env: {} });
  const reader = await openExportInOrder(dir, config, { today: '2026-11-22' });
  expect(reader.proof?.toSort.size).toBe(0);
  try {
    let first = true;
    for await (const entry of reader.entries()) {
      void entry;
      if (first) change(path.join(dir, 'accounts.csv'));
      first = false;
    }
    return undefined;
  } catch (error) {
    return error;
  } finally {
    await reader.close();
  }
}

describe('an export file changed while it is read', () => {
  it.each([
    [
      'grew (still being written)',
      (file: string) => appendFileSync(file, readFileSync(file, 'utf8').split('\n')[1] + '\n'),
      /^accounts\.csv: changed while it was read \(it grew from \d+ to \d+ bytes\)/,
    ],
    [
      'shrank (cut short mid-line)',
      (file: string) => truncateSync(file, Math.floor(readFileSync(file).length / 2)),
      /^accounts\.csv: changed while it was read \(it shrank from \d+ to \d+ bytes\)/,
    ],
    [
      'was replaced (the next export renamed over it)',
      (file: string) => {
        writeFileSync(`${file}.next`, readFileSync(file));
        renameSync(`${file}.next`, file);
      },
      /^accounts\.csv: changed while it was read \(it was replaced by another file\)/,
    ],
  ])('%s: named as changed, exit 2, not blamed on a line', async (_, change, said) => {
    const error = await readChanging(change);
    expect(error).toBeInstanceOf(InputError);
    expect((error as InputError).code).toBe('input_changed_while_read');
    expect((error as InputError).exitCode).toBe(2);
    expect((error as InputError).message).toMatch(said);
    expect((error as InputError).message).toContain('rerun when the export is complete');
  });

  it('unchanged: read to the end', async () => {
    expect(await readChanging(() => undefined)).toBeUndefined();
  });
});
