import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parse } from 'csv-parse/sync';
import { stringify } from 'csv-stringify/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spreadsheetCsvOptions, spreadsheetSafe } from '../../src/output/spreadsheet-safe.js';
import { build, cleanup, exportDir, migrate } from '../cli/validate-helpers.js';

// Text that a spreadsheet would run as a formula is written as text in every CSV the tool writes.

const FORMULA = '=HYPERLINK("http://x","y")';
/** A formula an external account number can hold (a URL path cannot carry "/": mapping/account-number.ts). */
const NUMBER_FORMULA = '=HYPERLINK("x.example","y")';

describe('spreadsheetSafe', () => {
  it.each([
    [FORMULA, `'${FORMULA}`],
    ['+1+cmd', "'+1+cmd"],
    ['-2+3', "'-2+3"],
    ['@SUM(A1)', "'@SUM(A1)"],
    ['\t=1', "'\t=1"],
    ['\r=1', "'\r=1"],
    ['-5', '-5'],
    ['+1.25', '+1.25'],
    ['A-1', 'A-1'],
    ['', ''],
    ['a=b', 'a=b'],
  ])('%j -> %j', (value, expected) => expect(spreadsheetSafe(value)).toBe(expected));

  it('escapes text cells only: numbers, negative ones included, stay numbers', () => {
    const text = stringify([{ a: -5, b: '-x', c: 3.5 }], spreadsheetCsvOptions(['a', 'b', 'c'], true));
    expect(text).toBe("a,b,c\n-5,'-x,3.5\n");
  });
});

describe('the CSV files of validate and report, opened in a spreadsheet', () => {
  const HEADER = 'external_account_number,account_type,billing_address.country,account_billing_options.period_length';
  let work: string;
  beforeAll(() => {
    build();
    work = mkdtempSync(path.join(os.tmpdir(), 'migrate-spreadsheet-'));
  });
  afterAll(() => {
    cleanup();
    rmSync(work, { recursive: true, force: true });
  });

  const rows = (file: string): Array<Record<string, string>> =>
    parse(readFileSync(file), { columns: true }) as Array<Record<string, string>>;

  it('show an external account number that looks like a formula as text, and leave a number alone', () => {
    const quoted = `"${NUMBER_FORMULA.replaceAll('"', '""')}"`;
    const dir = exportDir({
      'accounts.csv': `${HEADER}\n${quoted},DOMESTIC,GB,MONTHLY\nA-2,DOMESTIC,GB,MONTHLY\n`,
      'notes.csv': `external_account_number,body,created_at\n${quoted},${quoted},not-a-date\nA-2,-5,2026-11-02T10:00:00Z\n`,
      'customers.csv': `external_account_number,given_name,family_name\n${quoted},Ada,One\nA-2,Bob,Two\n`,
      'supply_addresses.csv':
        'external_account_number,supply_address1,supply_postcode,customer_at_supply_address_from_date\n' +
        `${quoted},1 High St,LS1 1AA,2024-01-01\nA-2,2 High St,LS1 1AA,2024-01-01\n`,
    });
    const env = { MIGRATE_SUPPLIER: 'ACME' };
    const errorsCsv = path.join(work, 'errors.csv');
    expect(migrate(['validate', dir, '--errors-csv', errorsCsv], { env }).code).toBe(5);
    expect(rows(errorsCsv).map((row) => row['external_account_number'])).toEqual([`'${NUMBER_FORMULA}`]);

    const state = path.join(work, 'state');
    expect(migrate(['push', dir, '--sandbox', '--state', state], { env }).code).toBe(5);
    const out = path.join(work, 'report');
    expect(migrate(['report', '--state', state, '--out', out]).code).toBe(0);
    expect(rows(path.join(out, 'accounts.csv')).map((row) => row['external_account_number'])).toEqual([
      `'${NUMBER_FORMULA}`,
      'A-2',
    ]);
    const fix = rows(path.join(out, 'fix-data.csv'));
    expect(fix.map((row) => [row['external_account_number'], row['code']])).toEqual([
      [`'${NUMBER_FORMULA}`, 'invalid_datetime'],
    ]);
    for (const file of ['accounts.csv', 'fix-data.csv', 'retry.csv', 'unknown-outcome.csv'])
      for (const row of rows(path.join(out, file)))
        for (const cell of Object.values(row)) expect(cell).not.toMatch(/^[=+@\t\r]|^-(?!\d+(\.\d+)?$)/);
  });
});
