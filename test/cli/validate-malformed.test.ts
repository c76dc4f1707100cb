import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { build, cleanup, exportDir, migrate, withParts } from './validate-helpers.js';

// Every input that cannot be read at all ends with exit 2 and one plain sentence naming the
// file (and line where there is one), never a stack trace.

const ACCOUNTS =
  'external_account_number,account_type,billing_address.country,account_billing_options.period_length\nA-1,DOMESTIC,GB,MONTHLY\n';

function expectUsageError(args: string[], message: RegExp, env?: NodeJS.ProcessEnv): void {
  const result = migrate(args, env ? { env } : {});
  expect(result.code).toBe(2);
  expect(result.stdout).toBe('');
  expect(result.stderr).toMatch(message);
  expect(result.stderr).not.toMatch(/\n\s+at /);
  expect(result.stderr.trim().split('\n')).toHaveLength(1);
}

beforeAll(build);
afterAll(cleanup);

describe('migrate validate on input it cannot read', () => {
  it('broken quoting', () => {
    const dir = exportDir({ 'accounts.csv': `${ACCOUNTS}A-2,"DOMESTIC,GB,MONTHLY\nA-3,DOMESTIC,GB,MONTHLY\n` });
    expectUsageError(
      ['validate', dir],
      /^migrate: accounts\.csv:3: cannot be parsed as CSV: a quoted field of the row starting on this line is never closed/,
    );
  });

  it('broken quoting in files that are being sorted (out of order), one parsed on each thread', () => {
    const many = (rows: number, row: (n: number) => string): string =>
      Array.from({ length: rows }, (_, n) => row(n)).join('');
    const keys = (n: number): string => `A-${String((n * 7919) % 3000).padStart(4, '0')}`;
    const dir = exportDir({
      'accounts.csv': `external_account_number,account_type,billing_address.country,account_billing_options.period_length\n${many(3000, (n) => `A-${String(n).padStart(4, '0')},DOMESTIC,GB,MONTHLY\n`)}`,
      'customers.csv': `external_account_number,given_name,family_name\n${many(3000, (n) => `${keys(n)},Ada,Lovelace\n`)}`,
      'notes.csv': `external_account_number,body\n${many(2000, (n) => `${keys(n)},note ${n}\n`)}${keys(1)},"never closed\n${keys(2)},x\n`,
    });
    expectUsageError(
      ['validate', dir],
      /^migrate: notes\.csv:2002: cannot be parsed as CSV: a quoted field of the row starting on this line is never closed/,
    );
  });

  it('truncated JSON', () => {
    const dir = exportDir({
      'accounts.json': '[\n  {"external_account_number": "A-1"},\n  {"external_account_number": "A-2"',
    });
    expectUsageError(
      ['validate', dir],
      /^migrate: accounts\.json:3: ends before its JSON array is closed \(truncated file\?\)\n$/,
    );
  });

  it('binary data', () => {
    const dir = exportDir({
      'accounts.csv': Buffer.concat([Buffer.from(ACCOUNTS), Buffer.from([0x50, 0x4b, 0x03, 0x04, 0x00, 0x00])]),
    });
    expectUsageError(['validate', dir], /^migrate: accounts\.csv:3: holds binary data/);
  });

  it('a missing external_account_number column', () => {
    const dir = exportDir({ 'accounts.csv': ACCOUNTS, 'customers.csv': 'account,given_name\nA-1,Ada\n' });
    expectUsageError(['validate', dir], /^migrate: customers\.csv:1: has no external_account_number column/);
  });

  it('no accounts file, two formats of one base name, an empty file', () => {
    expectUsageError(
      ['validate', exportDir({ 'customers.csv': 'external_account_number\n' })],
      /has no accounts file \(accounts\.csv, accounts\.json or accounts\.ndjson\)/,
    );
    expectUsageError(
      ['validate', exportDir({ 'accounts.csv': ACCOUNTS, 'accounts.ndjson': '{}' })],
      /^migrate: accounts\.ndjson: and accounts\.csv both hold accounts records/,
    );
    expectUsageError(['validate', exportDir({ 'accounts.csv': '' })], /^migrate: accounts\.csv:1: is empty/);
  });

  it('a directory that does not exist, a bad mapping file, a bad flag', () => {
    expectUsageError(
      ['validate', '/nonexistent/export'],
      /^migrate: export directory \/nonexistent\/export does not exist\.\n$/,
    );
    expectUsageError(
      [
        'validate',
        exportDir({
          'accounts.csv': ACCOUNTS,
          'migrate.config.json': '{"mapping": {"accounts": {"rename": {"Ref": "acount_ref"}}}}',
        }),
      ],
      /mapping\.accounts\.rename\.Ref: "acount_ref" is not a documented field of accounts files/,
    );
    const bad = migrate(['validate', '--no-such-flag', '.']);
    expect(bad.code).toBe(2);
  });
});

describe('migrate validate: data errors and the supplier', () => {
  it('exits 1 when accounts lack a supplier, 0 once --supplier or MIGRATE_SUPPLIER gives it', () => {
    const dir = exportDir(withParts({ 'accounts.csv': ACCOUNTS }));
    const without = migrate(['validate', dir, '--json']);
    expect(without.code).toBe(5);
    expect(JSON.parse(without.stdout).errors).toEqual([
      {
        file: 'accounts.csv',
        line: 2,
        column: null,
        attr: 'import_supplier',
        external_account_number: 'A-1',
        code: 'missing_import_supplier',
        message: expect.stringContaining('--supplier'),
      },
    ]);
    expect(migrate(['validate', dir, '--supplier', 'ACME']).code).toBe(0);
    expect(migrate(['validate', dir], { env: { MIGRATE_SUPPLIER: 'ACME' } }).code).toBe(0);
  });
});
