import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { InputError } from '../../src/errors.js';
import { findExportFiles, type FileGlobs } from '../../src/sources/index.js';
import { partOfKind } from '../../src/sources/kinds.js';

// Kinds declared by glob in the mapping file, and files that look like parts of a kind (docs/export-format.md
// "Files"): every file is read as its kind, listed as not read, or refused; none is passed over without a word.

const base = mkdtempSync(path.join(os.tmpdir(), 'migrate-globs-'));
afterAll(() => rmSync(base, { recursive: true, force: true }));

const HEADER = 'external_account_number\nA-1\n';

function exportOf(names: string[]): string {
  const dir = mkdtempSync(path.join(base, 'export-'));
  for (const name of names) writeFileSync(path.join(dir, name), HEADER);
  return dir;
}

async function refusal(dir: string, globs: FileGlobs = {}): Promise<InputError> {
  const error = await findExportFiles(dir, globs).then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(InputError);
  return error as InputError;
}

describe('a kind declared by a glob', () => {
  it('is read from every file the glob matches, in name order, as one kind; other kinds by base name', async () => {
    const dir = exportOf(['THISTLE_NOTES_2.csv', 'THISTLE_NOTES_1.ndjson', 'accounts.csv', 'thistle_notes_3.csv']);
    const found = await findExportFiles(dir, { notes: 'THISTLE_NOTES_*' });
    expect(found.files.map((file) => [file.file, file.kind, file.format])).toEqual([
      ['accounts.csv', 'accounts', 'csv'],
      ['THISTLE_NOTES_1.ndjson', 'notes', 'ndjson'],
      ['THISTLE_NOTES_2.csv', 'notes', 'csv'],
    ]);
    // Globs are case-sensitive: the lower-case name is listed as not read, with its reason.
    expect(found.notRead.map((entry) => entry.name)).toEqual(['thistle_notes_3.csv']);
  });

  it('that matches nothing stops the command, listing the directory and a match but for case', async () => {
    const error = await refusal(exportOf(['cis_accounts_1.csv', 'readme.md']), { accounts: 'CIS_ACCOUNTS_*.csv' });
    expect(error.code).toBe('input_glob_matches_nothing');
    expect(error.message).toBe(
      `${error.file}: mapping.accounts.file ("CIS_ACCOUNTS_*.csv") matches no file of the export directory ` +
        '("cis_accounts_1.csv" would match but for case: globs are case-sensitive); it holds "cis_accounts_1.csv", ' +
        '"readme.md". Correct the glob, or remove it if this export has no accounts.',
    );
  });

  it('refuses a file of its base name the glob leaves out, a file two kinds claim, and a match of another format', async () => {
    const left = await refusal(exportOf(['accounts.csv', 'notes.csv', 'N_1.csv']), { notes: 'N_*.csv' });
    expect(left.message).toMatch(/^notes\.csv: is named as the notes file, but mapping\.notes\.file \("N_\*\.csv"\)/u);
    const both = await refusal(exportOf(['accounts.csv', 'X_1.csv']), { notes: 'X_*.csv', transactions: '*_1.csv' });
    expect(both.message).toMatch(/^X_1\.csv: matches both mapping\.notes\.file .* and mapping\.transactions\.file/u);
    const named = await refusal(exportOf(['accounts.csv', 'N.csv']), { notes: '*.csv' });
    expect(named.message).toMatch(/^accounts\.csv: is named as the accounts file but matches mapping\.notes\.file/u);
    const text = await refusal(exportOf(['accounts.csv', 'N_1.txt']), { notes: 'N_*' });
    expect(text.message).toMatch(/^N_1\.txt: matches mapping\.notes\.file \("N_\*"\), but its extension is not an/u);
  });
});

describe('a file that looks like a part of a kind', () => {
  it.each(['notes_part1.csv', 'notes-2026.csv', 'Notes 2.csv', 'payment_instructions_2.json', 'accounts(1).csv'])(
    '%s: refused until declared or renamed',
    async (name) => {
      const error = await refusal(exportOf(['accounts.csv', name]));
      expect(error.code).toBe('input_undeclared_part');
      const kind = partOfKind(name) ?? '?';
      expect(error.message).toContain(`${name}: looks like a part of the ${kind} records but is not read as one`);
      expect(error.message).toContain(`{"mapping": {"${kind}": {"file": "${name.slice(0, kind.length)}*`);
    },
  );

  it('is read once a glob declares it, and names the glob to widen when one does not', async () => {
    const dir = exportOf(['accounts.csv', 'notes_part1.csv', 'notes_part2.csv']);
    const found = await findExportFiles(dir, { notes: 'notes_part*.csv' });
    expect(found.files.map((file) => file.file)).toEqual(['accounts.csv', 'notes_part1.csv', 'notes_part2.csv']);
    const partly = await refusal(exportOf(['accounts.csv', 'notes_part1.csv', 'notes-old.csv']), {
      notes: 'notes_part*.csv',
    });
    expect(partly.message).toMatch(
      /^notes-old\.csv: .* widen mapping\.notes\.file \("notes_part\*\.csv"\) to take it/u,
    );
  });

  it('is told apart from names that are not parts', () => {
    for (const name of ['notes.csv', 'notesfile.csv', 'notes_2024.txt', 'my_notes_1.csv', 'statements.json.gz'])
      expect(partOfKind(name)).toBeUndefined();
    expect(partOfKind('NOTES2.jsonl')).toBe('notes');
  });
});
