import { describe, expect, it } from 'vitest';
import {
  accountPayloadSchema,
  notesRequestSchema,
  transactionsRequestSchema,
  validateAccountPayload,
  validateTransactionsRequest,
} from '../../src/schema/index.js';
import { accountPayloadFits, notesRequestFits, transactionsRequestFits } from '../../src/schema/quick-check.js';

// The quick check may say yes only where the schema says yes: every payload below is judged by both.

const full = {
  import_supplier: 'ACME',
  external_account_number: 'A-1',
  unknown_occupier: false,
  customers: [
    {
      given_name: 'Ada',
      family_name: 'Lovelace',
      email: 'ada@example.org',
      mobile: '+447911123456',
      landline: '+442079460000',
      date_of_birth: '1990-02-28',
      title: 'Dr',
      salutation: 'Dear Ada',
      customer_preferences: { opted_into_sms: true, is_user_psr_consent_obtained: false },
    },
  ],
  billing_email: 'bills@example.org',
  billing_name: 'Ada Lovelace',
  billing_sub_name: 'c/o',
  billing_customer_reference: 'REF1',
  billing_address: {
    name: 'Ada',
    organization: 'Org',
    street_address: '1 High St',
    locality: 'Leeds',
    postal_code: 'LS1 1AB',
    country: 'GB',
    delivery_point_identifier: '12345678901',
  },
  account_billing_options: { period_length: 'MONTHLY', period_start_day: 28, use_industry_billing: false },
  account_type: 'DOMESTIC',
  date_of_sale: '2024-02-29',
  sales_channel: 'web',
  sales_subchannel: 'partner',
  communication_preference: 'ONLINE',
  document_accessibility: 'BRAILLE',
  transfer_balance: -12.5,
  operations_team_name: 'Team',
  supply_addresses: [
    {
      supply_address1: '1 High St',
      supply_postcode: 'LS1 1AB',
      customer_at_supply_address_from_date: '2020-01-01',
      primary_place_of_residence_since: '2019-12-31',
    },
  ],
};

type Payload = Record<string, unknown>;
const customer = full.customers[0] as Payload;
const withField = (field: string, value: unknown): Payload => ({ ...full, [field]: value });
const withCustomer = (field: string, value: unknown): Payload => ({
  ...full,
  customers: [{ ...customer, [field]: value }],
});
const withNested = (list: 'billing_address' | 'account_billing_options', field: string, value: unknown): Payload => ({
  ...full,
  [list]: { ...full[list], [field]: value },
});
const withSupply = (field: string, value: unknown): Payload => ({
  ...full,
  supply_addresses: [{ ...full.supply_addresses[0], [field]: value }],
});
const without = (field: string): Payload => Object.fromEntries(Object.entries(full).filter(([key]) => key !== field));

const refused: Array<[string, Payload]> = [
  ['no supplier', without('import_supplier')],
  ['no account number', without('external_account_number')],
  ['an empty supplier', withField('import_supplier', '')],
  ['an account number of 129 characters', withField('external_account_number', 'x'.repeat(129))],
  ['an undocumented field', withField('extra', 'x')],
  ['a number for text', withField('billing_name', 5)],
  ['a test e-mail address', withField('billing_email', 'test@example.org')],
  ['an e-mail address without a domain', withField('billing_email', 'ada@example')],
  ['an e-mail address of 255 characters', withField('billing_email', `${'a'.repeat(243)}@example.org`)],
  ['an account type not in the list', withField('account_type', 'domestic')],
  ['a date that does not exist', withField('date_of_sale', '2023-02-29')],
  ['an infinite balance', withField('transfer_balance', Number.POSITIVE_INFINITY)],
  ['a balance as text', withField('transfer_balance', '1.00')],
  ['customers not a list', withField('customers', customer)],
  ['a customer that is not an object', withField('customers', ['Ada'])],
  ['an invalid mobile', withCustomer('mobile', '+4479')],
  ['a national landline', withCustomer('landline', '02079460000')],
  ['a title of 21 characters', withCustomer('title', 'x'.repeat(21))],
  ['a customer field not documented', withCustomer('middle_name', 'B')],
  ['a preference that is not a boolean', withCustomer('customer_preferences', { opted_into_sms: 'yes' })],
  ['a country in lower case', withNested('billing_address', 'country', 'gb')],
  ['a billing address without country', { ...full, billing_address: { name: 'Ada' } }],
  [
    'a delivery point identifier of 12 characters',
    withNested('billing_address', 'delivery_point_identifier', 'x'.repeat(12)),
  ],
  ['a period start day of 29', withNested('account_billing_options', 'period_start_day', 29)],
  ['a period start day of 1.5', withNested('account_billing_options', 'period_start_day', 1.5)],
  ['a period length not in the list', withNested('account_billing_options', 'period_length', 'YEARLY')],
  [
    'a supply address without its postcode',
    {
      ...full,
      supply_addresses: [{ supply_address1: '1 High St', customer_at_supply_address_from_date: '2020-01-01' }],
    },
  ],
  ['a supply postcode of 11 characters', withSupply('supply_postcode', 'x'.repeat(11))],
  ['a supply date that is not a date', withSupply('customer_at_supply_address_from_date', '01/01/2020')],
];

describe('the quick check of an account payload', () => {
  it('accepts a payload with every field it knows, as the schema does', () => {
    expect(accountPayloadSchema.safeParse(full).success).toBe(true);
    expect(accountPayloadFits(full)).toBe(true);
    expect(accountPayloadFits({ import_supplier: 'ACME', external_account_number: 'A-1' })).toBe(true);
  });

  it.each(refused)('leaves %s to the schema, which refuses it', (_, payload) => {
    expect(accountPayloadSchema.safeParse(payload).success).toBe(false);
    expect(accountPayloadFits(payload)).toBe(false);
  });

  it.each([
    ['notes', withField('notes', [{ body: 'hello' }])],
    ['metadata', withField('metadata', [{ key: 'k', value: {} }])],
    ['an undefined value', withField('billing_name', undefined)],
  ])('leaves %s to the schema, which accepts them', (_, payload) => {
    expect(accountPayloadSchema.safeParse(payload).success).toBe(true);
    expect(accountPayloadFits(payload)).toBe(false);
    expect(validateAccountPayload(payload, { today: '2026-01-01' })).toEqual([]);
  });

  it("still reports the schema's problems with their codes and attrs", () => {
    const issues = validateAccountPayload(withCustomer('mobile', '+4479'), { today: '2026-01-01' });
    expect(issues.map((issue) => `${issue.attr}:${issue.code}`)).toEqual(['customers.0.mobile:invalid_phone_number']);
  });
});

const transaction = {
  transaction_id: 'T-1',
  transaction_date: '2025-01-31',
  amount: 12.5,
  type: 'PAYMENT',
  reason: 'r',
  reference: 'ref',
  payment_type: 'BACS',
  display_note: '',
  note: 'n',
  product_code: 'P',
};
const transactions = { import_supplier: 'ACME', external_account_number: 'A-1', transactions: [transaction] };
const withTransaction = (field: string, value: unknown): Payload => ({
  ...transactions,
  transactions: [{ ...transaction, [field]: value }],
});
const note = {
  body: 'Called about the bill',
  document_paths: [{ document_path: 'letters/2024/a.pdf' }],
  created_at: '2024-03-31T01:30:00+01:00',
  is_pinned: true,
  unpin_at: '2024-04-30T00:00:00Z',
};
const notes = { import_supplier: 'ACME', external_account_number: 'A-1', notes: [note] };
const withNote = (field: string, value: unknown): Payload => ({ ...notes, notes: [{ ...note, [field]: value }] });

const refusedRecords: Array<
  [string, Payload, (body: unknown) => boolean, { safeParse: (body: unknown) => { success: boolean } }]
> = [
  ['no transactions', { ...transactions, transactions: [] }, transactionsRequestFits, transactionsRequestSchema],
  [
    'a transaction without an id',
    withTransaction('transaction_id', undefined),
    transactionsRequestFits,
    transactionsRequestSchema,
  ],
  [
    'a transaction type not in the list',
    withTransaction('type', 'REFUND'),
    transactionsRequestFits,
    transactionsRequestSchema,
  ],
  [
    'a payment type not in the list',
    withTransaction('payment_type', 'IOU'),
    transactionsRequestFits,
    transactionsRequestSchema,
  ],
  ['an amount as text', withTransaction('amount', '12.50'), transactionsRequestFits, transactionsRequestSchema],
  [
    'a note of 1,001 characters',
    withTransaction('note', 'x'.repeat(1001)),
    transactionsRequestFits,
    transactionsRequestSchema,
  ],
  ['an empty reason', withTransaction('reason', ''), transactionsRequestFits, transactionsRequestSchema],
  [
    'a transaction field not documented',
    withTransaction('memo', 'x'),
    transactionsRequestFits,
    transactionsRequestSchema,
  ],
  [
    'a request without its supplier',
    { ...transactions, import_supplier: undefined },
    transactionsRequestFits,
    transactionsRequestSchema,
  ],
  ['no notes', { ...notes, notes: [] }, notesRequestFits, notesRequestSchema],
  ['an empty note body', withNote('body', ''), notesRequestFits, notesRequestSchema],
  ['a datetime without an offset', withNote('created_at', '2024-03-31T01:30:00'), notesRequestFits, notesRequestSchema],
  [
    'a document path with ..',
    withNote('document_paths', [{ document_path: 'a/../../b.pdf' }]),
    notesRequestFits,
    notesRequestSchema,
  ],
  [
    'a document path with a backslash',
    withNote('document_paths', [{ document_path: 'a\\b.pdf' }]),
    notesRequestFits,
    notesRequestSchema,
  ],
  ['an empty document path', withNote('document_paths', [{ document_path: '' }]), notesRequestFits, notesRequestSchema],
  ['a pin flag as text', withNote('is_pinned', 'yes'), notesRequestFits, notesRequestSchema],
];

describe('the quick check of notes and transactions requests', () => {
  it('accepts requests with every field it knows, as the schemas do', () => {
    expect(transactionsRequestSchema.safeParse(transactions).success).toBe(true);
    expect(transactionsRequestFits(transactions)).toBe(true);
    expect(notesRequestSchema.safeParse(notes).success).toBe(true);
    expect(notesRequestFits(notes)).toBe(true);
  });

  it.each(refusedRecords)('leaves %s to the schema, which refuses it', (_, body, quick, schema) => {
    expect(schema.safeParse(body).success).toBe(false);
    expect(quick(body)).toBe(false);
  });

  it('leaves line items to the schema, which judges them', () => {
    const body = withTransaction('line_items', [
      { start_date: '2025-01-01', end_date: '2025-01-31', number_of_units: 1, net_amount: 'x' },
    ]);
    expect(transactionsRequestFits(body)).toBe(false);
    expect(validateTransactionsRequest(body, { today: '2026-01-01' }).map((issue) => issue.attr)).toContain(
      'transactions.0.line_items.0.net_amount',
    );
  });
});
