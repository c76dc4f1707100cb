import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { build, cleanup, exportDir, migrate } from './helpers.js';
import path from 'node:path';
import { root } from './helpers.js';

// validate --remote against the built-in sandbox over real HTTP: every locally valid account is
// sent to the validate endpoint and the service's attrs come back as file, line and column.

const ACCOUNTS =
  'external_account_number,account_type,billing_address.country,account_billing_options.period_length\nR-1,DOMESTIC,GB,MONTHLY\nR-2,DOMESTIC,GB,MONTHLY\nR-3,HOUSEHOLD,GB,MONTHLY\n';

beforeAll(build);
afterAll(cleanup);

describe('migrate validate --remote', () => {
  it('passes the sample export through the service validate endpoint', () => {
    const result = migrate(['validate', path.join(root, 'fixtures', 'sample'), '--remote', '--sandbox', '--json']);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ ok: true, accounts: { total: 50, valid: 50, invalid: 0 } });
  });

  it("maps the service's errors back to file, line and column; locally invalid accounts are not sent", () => {
    const result = migrate([
      'validate',
      exportDir({ 'accounts.csv': ACCOUNTS }),
      '--remote',
      '--sandbox',
      '--supplier',
      'NOT-A-SUPPLIER',
      '--json',
    ]);
    expect(result.code).toBe(1);
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
      exportDir({ 'accounts.csv': ACCOUNTS }),
      '--remote',
      '--sandbox',
      '--supplier',
      'PAUSED',
    ]);
    expect(result.code).toBe(3);
    expect(result.stderr).toMatch(/^migrate: .*paused/i);
  });

  it('refuses --sandbox without --remote, and a remote check without credentials', () => {
    expect(migrate(['validate', exportDir({ 'accounts.csv': ACCOUNTS }), '--sandbox']).code).toBe(2);
    const result = migrate(['validate', exportDir({ 'accounts.csv': ACCOUNTS }), '--remote', '--supplier', 'ACME'], {
      env: { MIGRATE_BASE_URL: '', MIGRATE_API_KEY: '' },
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/no service URL/);
  });
});
