import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.js';
import { push } from './helpers.js';
import { runMigrate } from './run-push.js';

// Every legacy row of a record (a view's `_rows`), through the real binary: a customer built by a join of a
// contract account with its partner names both rows; an error in a value the partner row holds is named at the
// partner row and column (validate, the origins push keeps for the report's fix-data.csv), and --show prints it.

const SHAPE = `
CREATE VIEW accounts AS
SELECT ACC AS external_account_number, NAME AS billing_name, 'DOMESTIC' AS account_type, _file, _line
FROM contracts;

CREATE VIEW supply_addresses AS
SELECT ACC AS external_account_number, '1 High Street' AS supply_address1, 'LS6 8NP' AS supply_postcode,
  '2024-01-01' AS customer_at_supply_address_from_date, _file, _line
FROM contracts;

-- A customer is the contract account's row and its partner's: both named.
CREATE VIEW customers AS
SELECT c.ACC AS external_account_number, p.GIVEN AS given_name, p.FAMILY AS family_name, p.EMAIL AS email,
  p.MOBILE AS mobile, c._file, c._line, [c._file || ':' || c._line, p._file || ':' || p._line] AS _rows
FROM contracts c JOIN partners p ON p.PARTNER = c.PARTNER;
`;

let root: string;
let dir: string;
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'legacy-rows-'));
  dir = join(root, 'export');
  mkdirSync(dir);
  writeFileSync(join(dir, 'CONTRACTS.csv'), 'ACC,PARTNER,NAME\nA-1,P1,Ann Lee\nA-2,P2,Bo Kim\nA-3,P3,Cy Ng\n');
  writeFileSync(
    join(dir, 'PARTNERS.csv'),
    'PARTNER,GIVEN,FAMILY,EMAIL,MOBILE\nP3,Cy,Ng,cy@example.com,+447911123403\n' +
      'P2,Bo,Kim,bo@example.com,+447911123402\nP1,Ann,Lee,ann-at-example.com,+447911123401\n',
  );
  writeFileSync(
    join(dir, 'migrate.config.json'),
    JSON.stringify({
      import_supplier: 'ACME',
      sources: { contracts: { file: 'CONTRACTS.csv' }, partners: { file: 'PARTNERS.csv' } },
      shape: 'shape.sql',
    }),
  );
  writeFileSync(join(dir, 'shape.sql'), SHAPE);
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

interface Row {
  file: string;
  line: number | string;
  column: string | null;
  attr: string | null;
  external_account_number: string;
  code: string;
}

const PARTNER_ROW = { file: 'PARTNERS.csv', line: 4, column: 'EMAIL' };

describe('every legacy row of a record', () => {
  it("names a value's error at the row of the join that holds it, with its column", async () => {
    const result = await runMigrate(['validate', dir, '--json']);
    expect(result.code, result.stderr).toBe(5);
    const report = JSON.parse(result.stdout) as { accounts: { invalid: number }; errors: Row[] };
    expect(report.errors.map((row) => [row.file, row.line, row.column, row.attr, row.code])).toEqual([
      [PARTNER_ROW.file, PARTNER_ROW.line, PARTNER_ROW.column, 'customers.0.email', 'invalid_email'],
    ]);
    expect(report.accounts.invalid).toBe(1);
  });

  it('--show prints every row a record names', async () => {
    const result = await runMigrate(['validate', dir, '--show', 'A-1']);
    const shown = result.stdout.slice(result.stdout.indexOf('Account A-1\n'));
    expect(shown).toContain('CONTRACTS.csv:2 (contracts)');
    expect(shown).toContain('PARTNERS.csv:4 (partners)');
    expect(shown).toContain('EMAIL="ann-at-example.com"');
    // Another account's partner is not this account's row.
    expect(shown).not.toContain('PARTNERS.csv:3 (partners)');
  });

  describe('push, then report', () => {
    let sandbox: RunningSandbox;
    beforeAll(async () => {
      sandbox = await startSandbox({ suppliers: { ACME: 'Ongoing' }, processingMs: 0 });
    });
    afterAll(async () => sandbox.close());

    it("fix-data.csv names the error at the partner's row and column", async () => {
      const state = join(root, 'state');
      const pushed = await push(sandbox, dir, state);
      expect(pushed.code, pushed.stderr).toBe(5);
      expect(sandbox.inspect.account('ACME', 'A-1')).toBeUndefined();
      expect(sandbox.inspect.account('ACME', 'A-2')).toBeDefined();
      const out = join(root, 'report');
      const report = await runMigrate(['report', '--state', state, '--out', out]);
      expect(report.code, report.stderr).toBe(0);
      const rows = parse(readFileSync(join(out, 'fix-data.csv')), { columns: true, bom: true }) as Row[];
      expect(rows.map((row) => [row.external_account_number, row.file, Number(row.line), row.column])).toEqual([
        ['A-1', PARTNER_ROW.file, PARTNER_ROW.line, PARTNER_ROW.column],
      ]);
    });
  });
});
