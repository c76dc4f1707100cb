import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { concatIssues, IssueSpool, type SourceIssue } from '../../src/intake/index.js';
import { build, migrate } from '../cli/validate-helpers.js';

const base = mkdtempSync(path.join(os.tmpdir(), 'migrate-spool-test-'));
afterAll(() => rmSync(base, { recursive: true, force: true }));

const issue = (index: number): SourceIssue => ({
  file: 'customers.csv',
  line: index + 2,
  column: 'mobile',
  attr: 'customers.0.mobile',
  externalAccountNumber: `A${index}`,
  code: index % 3 === 0 ? 'invalid_phone_number' : 'invalid_date',
  message: `problem ${index} \u00e9 "quoted"\nsecond line`,
});

async function all<T>(items: AsyncIterable<T>): Promise<T[]> {
  const list: T[] = [];
  for await (const item of items) list.push(item);
  return list;
}

describe('IssueSpool', () => {
  it('keeps every problem in order past what it holds in memory, in a file nobody else can see', async () => {
    const scratch = mkdtempSync(path.join(base, 'scratch-'));
    const spool = new IssueSpool(scratch);
    const pushed = Array.from({ length: 12_345 }, (_, index) => issue(index));
    for (const item of pushed) spool.push(item);
    expect(readdirSync(scratch)).toEqual([]); // unlinked as soon as it was opened
    expect(spool.length).toBe(12_345);
    expect(spool.byCode).toEqual({ invalid_phone_number: 4115, invalid_date: 8230 });
    expect(spool.first(2)).toEqual(pushed.slice(0, 2));
    expect(await all(spool)).toEqual(pushed);
    expect(await all(spool)).toHaveLength(12_345); // read as often as needed
    spool.close();
  });

  it('reads several lists as one, in order', async () => {
    const [a, b] = [new IssueSpool(), new IssueSpool()];
    a.push(issue(0));
    b.push(issue(1));
    b.push(issue(2));
    const both = concatIssues([a, b]);
    expect(both.length).toBe(3);
    expect(both.byCode).toEqual({ invalid_phone_number: 1, invalid_date: 2 });
    expect((await all(both)).map((item) => item.line)).toEqual([2, 3, 4]);
    expect(both.first(2).map((item) => item.line)).toEqual([2, 3]);
  });
});

describe('migrate validate with many errors', () => {
  it('reports every one of them in --json and --errors-csv', () => {
    build();
    const dir = mkdtempSync(path.join(base, 'export-'));
    const rows = Array.from(
      { length: 6000 },
      (_, index) => `A${String(index).padStart(5, '0')},DOMESTIC,GB,MONTHLY,2024-13-01`,
    );
    writeFileSync(
      path.join(dir, 'accounts.csv'),
      `external_account_number,account_type,billing_address.country,account_billing_options.period_length,date_of_sale\n${rows.join('\n')}\n`,
    );
    const keys = rows.map((row) => row.split(',')[0] ?? '');
    writeFileSync(
      path.join(dir, 'customers.csv'),
      `external_account_number,given_name,family_name\n${keys.map((key) => `${key},Ada,Lovelace`).join('\n')}\n`,
    );
    writeFileSync(
      path.join(dir, 'supply_addresses.csv'),
      'external_account_number,supply_address1,supply_postcode,customer_at_supply_address_from_date\n' +
        `${keys.map((key) => `${key},1 High St,LS1 1AA,2024-01-01`).join('\n')}\n`,
    );
    // Beside the export, never in it (docs/operators-guide.md "Files migrate writes").
    const csv = path.join(base, `errors-${path.basename(dir)}.csv`);
    const result = migrate(['validate', dir, '--json', '--supplier', 'ACME', '--errors-csv', csv], { cwd: dir });
    expect(result.code).toBe(5);
    const report = JSON.parse(result.stdout) as {
      ok: boolean;
      accounts: unknown;
      errors: Array<{ line: number; code: string }>;
    };
    expect(report.ok).toBe(false);
    expect(report.accounts).toEqual({ total: 6000, valid: 0, invalid: 6000 });
    expect(report.errors.map((error) => error.line)).toEqual(rows.map((_, index) => index + 2));
    expect(new Set(report.errors.map((error) => error.code))).toEqual(new Set(['invalid_date']));
    expect(readFileSync(csv, 'utf8').trim().split('\n')).toHaveLength(6001);
  });
});
