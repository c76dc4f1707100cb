import { describe, expect, it } from 'vitest';
import { locateIssue } from '../../src/mapping/locate.js';
import { exportMappingOf } from '../../src/mapping/mapping-rules.js';
import { planFile } from '../../src/mapping/record.js';

// A service error's attr located at its file, line and column, also in a file a glob of the mapping file found
// (THISTLE_NOTES_1.csv: its name does not say its kind).

describe('locating an attr', () => {
  it('names the column in a file whose name gives no kind, as in one whose name does', () => {
    const config = exportMappingOf({}, 'ACME', undefined);
    for (const file of ['notes.csv', 'THISTLE_NOTES_1.csv']) {
      // The columns as the file's plan records them (the ledger keeps them for errors located later).
      const plan = planFile('notes', file, ['external_account_number', 'body', 'document_paths'], config);
      const located = locateIssue(
        { externalAccountNumber: 'A', origins: { '': { file, line: 3 } }, columnOf: { [file]: plan.columnOf } },
        { attr: 'document_paths.0.document_path', code: 'invalid', detail: 'bad' },
      );
      expect([located.file, located.line, located.column]).toEqual([file, 3, 'document_paths']);
    }
    const renamed = locateIssue(
      {
        externalAccountNumber: 'A',
        origins: { '': { file: 'CIS_1.csv', line: 9 } },
        columnOf: { 'CIS_1.csv': { body: 'NOTE_TEXT' } },
      },
      { attr: 'body', code: 'invalid', detail: 'bad' },
    );
    expect(renamed.column).toBe('NOTE_TEXT');
  });

  it('never names an inline list as a column of a CSV file', () => {
    const located = locateIssue(
      { externalAccountNumber: 'A', origins: { '': { file: 'CIS_ACCOUNTS_1.csv', line: 2 } } },
      { attr: 'customers', code: 'required', detail: 'none' },
    );
    expect(located.column).toBeUndefined();
  });
});
