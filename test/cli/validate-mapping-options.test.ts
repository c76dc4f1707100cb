import { readFileSync } from 'node:fs';
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
    const report = JSON.parse(result.stdout) as {
      errors: Array<Record<string, unknown>>;
      files: Array<{ file: string; ignored_columns?: string[] }>;
    };
    expect(report.files.map((file) => [file.file, file.ignored_columns])).toEqual([
      ['accounts.csv', ['OLD_FLAG', 'CUST_NO']],
      ['customers.csv', ['SHOE']],
      ['supply_addresses.csv', undefined],
    ]);
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

describe('file globs and parts of a kind', () => {
  const NOTES_HEADER = 'external_account_number,body,created_at';

  it('reads every file a glob matches as the kind, each record at its own file and line', () => {
    const dir = exportDir({
      ...withParts({ 'accounts.csv': `${ACCOUNT_HEADER}\n${account('A-1')}\n` }),
      'THISTLE_NOTES_1.csv': `${NOTES_HEADER}\nA-1,first,2026-01-01T00:00:00Z\n`,
      'THISTLE_NOTES_2.csv': `${NOTES_HEADER}\nA-1,second,2026-01-02T00:00:00Z\nA-1,third,yesterday\n`,
      'migrate.config.json': config({ notes: { file: 'THISTLE_NOTES_*.csv' } }),
    });
    const result = migrate(['validate', dir, '--json']);
    expect(result.code).toBe(5);
    const report = JSON.parse(result.stdout) as {
      errors: Array<Record<string, unknown>>;
      files: Array<{ file: string; kind: string; records: number }>;
    };
    expect(report.files.map((file) => [file.file, file.kind, file.records])).toEqual([
      ['accounts.csv', 'accounts', 1],
      ['customers.csv', 'customers', 1],
      ['supply_addresses.csv', 'supply_addresses', 1],
      ['THISTLE_NOTES_1.csv', 'notes', 1],
      ['THISTLE_NOTES_2.csv', 'notes', 2],
    ]);
    expect(report.errors.map((error) => [error['file'], error['line'], error['column'], error['code']])).toEqual([
      ['THISTLE_NOTES_2.csv', 3, 'created_at', 'invalid_datetime'],
    ]);
  });

  it.each([['validate'], ['push', '--sandbox']])(
    '%s stops (exit 2) on a part of a kind no glob declares',
    (...args) => {
      const dir = exportDir({
        ...withParts({ 'accounts.csv': `${ACCOUNT_HEADER}\n${account('A-1')}\n` }),
        'notes.csv': `${NOTES_HEADER}\nA-1,first,2026-01-01T00:00:00Z\n`,
        'notes_part2.csv': `${NOTES_HEADER}\nA-1,second,2026-01-02T00:00:00Z\n`,
      });
      const result = migrate([...args, dir, ...(args[0] === 'push' ? ['--state', `${dir}-state`] : [])]);
      expect(result.stderr).toMatch(
        /^migrate: notes_part2\.csv: looks like a part of the notes records but is not read as one: declare the notes files/u,
      );
      expect(result.code).toBe(2);
    },
  );
});

describe('value maps, number formats and local times', () => {
  it('reads legacy values, £ amounts and UK local times, and names each value that does not fit', () => {
    const dir = exportDir({
      ...withParts({ 'accounts.csv': `${ACCOUNT_HEADER},BAL\n${account('A-1')},1529\n${account('A-2')},-200\n` }),
      'notes.csv':
        'external_account_number,body,created_at,PIN\nA-1,a,25/10/2026 01:30,Y\nA-1,b,29/03/2026 01:30,y\n' +
        'A-2,c,25/10/2026 02:30,maybe\n',
      'transactions.csv':
        'external_account_number,transaction_id,type,amount,transaction_date,reason\n' +
        'A-1,T1,PAYMENT,"£1,234.50-",2026-01-01,x\nA-2,T2,CHARGE,"£1,23.4",2026-01-01,y\n',
      'migrate.config.json': config({
        accounts: { rename: { BAL: 'transfer_balance' }, scale: { transfer_balance: -0.01 } },
        notes: {
          datetime_format: 'DD/MM/YYYY HH:mm',
          timezone: 'Europe/London',
          rename: { PIN: 'is_pinned' },
          values: { is_pinned: { Y: true, '*': false } },
        },
        transactions: { number_format: { currency: '£', thousands: ',', negative: 'trailing' } },
      }),
    });
    const result = migrate(['validate', dir, '--json']);
    const report = JSON.parse(result.stdout) as { errors: Array<Record<string, unknown>> };
    expect(report.errors.map((error) => [error['file'], error['line'], error['column'], error['code']])).toEqual([
      ['notes.csv', 2, 'created_at', 'ambiguous_date'],
      ['notes.csv', 3, 'created_at', 'invalid_datetime'],
      // "£1,234.50-" was read as -1234.50 (the trailing minus): a payment cannot be negative.
      ['transactions.csv', 2, 'amount', 'negative_payment_amount'],
      ['transactions.csv', 3, 'amount', 'invalid_number'],
    ]);
    expect(report.errors[3]?.['message']).toBe(
      'amount: "£1,23.4" is not a number in the mapping file\'s number_format (currency "£", thousands ",", ' +
        'negative trailing; "." as the decimal point).',
    );
  });
});

describe('orphan records that nearly name an account', () => {
  it('are a warning naming both: the zeros a spreadsheet stripped', () => {
    const dir = exportDir({
      ...withParts({ 'accounts.csv': `${ACCOUNT_HEADER}\n${account('0012345')}\n` }),
      'notes.csv': 'external_account_number,import_supplier,body\n12345,ACME,a note\n',
    });
    const result = migrate(['validate', dir]);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(
      'Warning: 1 account number(s) of post-import records not in this export match an account of the export but ' +
        'for spaces, leading zeros or case (a spreadsheet strips leading zeros): correct the numbers in their files ' +
        'if they are the same account.\n  12345 (notes.csv:2) ~ account 0012345 (accounts.csv:2)\n',
    );
    const json = JSON.parse(migrate(['validate', dir, '--json']).stdout) as { near_keys: unknown[] };
    expect(json.near_keys).toEqual([
      {
        external_account_number: '12345',
        file: 'notes.csv',
        line: 2,
        account: '0012345',
        account_file: 'accounts.csv',
        account_line: 2,
      },
    ]);
  });
});

describe('on_invalid: omit', () => {
  it('sends the account without the invalid value, and lists it in the output and beside the errors CSV', () => {
    const dir = exportDir({
      ...withParts({ 'accounts.csv': `${ACCOUNT_HEADER}\n${account('A-1')}\n${account('A-2')}\n` }),
      'customers.csv':
        'external_account_number,given_name,family_name,landline\nA-1,Ada,Lovelace,0161 12\nA-2,Bo,Ng,0161 496 0000\n',
      'migrate.config.json': config(
        { customers: { on_invalid: { landline: 'omit' } } },
        { phone_default_country: 'GB' },
      ),
    });
    const errorsCsv = `${dir}-errors.csv`;
    const result = migrate(['validate', dir, '--errors-csv', errorsCsv]);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(
      'Values omitted (on_invalid: omit), the account sent without them: 1\n' +
        '  customers.csv:2 landline "0161 12"  invalid_phone_number  landline: "0161 12" is not a valid GB number',
    );
    expect(result.stdout).toContain('2 account(s): 2 valid, 0 invalid; 0 error(s).');
    expect(readFileSync(`${dir}-errors.omitted.csv`, 'utf8')).toBe(
      'file,line,column,attr,external_account_number,value,code,message\n' +
        'customers.csv,2,landline,landline,A-1,0161 12,invalid_phone_number,"landline: ""0161 12"" is not a valid GB ' +
        "number (a number without + is read as a GB number, the mapping file's phone_default_country); correct it, " +
        'or give it in international format with +."\n',
    );
    const json = JSON.parse(migrate(['validate', dir, '--json']).stdout) as { omitted: Array<Record<string, unknown>> };
    expect(json.omitted.map((row) => [row['file'], row['line'], row['attr'], row['value']])).toEqual([
      ['customers.csv', 2, 'landline', '0161 12'],
    ]);
  });

  it('push sends the account without the value and says how many values were omitted', () => {
    const dir = exportDir({
      ...withParts({ 'accounts.csv': `${ACCOUNT_HEADER}\n${account('A-1')}\n` }),
      'customers.csv': 'external_account_number,given_name,family_name,landline\nA-1,Ada,Lovelace,0161 12\n',
      'migrate.config.json': config(
        { customers: { on_invalid: { landline: 'omit' } } },
        { phone_default_country: 'GB' },
      ),
    });
    const result = migrate(['push', dir, '--sandbox', '--state', `${dir}-state`, '--quiet']);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('push finished: everything done');
    expect(result.stdout).toContain(
      "  1 invalid values omitted under the mapping file's on_invalid, their accounts sent without them",
    );
  });
});
