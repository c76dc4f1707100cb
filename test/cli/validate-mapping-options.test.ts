import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { build, cleanup, exportDir, migrate, withParts } from './validate-helpers.js';

// The mapping file's per-kind options through the real binary (docs/export-format.md "The mapping file"): what
// validate says of an export mapped with them.

const ACCOUNT_HEADER =
  'external_account_number,import_supplier,account_type,billing_name,billing_address.country,' +
  'account_billing_options.period_length';
const account = (number: string): string => `${number},ACME,DOMESTIC,Someone,GB,MONTHLY`;

beforeAll(build);
afterAll(cleanup);

const config = (mapping: Record<string, unknown>, top: Record<string, unknown> = {}): string =>
  JSON.stringify({ ...top, mapping });

describe('"unmapped": "ignore" and one column feeding several fields', () => {
  it('leaves out undocumented columns, listed once per file, and fills mobile and landline from one column', () => {
    const dir = exportDir({
      ...withParts({ 'accounts.csv': `${ACCOUNT_HEADER},OLD_FLAG,CUST_NO\n${account('A-1')},Y,7\n` }),
      'customers.csv': 'external_account_number,given_name,family_name,PHONE,SHOE\nA-1,Ada,Lovelace,01612345,9\n',
      'migrate.config.json': config(
        {
          accounts: { unmapped: 'ignore' },
          customers: { unmapped: 'ignore', rename: { PHONE: ['mobile', 'landline'] } },
        },
        { phone_default_country: 'GB' },
      ),
    });
    const result = migrate(['validate', dir, '--json']);
    const report = JSON.parse(result.stdout) as { errors: Array<Record<string, unknown>> };
    expect(
      report.errors.map((error) => [error['file'], error['line'], error['column'], error['attr'], error['code']]),
    ).toEqual([
      ['customers.csv', 2, 'PHONE', 'customers.0.mobile', 'invalid_phone_number'],
      ['customers.csv', 2, 'PHONE', 'customers.0.landline', 'invalid_phone_number'],
    ]);
    const text = migrate(['validate', dir]).stdout;
    expect(text).toContain('customers.0.mobile');
    expect(text).toContain('not a valid GB number');
    expect(text).toContain(
      'Columns left out (not documented fields; "unmapped": "ignore"):\n  accounts.csv (2): OLD_FLAG, CUST_NO\n  customers.csv (1): SHOE\n',
    );
    expect(text).not.toContain('unknown_column');
  });
});
