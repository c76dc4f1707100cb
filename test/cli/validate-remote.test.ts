import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { build, cleanup, exportDir, migrate, withParts } from './validate-helpers.js';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { root } from './validate-helpers.js';

// validate --remote against the built-in sandbox over real HTTP: every locally valid account is
// sent to the validate endpoint and the service's attrs come back as file, line and column.

const ACCOUNTS =
  'external_account_number,account_type,billing_address.country,account_billing_options.period_length\nR-1,DOMESTIC,GB,MONTHLY\nR-2,DOMESTIC,GB,MONTHLY\nR-3,HOUSEHOLD,GB,MONTHLY\n';

/** All a --remote --sandbox run says besides its first line: where its sandbox listens. */
const SANDBOX_ONLY = /^migrate: the built-in sandbox listens on http:\/\/127\.0\.0\.1:\d+, with a key of its own\n$/;

beforeAll(build);
afterAll(cleanup);

describe('migrate validate --remote', () => {
  it('passes the sample export through the service validate endpoint', () => {
    const result = migrate(['validate', path.join(root, 'fixtures', 'sample'), '--remote', '--sandbox', '--json']);
    expect(result.stderr).toMatch(SANDBOX_ONLY);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ ok: true, accounts: { total: 50, valid: 50, invalid: 0 } });
  });

  it("maps the service's errors back to file, line and column; locally invalid accounts are not sent", () => {
    const result = migrate([
      'validate',
      exportDir(withParts({ 'accounts.csv': ACCOUNTS })),
      '--remote',
      '--sandbox',
      '--supplier',
      'NOT-A-SUPPLIER',
      '--json',
    ]);
    expect(result.code).toBe(5);
    const report = JSON.parse(result.stdout) as { accounts: unknown; errors: Array<Record<string, unknown>> };
    expect(report.accounts).toEqual({ total: 3, valid: 0, invalid: 3 });
    expect(
      report.errors
        .map((error) => [error['file'], error['line'], error['attr'], error['external_account_number'], error['code']])
        .sort(),
    ).toEqual([
      ['accounts.csv', 2, 'import_supplier', 'R-1', 'invalid_import_supplier'],
      ['accounts.csv', 3, 'import_supplier', 'R-2', 'invalid_import_supplier'],
      ['accounts.csv', 4, 'account_type', 'R-3', 'invalid_choice'],
    ]);
    expect(report.errors.find((error) => error['external_account_number'] === 'R-1')?.['message']).toMatch(
      /^service: "NOT-A-SUPPLIER" is not an import supplier/,
    );
  });

  it('stops with exit 3 when the supplier does not accept migrations', () => {
    const result = migrate([
      'validate',
      exportDir(withParts({ 'accounts.csv': ACCOUNTS })),
      '--remote',
      '--sandbox',
      '--supplier',
      'PAUSED',
    ]);
    expect(result.code).toBe(3);
    expect(result.stderr).toMatch(/^migrate: the built-in sandbox listens on .*\nmigrate: .*paused/i);
  });

  it('refuses --sandbox without --remote, and a remote check without credentials', () => {
    expect(migrate(['validate', exportDir(withParts({ 'accounts.csv': ACCOUNTS })), '--sandbox']).code).toBe(2);
    const result = migrate(
      ['validate', exportDir(withParts({ 'accounts.csv': ACCOUNTS })), '--remote', '--supplier', 'ACME'],
      {
        env: { MIGRATE_BASE_URL: '', MIGRATE_API_KEY: '' },
      },
    );
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/no service URL/);
  });
});

describe('migrate validate in the kraken dialect (the real platform)', () => {
  const kraken = path.join(root, 'fixtures', 'kraken');
  const fixture = (name: string): string => readFileSync(path.join(kraken, name), 'utf8');
  const files = (changes: Record<string, string>): Record<string, string> => ({
    'migrate.config.json': fixture('migrate.config.json'),
    'accounts.csv': fixture('accounts.csv'),
    'customers.csv': fixture('customers.csv'),
    'supply_addresses.csv': fixture('supply_addresses.csv'),
    ...changes,
  });

  it('passes the kraken fixture (meter points declared as a tenant field) through the kraken sandbox', () => {
    const result = migrate(['validate', kraken, '--remote', '--sandbox', '--json']);
    expect(result.stderr).toMatch(SANDBOX_ONLY);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ ok: true, accounts: { total: 3, valid: 3, invalid: 0 } });
  });

  it("maps the platform's no_supply_point_on_supply back to the supply address's file, line and column", () => {
    const supply = fixture('supply_addresses.csv').replace(/^(KRAKEN-0002,.*,2024-03-03,).*$/m, '$1');
    const result = migrate([
      'validate',
      exportDir(files({ 'supply_addresses.csv': supply })),
      '--remote',
      '--sandbox',
      '--json',
    ]);
    expect(result.code, result.stderr).toBe(5);
    const report = JSON.parse(result.stdout) as { errors: Array<Record<string, unknown>> };
    expect(report.errors).toEqual([
      expect.objectContaining({
        file: 'supply_addresses.csv',
        line: 3,
        column: 'meter_points',
        external_account_number: 'KRAKEN-0002',
        code: 'no_supply_point_on_supply',
      }),
    ]);
  });

  it('a tenant field that is not JSON of its declared kind is reported locally at its file and line', () => {
    const supply = fixture('supply_addresses.csv').replace(/"\[\{""mpan"": ""1012345678906""\}\]"/, '"{""mpan"": 1}"');
    const result = migrate(['validate', exportDir(files({ 'supply_addresses.csv': supply })), '--json']);
    expect(result.code, result.stderr).toBe(5);
    const report = JSON.parse(result.stdout) as { errors: Array<Record<string, unknown>> };
    expect(report.errors).toEqual([
      expect.objectContaining({
        file: 'supply_addresses.csv',
        line: 4,
        code: 'invalid_type',
        external_account_number: 'KRAKEN-0003',
      }),
    ]);
  });

  it('a gross_amount with more than two decimals is too_many_decimal_places at its file and line', () => {
    const statements =
      'external_account_number,statement_id,bill_period_from_date,bill_period_to_date,gross_amount\n' +
      'KRAKEN-0001,S-1,2024-01-01,2024-01-31,40.10\nKRAKEN-0002,S-2,2024-01-01,2024-01-31,0.295\n';
    const result = migrate(['validate', exportDir(files({ 'statements.csv': statements })), '--json']);
    expect(result.code, result.stderr).toBe(5);
    const report = JSON.parse(result.stdout) as { errors: Array<Record<string, unknown>> };
    expect(report.errors).toEqual([
      expect.objectContaining({
        file: 'statements.csv',
        line: 3,
        column: 'gross_amount',
        code: 'too_many_decimal_places',
      }),
    ]);
  });

  it('an amount the kraken dialect cannot carry exactly is reported at its file and line, never rounded or sent', () => {
    const accounts = fixture('accounts.csv').replace(/^(KRAKEN-0002,.*),0$/m, '$1,1.005');
    const result = migrate([
      'validate',
      exportDir(files({ 'accounts.csv': accounts })),
      '--remote',
      '--sandbox',
      '--json',
    ]);
    expect(result.code, result.stderr).toBe(5);
    const report = JSON.parse(result.stdout) as { errors: Array<Record<string, unknown>> };
    expect(report.errors).toEqual([
      expect.objectContaining({
        file: 'accounts.csv',
        line: 3,
        column: 'transfer_balance',
        code: 'max_decimal_places',
        external_account_number: 'KRAKEN-0002',
      }),
    ]);
  });

  it('an undeclared extra column is still unknown_column: only declared tenant fields pass', () => {
    const supply = fixture('supply_addresses.csv').replace('meter_points', 'meter_pointz');
    const result = migrate(['validate', exportDir(files({ 'supply_addresses.csv': supply })), '--json']);
    expect(result.code).toBe(5);
    expect(result.stdout).toContain('unknown_column');
  });
});
