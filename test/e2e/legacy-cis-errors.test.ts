import { parse } from 'csv-parse/sync';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.js';
import { push } from './helpers.js';
import { copyLegacyCis, FILES, plant } from './legacy-cis-files.js';
import { runMigrate } from './run-push.js';

// Errors planted in the legacy files of fixtures/legacy-cis/ are reported where the data team must fix them: at the
// legacy file and line (not at a line of anything the shape made), with the field, by `validate`, `validate --json`
// and, after a push, in the report's fix-data.csv, including a refusal by the service.

const SUPPLIER = 'THISTLE';

interface Planted {
  account: string;
  file: string;
  /** The legacy line; a duplicate may be named at either of its two (which one is the repeat is the view's order). */
  line: number;
  orLine?: number;
  /** The payload path the error names (an account's, or a post-import record's). */
  attr: RegExp;
}

/** Each planted error: where it is, and the account it holds back. */
const PLANTED: Record<string, Planted> = {
  // An Ofcom drama number, not a valid GB mobile: on both supply point rows of the account (17 and 60).
  phone: { account: '00182772', file: FILES.accounts, line: 17, attr: /^customers\.0\.mobile$/ },
  // 01:30 on 25 October 2026 happens twice in Europe/London (the clocks go back at 02:00 BST).
  ambiguousTime: { account: '00009243', file: FILES.notes, line: 32, attr: /^created_at$/ },
  // A letter O for a zero.
  amount: { account: '00110299', file: FILES.bills, line: 29, attr: /^gross_amount$/ },
  // A bill on another share: the shape's rewrite leaves it as it is, backslashes and all.
  path: { account: '00092898', file: FILES.bills, line: 32, attr: /^statement_path$/ },
  // Row 25 keyed with the account number of rows 24 and 291, for another customer.
  duplicate: { account: '00139643', file: FILES.accounts, line: 25, orLine: 24, attr: /.*/ },
  // A posting code the shape does not know: the posting, a transaction of the account's ledger, has no type; named at
  // the posting's own line, not the account's.
  posting: {
    account: '00179491',
    file: FILES.postings,
    line: 3,
    attr: /^ledgers\.0\.current_statement_transactions\.1\.type$/,
  },
};
/** The mandate the sandbox's payment vendor refuses (a reference starting FAIL-). */
const REFUSED = { account: '00106613', file: FILES.mandates, line: 20 };

let root: string;
let dir: string;
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'legacy-cis-errors-'));
  dir = copyLegacyCis(join(root, 'export'));
  plant(dir, FILES.accounts, 17, 'CUST1_MOBILE', '07700 900123');
  plant(dir, FILES.accounts, 60, 'CUST1_MOBILE', '07700 900123');
  plant(dir, FILES.notes, 32, 'Note Date', '25/10/2026 01:30');
  plant(dir, FILES.bills, 29, 'TOTAL_DUE', '£39O.05');
  plant(dir, FILES.bills, 32, 'PDF_LOCATION', '\\\\archive01\\bills\\2019\\00092898_B6900001.pdf');
  plant(dir, FILES.accounts, 25, 'ACCOUNT_NO', '00139643');
  plant(dir, FILES.mandates, 20, 'MANDATE_REF', 'FAIL-TH00106613D2');
  plant(dir, FILES.postings, 3, 'TXN_CODE', 'XFER', '|');
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

interface ErrorRow {
  file: string;
  line: number | string;
  attr: string;
  external_account_number: string;
  code: string;
  message: string;
}

const at = (rows: ErrorRow[], planted: Planted): ErrorRow[] =>
  rows.filter(
    (row) =>
      row.external_account_number === planted.account &&
      row.file === planted.file &&
      (Number(row.line) === planted.line || Number(row.line) === planted.orLine) &&
      planted.attr.test(row.attr),
  );

describe('errors planted in the legacy CIS files', () => {
  it('validate names each at its legacy file and line, with the field (exit 5)', async () => {
    const result = await runMigrate(['validate', dir]);
    expect(result.code, result.stderr).toBe(5);
    for (const [name, planted] of Object.entries(PLANTED))
      expect(result.stdout, name).toMatch(new RegExp(`${planted.file}:(${planted.line}|${planted.orLine ?? 0}) `));
    expect(result.stdout).toMatch(new RegExp(`${FILES.accounts}:17 \\S*MOBILE\\S*|${FILES.accounts}:17 .*mobile`));
    expect(result.stdout).toContain('invalid_phone_number');
  });

  it('validate --json gives the same: file, line, attr and account of each', async () => {
    const result = await runMigrate(['validate', dir, '--json']);
    expect(result.code, result.stderr).toBe(5);
    const report = JSON.parse(result.stdout) as { accounts: { total: number; invalid: number }; errors: ErrorRow[] };
    for (const [name, planted] of Object.entries(PLANTED))
      expect(at(report.errors, planted).length, `${name}: ${JSON.stringify(report.errors)}`).toBeGreaterThan(0);
    expect(at(report.errors, PLANTED['phone']!).map((row) => row.code)).toContain('invalid_phone_number');
    const duplicate = report.errors.filter((row) => row.external_account_number === PLANTED['duplicate']!.account);
    expect(duplicate.map((row) => row.code)).toContain('duplicate_external_account_number');
    // Both legacy lines of the account number are named: row 25 and the first of rows 24 and 291.
    expect(JSON.stringify(duplicate)).toMatch(/\b24\b/);
    expect(JSON.stringify(duplicate)).toMatch(/\b25\b/);
    // 200 live accounts, one of them keyed twice; the rest stay valid.
    expect(report.accounts.invalid).toBe(Object.keys(PLANTED).length);
  });

  describe('push, then report', () => {
    let sandbox: RunningSandbox;
    beforeAll(async () => {
      sandbox = await startSandbox({ suppliers: { [SUPPLIER]: 'Ongoing' }, processingMs: 0 });
    });
    afterAll(async () => sandbox.close());

    it('fix-data.csv names every planted error, and the mandate the service refused, at its legacy file and line', async () => {
      const state = join(root, 'state');
      const pushed = await push(sandbox, dir, state);
      expect(pushed.code, pushed.stderr).toBe(5);
      for (const planted of Object.values(PLANTED))
        expect(sandbox.inspect.account(SUPPLIER, planted.account), planted.account).toBeUndefined();
      expect(sandbox.inspect.account(SUPPLIER, REFUSED.account)?.paymentInstructions).toEqual([]);

      const out = join(root, 'report');
      const report = await runMigrate(['report', '--state', state, '--out', out]);
      expect(report.code, report.stderr).toBe(0);
      const rows = parse(readFileSync(join(out, 'fix-data.csv')), { columns: true, bom: true }) as Array<
        ErrorRow & { record: string; found_by: string }
      >;
      for (const [name, planted] of Object.entries(PLANTED))
        expect(at(rows, planted).length, `${name}: ${JSON.stringify(rows.slice(0, 8))}`).toBeGreaterThan(0);
      const refused = rows.filter((row) => row.external_account_number === REFUSED.account);
      expect(refused.map((row) => [row.record, row.file, Number(row.line), row.found_by])).toEqual([
        ['payment_instruction', REFUSED.file, REFUSED.line, 'service (refused)'],
      ]);
    });
  });
});
