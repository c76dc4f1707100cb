import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { build, cleanup, exportDir, migrate, withParts } from './validate-helpers.js';

// The right words for exports that look like something else (docs/limits.md): lines that end in CR alone (not
// one unknown column per cell), a header repeated inside a file (not an account named "external_account_number"), an
// accounts file with no account (not "everything done").

const ACCOUNT_HEADER =
  'external_account_number,import_supplier,account_type,billing_name,billing_address.country,' +
  'account_billing_options.period_length';
const account = (number: string): string => `${number},ACME,DOMESTIC,Someone,GB,MONTHLY`;
const NOTES_HEADER = 'external_account_number,body,created_at';

beforeAll(build);
afterAll(cleanup);

describe('lines that end in a carriage return alone', () => {
  it.each([
    ['customers.csv', 'external_account_number,given_name,family_name\rA-1,Ada,Lovelace\rA-2,Bo,Ng\r'],
    [
      'notes.ndjson',
      '{"external_account_number": "A-1", "body": "x"}\r{"external_account_number": "A-2", "body": "y"}\r',
    ],
  ])('%s: named as such (exit 2), not read as one line', (name, content) => {
    const dir = exportDir({
      ...withParts({ 'accounts.csv': `${ACCOUNT_HEADER}\n${account('A-1')}\n${account('A-2')}\n` }),
      [name]: content,
    });
    const result = migrate(['validate', dir]);
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(
      `migrate: ${name}:1: its lines end with a carriage return alone (CR), not with a line feed (LF) or CR LF, so ` +
        `it would read as one line; save it with LF or CR LF line endings (for example: tr '\\r' '\\n' < ${name} > ` +
        `fixed-${name}).\n`,
    );
  });

  it('CR LF and LF line endings are read as they are', () => {
    const dir = exportDir(
      withParts({
        'accounts.csv': `${ACCOUNT_HEADER}\r\n${account('A-1')}\r\n`,
        'notes.csv': `${NOTES_HEADER}\nA-1,x,\n`,
      }),
    );
    expect(migrate(['validate', dir]).code).toBe(0);
  });
});

describe('a header row repeated inside a file (two exports joined)', () => {
  it('is named at its line and skipped; the rows after it are read', () => {
    const dir = exportDir(
      withParts({
        'accounts.csv': `${ACCOUNT_HEADER}\n${account('A-1')}\n${account('A-2')}\n`,
        'notes.csv': `${NOTES_HEADER}\nA-1,first,\n${NOTES_HEADER}\nA-2,second,\n`,
      }),
    );
    const result = migrate(['validate', dir, '--json']);
    expect(result.code).toBe(5);
    const report = JSON.parse(result.stdout) as { errors: Array<Record<string, unknown>>; accounts: unknown };
    expect(report.errors).toEqual([
      {
        file: 'notes.csv',
        line: 3,
        column: 'external_account_number',
        attr: null,
        external_account_number: null,
        code: 'repeated_header',
        message:
          'is the header row again (two exports joined into one file?); it is not a record and is skipped, the rows ' +
          'after it are read as rows of this file. Remove it.',
      },
    ]);
    expect(report.accounts).toEqual({ total: 2, valid: 2, invalid: 0 });
    expect(migrate(['validate', dir]).stdout).not.toContain('not in this export');
  });

  it('with other columns: the file cannot be read on (exit 2), naming the line', () => {
    const dir = exportDir(
      withParts({
        'accounts.csv': `${ACCOUNT_HEADER}\n${account('A-1')}\n`,
        'notes.csv': `${NOTES_HEADER}\nA-1,first,\nexternal_account_number,created_at,body\nA-1,,second\n`,
      }),
    );
    const result = migrate(['validate', dir]);
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(
      'migrate: notes.csv:3: is a second header row, with other columns than the header on line 1 (two exports ' +
        "joined into one file?): the rows after it would be read under the first header's columns. Split the file " +
        'at this line.\n',
    );
  });
});

describe('an accounts file that holds no account', () => {
  it.each([
    ['accounts.csv', `${ACCOUNT_HEADER}\n\n`, ' (only its header)'],
    ['accounts.json', '[\n]\n', ''],
    ['accounts.ndjson', '\n', ''],
  ])('%s: exit 2 for validate and push, unless --allow-no-accounts', (name, content, header) => {
    const dir = exportDir({ [name]: content, 'notes.csv': `${NOTES_HEADER}\nA-9,a note,\n` });
    const said =
      `migrate: ${name}: holds no account${header}: an export without accounts creates nothing (a failed or ` +
      'cut-short export?). If this export only adds post-import records to accounts imported earlier, run again ' +
      'with --allow-no-accounts.\n';
    for (const args of [
      ['validate', dir],
      ['push', dir, '--sandbox', '--state', `${dir}/state`],
      ['push', dir, '--sandbox', '--state', `${dir}/state`, '--dry-run'],
    ]) {
      const result = migrate(args);
      expect(result.code, args.join(' ')).toBe(2);
      expect(result.stderr, args.join(' ')).toBe(said);
    }
    const allowed = migrate(['validate', dir, '--allow-no-accounts', '--supplier', 'ACME']);
    expect(allowed.stderr).toBe('');
    expect(allowed.code).toBe(0);
    expect(allowed.stdout).toContain('1 post-import record(s) for 1 account(s) not in this export (A-9)');
  });
});

describe('an export directory that is a file', () => {
  it('is named as such (exit 2), not as a mapping file that cannot be read', () => {
    const dir = exportDir({ 'accounts.csv': `${ACCOUNT_HEADER}\n${account('A-1')}\n` });
    const result = migrate(['validate', `${dir}/accounts.csv`]);
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(
      `migrate: ${dir}/accounts.csv is not a directory; give the export directory (the one holding accounts.csv).\n`,
    );
  });
});
