import { describe, expect, it } from 'vitest';
import { exportMappingOf } from '../../src/mapping/mapping-rules.js';
import { jsonKey, mapJsonRecord, planFile } from '../../src/mapping/record.js';
import { parseJson } from '../../src/sources/json-value.js';

// A JSON record as the readers give it (numbers with their source text) -> its payload fragment: every value as
// the export holds it.

const config = exportMappingOf(
  { mapping: { accounts: { values: { account_type: { '2': 'BUSINESS', '1.0': 'DOMESTIC' } } } } },
  'ACME',
  undefined,
);
const plan = planFile('accounts', 'accounts.json', [], config);
const record = (text: string) => parseJson(text) as Record<string, unknown>;

describe('a JSON record mapped field by field', () => {
  it('keeps the digits of a number given for the external account number: two numbers never become one', () => {
    const first = record('{"external_account_number": 90000000000000000001}');
    const second = record('{"external_account_number": 90000000000000000000}');
    expect(jsonKey(plan, first, () => undefined)).toBe('90000000000000000001');
    expect(jsonKey(plan, second, () => undefined)).toBe('90000000000000000000');
    expect(mapJsonRecord(plan, 1, first).externalAccountNumber).toBe('90000000000000000001');
  });

  it('sends a number given for a text field as written, and a JSON number field exactly', () => {
    const mapped = mapJsonRecord(
      plan,
      3,
      record('{"external_account_number": "A-1", "billing_customer_reference": 1.10, "transfer_balance": 12.50}'),
    );
    expect(mapped.fields).toMatchObject({ billing_customer_reference: '1.10', transfer_balance: 12.5 });
    expect(mapped.issues).toEqual([]);
  });

  it('looks a JSON number up in a value map by its text', () => {
    const mapped = mapJsonRecord(plan, 1, record('{"external_account_number": "A-1", "account_type": 2}'));
    expect(mapped.fields['account_type']).toBe('BUSINESS');
    const written = mapJsonRecord(plan, 1, record('{"external_account_number": "A-1", "account_type": 1.0}'));
    expect(written.fields['account_type']).toBe('DOMESTIC');
  });

  it('maps inline customers field by field (digits kept), and refuses a number no JSON number carries', () => {
    const mapped = mapJsonRecord(
      plan,
      1,
      record(
        '{"external_account_number": "A-1", "customers": [{"given_name": 1.10, "family_name": "Zoë"}, 1e309],' +
          ' "transfer_balance": 1e309}',
      ),
    );
    expect(mapped.fields['customers']).toEqual([{ given_name: '1.10', family_name: 'Zoë' }, '1e309']);
    expect(mapped.fields['transfer_balance']).toBe('1e309');
    expect(mapped.issues.map((issue) => [issue.attr, issue.column, issue.code])).toEqual([
      ['customers.1', 'customers', 'number_out_of_range'],
      ['transfer_balance', 'transfer_balance', 'number_out_of_range'],
    ]);
  });
});
