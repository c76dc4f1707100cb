import { describe, expect, it } from 'vitest';
import {
  validateAccountPayload,
  validateAccountRequest,
  validateHistoricalStatementsRequest,
  validateNotesRequest,
  validatePaymentInstructionRequest,
  validateTransactionsRequest,
} from '../../src/schema/index.js';

const today = '2026-11-22';
const customer = { given_name: 'Ada', family_name: 'Lovelace', email: 'ada@example.org', mobile: '+447911123456' };
const account = {
  import_supplier: 'ACME',
  external_account_number: 'A-1',
  account_type: 'DOMESTIC',
  customers: [customer],
  supply_addresses: [
    { supply_address1: '1 High St', supply_postcode: 'AB1 2CD', customer_at_supply_address_from_date: '2020-01-01' },
  ],
};
const charge = { transaction_id: 't1', transaction_date: '2026-11-02', amount: 10, type: 'CHARGE' };
const supplyCharge = {
  transaction_id: 's1',
  transaction_date: '2026-11-02',
  type: 'SUPPLY_CHARGE',
  amount: 12.6,
  product_code: 'STD',
  line_items: [
    { start_date: '2026-10-01', end_date: '2026-10-31', number_of_units: 100, price_per_unit: 0.12, net_amount: 12 },
  ],
  tax_items: [{ amount: 0.6, tax_type: 'VAT', value_taxed: 12, rate: 0.05, unit_type: 'PROPORTION' }],
};

const codesOf = (issues: Array<{ attr: string; code: string }>) =>
  issues.map((item) => `${item.attr}:${item.code}`).sort();

describe('account payload rules: one mutation, one expected issue', () => {
  const cases: Array<[string, Record<string, unknown>, string]> = [
    ['missing import supplier', { import_supplier: undefined }, 'import_supplier:required'],
    ['missing external account number', { external_account_number: undefined }, 'external_account_number:required'],
    [
      'too long external account number',
      { external_account_number: 'x'.repeat(129) },
      'external_account_number:max_length',
    ],
    ['empty string is not "no data"', { billing_name: '' }, 'billing_name:min_length'],
    ['impossible date', { date_of_sale: '2023-02-30' }, 'date_of_sale:invalid_date'],
    ['date in another format', { date_of_sale: '30/01/2023' }, 'date_of_sale:invalid_date'],
    ['enum outside the documented values', { account_type: 'HOUSEHOLD' }, 'account_type:invalid_choice'],
    ['undocumented field', { favourite_colour: 'blue' }, 'favourite_colour:unknown_field'],
    ['wrong type', { unknown_occupier: 'yes' }, 'unknown_occupier:invalid'],
    ['bad billing e-mail', { billing_email: 'not-an-email' }, 'billing_email:invalid_email'],
    ['blackhole billing e-mail', { billing_email: 'blackhole+1@example.org' }, 'billing_email:billing_email_not_valid'],
    ['test billing e-mail', { billing_email: 'test@example.org' }, 'billing_email:possible_test_email_address'],
    [
      'national phone number',
      { customers: [{ ...customer, landline: '02072343456' }] },
      'customers.0.landline:invalid_phone_number',
    ],
    [
      'letters for a phone number',
      { customers: [{ ...customer, mobile: 'abcde' }] },
      'customers.0.mobile:invalid_phone_number',
    ],
    [
      'domestic customer without family name',
      { customers: [{ given_name: 'Ada' }] },
      'customers.0.family_name:customer_family_name_required',
    ],
    [
      'customer named The Occupier',
      { customers: [{ given_name: 'The', family_name: 'Occupier' }] },
      'customers.0:customer_may_not_be_named_the_occupier',
    ],
    [
      'customer named the occupier in one field',
      { customers: [{ family_name: '  the OCCUPIER ' }] },
      'customers.0:customer_may_not_be_named_the_occupier',
    ],
    [
      'customer named The Occupier, blank family name',
      { account_type: 'BUSINESS', customers: [{ given_name: 'The Occupier', family_name: '  ' }] },
      'customers.0:customer_may_not_be_named_the_occupier',
    ],
    ['unknown occupier with customers', { unknown_occupier: true }, 'customers:customer_with_unknown_occupier'],
    ['null where a value is required', { external_account_number: null }, 'external_account_number:null'],
    [
      'null inside a list item',
      {
        supply_addresses: [
          { supply_address1: '1 High St', supply_postcode: null, customer_at_supply_address_from_date: '2020-01-01' },
        ],
      },
      'supply_addresses.0.supply_postcode:null',
    ],
    [
      'undocumented customer field',
      { customers: [{ ...customer, nickname: 'A' }] },
      'customers.0.nickname:unknown_field',
    ],
    [
      'supply address without postcode',
      { supply_addresses: [{ supply_address1: '1 High St', customer_at_supply_address_from_date: '2020-01-01' }] },
      'supply_addresses.0.supply_postcode:required',
    ],
    [
      'billing address without country',
      { billing_address: { street_address: '1 High St' } },
      'billing_address.country:required',
    ],
    [
      'street and structured address',
      { billing_address: { country: 'GB', street_address: '1 High St', structured_street_address: { a: 1 } } },
      'billing_address.structured_street_address:fields_are_mutually_exclusive',
    ],
    [
      'period start day above 28',
      { account_billing_options: { period_length: 'MONTHLY', period_start_day: 31 } },
      'account_billing_options.period_start_day:max_value',
    ],
    [
      'industry billing with period data',
      { account_billing_options: { use_industry_billing: true, period_length: 'MONTHLY' } },
      'account_billing_options:account_billing_options_industry_billing_with_period_data',
    ],
    [
      'neither industry billing nor period',
      { account_billing_options: { period_start_day: 1 } },
      'account_billing_options.period_length:account_billing_options_period_data_required',
    ],
    [
      'quarterly without start month',
      { account_billing_options: { period_length: 'QUARTERLY', period_start_day: 1 } },
      'account_billing_options.period_start_month:account_billing_options_period_start_month_required',
    ],
    [
      'duplicate metadata keys',
      {
        metadata: [
          { key: 'k', value: {} },
          { key: 'k', value: {} },
        ],
      },
      'metadata.1.key:metadata_has_duplicate_keys',
    ],
    ['metadata value not an object', { metadata: [{ key: 'k', value: 3 }] }, 'metadata.0.value:invalid'],
    ['note without body or paths', { notes: [{ is_pinned: true }] }, 'notes.0:note_body_or_document_path_not_found'],
    [
      'statement path leaving the root',
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
    [
      'statement period backwards',
      { statements: [{ statement_id: 's', bill_period_from_date: '2024-02-01', bill_period_to_date: '2024-01-31' }] },
      'statements.0.bill_period_to_date:start_date_later_than_end_date',
    ],
    [
      'duplicate statement ids',
      {
        statements: [
          { statement_id: 's', bill_period_from_date: '2024-01-01', bill_period_to_date: '2024-01-31' },
          { statement_id: 's', bill_period_from_date: '2024-02-01', bill_period_to_date: '2024-02-28' },
        ],
      },
      'statements.1.statement_id:duplicate_statement_ids',
    ],
    [
      'duplicate ledger codes',
      { ledgers: [{ ledger_code: 'MAIN' }, { ledger_code: 'MAIN' }] },
      'ledgers.1.ledger_code:duplicate_ledger_entries_found',
    ],
    [
      'duplicate transaction ids across ledgers',
      {
        ledgers: [
          { ledger_code: 'A', current_statement_transactions: [charge] },
          { ledger_code: 'B', current_statement_transactions: [charge] },
        ],
      },
      'ledgers.1.current_statement_transactions.0.transaction_id:duplicate_transaction_ids',
    ],
    [
      'historical transactions without closing date',
      { ledgers: [{ ledger_code: 'A', historical_statement_transactions: [charge] }] },
      'ledgers.0.last_statement_closing_date:historical_statement_transactions_require_last_statement_closing_date',
    ],
    [
      'current transaction before closing date',
      {
        ledgers: [
          { ledger_code: 'A', last_statement_closing_date: '2026-11-05', current_statement_transactions: [charge] },
        ],
      },
      'ledgers.0.current_statement_transactions.0.transaction_date:current_statement_transaction_before_last_statement_closing_date',
    ],
    [
      'historical transaction after closing date',
      {
        ledgers: [
          { ledger_code: 'A', last_statement_closing_date: '2026-11-01', historical_statement_transactions: [charge] },
        ],
      },
      'ledgers.0.historical_statement_transactions.0.transaction_date:historical_statement_transaction_after_last_statement_closing_date',
    ],
    [
      'ledger balances not the transfer balance',
      { transfer_balance: 10, ledgers: [{ ledger_code: 'A', ledger_balance: 4 }] },
      'transfer_balance:ledger_balances_not_equal_to_transfer_balance',
    ],
  ];

  it('accepts the base payload', () => {
    expect(validateAccountPayload(account, { today })).toEqual([]);
  });

  it.each(cases)('%s', (_name, change, expected) => {
    const payload: Record<string, unknown> = { ...account, ...change };
    for (const [key, value] of Object.entries(change)) if (value === undefined) delete payload[key];
    expect(codesOf(validateAccountPayload(payload, { today }))).toEqual([expected]);
  });

  it('keeps attrs relative to the payload in a {payload} request', () => {
    expect(codesOf(validateAccountRequest({ payload: { ...account, date_of_sale: 'x' } }, { today }))).toEqual([
      'date_of_sale:invalid_date',
    ]);
    expect(codesOf(validateAccountRequest({ payload: account, task_params: {} }, { today }))).toEqual([
      'task_params:unknown_field',
    ]);
  });
});

describe('transaction rules', () => {
  const request = (transactions: unknown[]) => ({
    import_supplier: 'ACME',
    external_account_number: 'A-1',
    transactions,
  });
  const cases: Array<[string, Record<string, unknown>, string]> = [
    ['type outside the five', { ...charge, type: 'FEE' }, 'transactions.0.type:invalid_choice'],
    [
      'transaction in the future',
      { ...charge, transaction_date: '2026-11-23' },
      'transactions.0.transaction_date:transaction_in_future',
    ],
    ['negative payment', { ...charge, type: 'PAYMENT', amount: -5 }, 'transactions.0.amount:negative_payment_amount'],
    [
      'reference on a charge',
      { ...charge, reference: 'R1' },
      'transactions.0.reference:field_not_allowed_for_transaction_type',
    ],
    [
      'supply charge without product code',
      { ...supplyCharge, product_code: undefined },
      'transactions.0.product_code:required',
    ],
    [
      'line item end before start',
      { ...supplyCharge, line_items: [{ ...supplyCharge.line_items[0], end_date: '2026-09-01' }] },
      'transactions.0.line_items.0.end_date:start_date_later_than_end_date',
    ],
    [
      'line item net not price x units',
      { ...supplyCharge, amount: 13.6, line_items: [{ ...supplyCharge.line_items[0], net_amount: 13 }] },
      'transactions.0.line_items.0.net_amount:incorrect_line_item_net_amount',
    ],
    [
      'amount not net plus tax',
      { ...supplyCharge, amount: 20 },
      'transactions.0.amount:ledger_transaction_amount_does_not_match_with_line_item_net_amount_and_tax_amount',
    ],
    [
      'units not two values',
      { ...supplyCharge, line_items: [{ ...supplyCharge.line_items[0], units: [1] }] },
      'transactions.0.line_items.0.units:line_item_units_must_be_two_values',
    ],
    [
      'tax unit type unknown',
      { ...supplyCharge, tax_items: [{ ...supplyCharge.tax_items[0], unit_type: 'PERCENT' }] },
      'transactions.0.tax_items.0.unit_type:invalid_choice',
    ],
  ];

  it('accepts a charge and a supply charge whose amounts add up', () => {
    expect(validateTransactionsRequest(request([charge, supplyCharge]), { today })).toEqual([]);
  });

  it.each(cases)('%s', (_name, transaction, expected) => {
    const clean = Object.fromEntries(Object.entries(transaction).filter(([, value]) => value !== undefined));
    expect(codesOf(validateTransactionsRequest(request([clean]), { today }))).toEqual([expected]);
  });

  it('refuses an empty transactions list', () => {
    expect(codesOf(validateTransactionsRequest(request([]), { today }))).toEqual(['transactions:min_length']);
  });
});

describe('post-import request rules', () => {
  const ids = { import_supplier: 'ACME', external_account_number: 'A-1' };

  it('notes: unpin_at may not be before created_at', () => {
    const issues = validateNotesRequest({
      ...ids,
      notes: [{ body: 'b', created_at: '2024-01-02T00:00:00Z', is_pinned: true, unpin_at: '2024-01-01T00:00:00Z' }],
    });
    expect(codesOf(issues)).toEqual(['notes.0.unpin_at:note_unpin_at_earlier_than_creation_date']);
  });

  it('notes: a datetime needs an offset', () => {
    expect(
      codesOf(validateNotesRequest({ ...ids, notes: [{ body: 'b', created_at: '2024-01-02T00:00:00' }] })),
    ).toEqual(['notes.0.created_at:invalid_datetime']);
  });

  it('historical statements: duplicate ids within a request', () => {
    const statement = {
      statement_id: 's',
      bill_period_from_date: '2024-01-01',
      bill_period_to_date: '2024-01-31',
      gross_amount: 1050,
    };
    expect(codesOf(validateHistoricalStatementsRequest({ ...ids, statements: [statement, statement] }))).toEqual([
      'statements.1.statement_id:duplicate_statement_ids',
    ]);
  });

  it('historical statements: gross_amount is an integer in minor units; a fraction (major units) is refused', () => {
    const statement = { statement_id: 's', bill_period_from_date: '2024-01-01', bill_period_to_date: '2024-01-31' };
    expect(validateHistoricalStatementsRequest({ ...ids, statements: [{ ...statement, gross_amount: 4050 }] })).toEqual(
      [],
    );
    expect(
      codesOf(validateHistoricalStatementsRequest({ ...ids, statements: [{ ...statement, gross_amount: 40.5 }] })),
    ).toEqual(['statements.0.gross_amount:invalid_integer']);
  });

  it('payment instruction: type from the documented list, reference required', () => {
    expect(validatePaymentInstructionRequest({ ...ids, vendor: 'STRIPE', reference: 'pi_1', type: 'CARD' })).toEqual(
      [],
    );
    expect(codesOf(validatePaymentInstructionRequest({ ...ids, vendor: 'STRIPE', type: 'CHEQUE' }))).toEqual([
      'reference:required',
      'type:invalid_choice',
    ]);
  });

  it('never throws on garbage', () => {
    for (const garbage of [null, 3, 'x', [], { notes: 'x' }, { transactions: [null, 1] }]) {
      expect(() => validateNotesRequest(garbage)).not.toThrow();
      expect(() => validateTransactionsRequest(garbage)).not.toThrow();
      expect(() => validateAccountRequest(garbage)).not.toThrow();
      expect(() => validateHistoricalStatementsRequest(garbage)).not.toThrow();
    }
  });
});
