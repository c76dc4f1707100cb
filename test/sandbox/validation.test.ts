import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { validateAccountRequest } from '../../src/schema/index.js';
import { account, openSession, TODAY, type Session } from './helpers.js';

// Issue 2 "Validation rules", one case per rule, over real HTTP: the sandbox answers with the
// expected code at the expected attr, and exactly what the local validator (src/schema) says.

let s: Session;
beforeAll(async () => {
  s = await openSession();
});
afterAll(() => s.sandbox.close());

const customer = { given_name: 'Ada', family_name: 'Lovelace' };
const ledger = (extra: Record<string, unknown>) => ({ ledger_code: 'MAIN', ...extra });
const txn = (extra: Record<string, unknown> = {}) => ({
  transaction_id: 't1',
  transaction_date: TODAY,
  amount: 5,
  type: 'CHARGE',
  ...extra,
});

const cases: Array<[string, Record<string, unknown>, string]> = [
  ['a field of the wrong type', { unknown_occupier: 'yes' }, 'unknown_occupier:invalid'],
  ['a missing required field', { external_account_number: undefined }, 'external_account_number:required'],
  ['an undocumented field', { favourite_colour: 'blue' }, 'favourite_colour:unknown_field'],
  [
    'an undocumented nested field',
    { customers: [{ ...customer, shoe_size: 9 }] },
    'customers.0.shoe_size:unknown_field',
  ],
  ['a date that does not exist', { date_of_sale: '2023-02-29' }, 'date_of_sale:invalid_date'],
  ['a date in another format', { date_of_sale: '01/02/2023' }, 'date_of_sale:invalid_date'],
  [
    'a datetime without offset',
    { notes: [{ body: 'x', created_at: '2024-01-01T10:00:00' }] },
    'notes.0.created_at:invalid_datetime',
  ],
  ['an invalid e-mail', { billing_email: 'nobody-at-example.org' }, 'billing_email:invalid_email'],
  [
    'a test e-mail address',
    { customers: [{ ...customer, email: 'test@example.org' }] },
    'customers.0.email:possible_test_email_address',
  ],
  [
    'a national phone number',
    { customers: [{ ...customer, landline: '02072343456' }] },
    'customers.0.landline:invalid_phone_number',
  ],
  [
    'a value outside a documented enum',
    { communication_preference: 'CARRIER_PIGEON' },
    'communication_preference:invalid_choice',
  ],
  [
    'a transaction type outside the enum',
    { ledgers: [ledger({ current_statement_transactions: [txn({ type: 'GIFT' })] })] },
    'ledgers.0.current_statement_transactions.0.type:invalid_choice',
  ],
  [
    'a document path leaving the root',
    {
      statements: [
        {
          statement_id: 's',
          bill_period_from_date: '2024-01-01',
          bill_period_to_date: '2024-01-31',
          statement_path: 'a/../../b.pdf',
        },
      ],
    },
    'statements.0.statement_path:invalid_document_path',
  ],
  ['customers on an unknown-occupier account', { unknown_occupier: true }, 'customers:customer_with_unknown_occupier'],
  [
    'a domestic customer without family name',
    { customers: [{ given_name: 'Ada' }] },
    'customers.0.family_name:customer_family_name_required',
  ],
  [
    'industry billing with period data',
    { account_billing_options: { use_industry_billing: true, period_length: 'MONTHLY' } },
    'account_billing_options:account_billing_options_industry_billing_with_period_data',
  ],
  [
    'duplicate metadata keys',
    {
      metadata: [
        { key: 'a', value: {} },
        { key: 'a', value: {} },
      ],
    },
    'metadata.1.key:metadata_has_duplicate_keys',
  ],
  [
    'a transaction in the future',
    { ledgers: [ledger({ current_statement_transactions: [txn({ transaction_date: '2999-01-01' })] })] },
    'ledgers.0.current_statement_transactions.0.transaction_date:transaction_in_future',
  ],
  [
    'ledger balances not adding up to transfer_balance',
    { transfer_balance: 10, ledgers: [ledger({ ledger_balance: 4 })] },
    'transfer_balance:ledger_balances_not_equal_to_transfer_balance',
  ],
  [
    'a note without body or document paths',
    { notes: [{ is_pinned: true }] },
    'notes.0:note_body_or_document_path_not_found',
  ],
];

describe('account payload rules over HTTP', () => {
  it.each(cases)('%s', async (_name, change, expected) => {
    const payload = account('R-1', change);
    for (const [key, value] of Object.entries(change)) if (value === undefined) delete payload[key];
    const answer = await s.post('/v2/data-import/accounts/validate/', { payload });
    expect(answer.status).toBe(400);
    expect(answer.body.code).toBe('account_failed_validation');
    const found = answer.body.errors.map((item: { attr: string; code: string }) => `${item.attr}:${item.code}`);
    expect(found).toContain(expected);
    expect(answer.body.errors).toEqual(validateAccountRequest({ payload }, { today: TODAY }));
  });
});
