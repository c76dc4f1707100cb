import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { InputError } from '../../src/errors.js';
import { findExportFiles } from '../../src/sources/index.js';
import { notExportNameReason } from '../../src/sources/entry-reason.js';

// Every entry of an export directory is read, listed as not read with its reason, or refused
// (docs/export-format.md "Files"): nothing is passed over without a word.

const base = mkdtempSync(path.join(os.tmpdir(), 'migrate-entries-'));
afterAll(() => rmSync(base, { recursive: true, force: true }));

const HEADER = 'external_account_number\nA-1\n';

function exportWith(setup: (dir: string) => void): string {
  const dir = mkdtempSync(path.join(base, 'export-'));
  writeFileSync(path.join(dir, 'accounts.csv'), HEADER);
  setup(dir);
  return dir;
}

async function refusal(dir: string): Promise<InputError> {
  const error = await findExportFiles(dir).then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(InputError);
  return error as InputError;
}

describe('an export file reached through a symbolic link', () => {
  it('is read, and the file it leads to is named', async () => {
    const elsewhere = path.join(base, 'notes-elsewhere.csv');
    writeFileSync(elsewhere, HEADER);
    const dir = exportWith((at) => symlinkSync(elsewhere, path.join(at, 'notes.csv')));
    const found = await findExportFiles(dir);
    expect(found.files.map((file) => [file.file, file.kind, file.linkTarget])).toEqual([
      ['accounts.csv', 'accounts', undefined],
      ['notes.csv', 'notes', elsewhere],
    ]);
    expect(found.files[1]?.bytes).toBe(HEADER.length);
    expect(found.notRead).toEqual([]);
  });

  it('is refused when it leads to nothing, to a directory or to a FIFO', async () => {
    const broken = exportWith((at) => symlinkSync('gone.csv', path.join(at, 'notes.csv')));
    expect((await refusal(broken)).message).toBe(
      'notes.csv: is a symbolic link that leads to "gone.csv", which does not exist; an export file must be a ' +
        'regular file (or a symbolic link to one): put the file in its place.',
    );
    const toDirectory = exportWith((at) => symlinkSync(base, path.join(at, 'Notes.CSV')));
    expect((await refusal(toDirectory)).message).toContain(`Notes.CSV: is a symbolic link to ${base}, a directory`);
    const fifo = path.join(base, 'a-fifo');
    execFileSync('mkfifo', [fifo]);
    const toFifo = exportWith((at) => symlinkSync(fifo, path.join(at, 'transactions.csv')));
    expect((await refusal(toFifo)).code).toBe('input_not_a_file');
  });
});

describe('an entry named as an export file that is not one', () => {
  it('is refused: a directory, a FIFO', async () => {
    const directory = exportWith((at) => mkdirSync(path.join(at, 'notes.csv')));
    expect((await refusal(directory)).message).toMatch(/^notes\.csv: is a directory, not a file; /u);
    const fifo = exportWith((at) => execFileSync('mkfifo', [path.join(at, 'statements.json')]));
    expect((await refusal(fifo)).message).toMatch(/^statements\.json: is a FIFO \(named pipe\), not a file; /u);
  });

  // root reads every file: as root, test/cli/state-dir.test.ts runs the binary as another user for the same refusal.
  it.skipIf(process.getuid?.() === 0)('is refused when this user cannot read it, naming EACCES', async () => {
    const dir = exportWith((at) => writeFileSync(path.join(at, 'notes.csv'), HEADER, { mode: 0o000 }));
    chmodSync(path.join(dir, 'notes.csv'), 0o000);
    const error = await refusal(dir);
    expect(error.message).toContain('notes.csv: cannot be read (EACCES: permission denied)');
    expect(error.code).toBe('input_unreadable');
  });
});

describe('entries that are not export files', () => {
  it('are listed, each with its reason, hidden ones included', async () => {
    const fifo = path.join(base, 'fifo-target');
    execFileSync('mkfifo', [fifo]);
    const dir = exportWith((at) => {
      for (const name of ['Notes.CSV ', 'notes.csv.bak', 'notes.txt', 'readme.md', '.DS_Store'])
        writeFileSync(path.join(at, name), HEADER);
      mkdirSync(path.join(at, 'archive'));
      execFileSync('mkfifo', [path.join(at, 'pipe')]);
      symlinkSync('nowhere', path.join(at, 'old-link'));
      symlinkSync(path.join(at, 'readme.md'), path.join(at, 'readme-link'));
    });
    const found = await findExportFiles(dir);
    expect(found.files.map((file) => file.file)).toEqual(['accounts.csv']);
    expect(Object.fromEntries(found.notRead.map((entry) => [entry.name, entry.reason]))).toEqual({
      '.DS_Store': 'a hidden file: not an export file name',
      'Notes.CSV ':
        'its name holds a space or an invisible character; if it is the notes file, rename it to "Notes.CSV"',
      archive: 'a directory: subdirectories are not read',
      'notes.csv.bak':
        'named like notes.csv with ".bak" after it (a backup or a compressed copy?); only notes.csv itself is read',
      'notes.txt': 'named like the notes file, but ".txt" is not an export format (.csv, .json, .ndjson or .jsonl)',
      'old-link': 'a symbolic link that leads to "nowhere", which does not exist',
      pipe: 'a FIFO (named pipe)',
      'readme-link': `a symbolic link to ${path.join(dir, 'readme.md')}; ${notExportNameReason('readme-link')}`,
      'readme.md': notExportNameReason('readme.md'),
    });
  });

  it('name the near miss: invisible characters, another extension, a longer name', () => {
    expect(notExportNameReason('accounts\u200b.csv')).toContain('rename it to "accounts.csv"');
    expect(notExportNameReason('\u00a0customers.json')).toContain('if it is the customers file');
    expect(notExportNameReason('Transactions.xlsx')).toContain('named like the transactions file, but ".xlsx"');
    expect(notExportNameReason('payment_instructions')).toContain('but no extension is not an export format');
    expect(notExportNameReason('statements.json.gz')).toContain('named like statements.json with ".gz" after it');
    expect(notExportNameReason('notes_2024.csv')).toMatch(/^not an export file name \(accounts, customers, /u);
  });
});
