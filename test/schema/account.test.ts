import { describe, expect, it } from 'vitest';
import { validateAccountPayload, validateNotesRequest, validateTransactionsRequest } from '../../src/schema/index.js';

const valid = {
  import_supplier: 'ACME',
  external_account_number: 'A-1',
  account_type: 'DOMESTIC',
  customers: [{ given_name: 'Ada', family_name: 'Lovelace', email: 'ada@example.org', mobile: '+447911123456' }],
  account_billing_options: { period_length: 'MONTHLY', period_start_day: 1, use_industry_billing: false },
  supply_addresses: [
    { supply_address1: '1 High St', supply_postcode: 'AB1 2CD', customer_at_supply_address_from_date: '2020-01-01' },
  ],
};

describe('account payload validation', () => {
  it('accepts a valid payload', () => {
    expect(validateAccountPayload(valid, { today: '2026-01-01' })).toEqual([]);
  });

  it('reports every problem at once, with platform codes and attr paths', () => {
    const issues = validateAccountPayload(
      {
        ...valid,
        unknown_occupier: true,
        date_of_sale: '2023-02-30',
        customers: [{ family_name: 'X', landline: 'abcde' }],
        extra: 1,
      },
      { today: '2026-01-01' },
    );
    const codes = issues.map((item) => `${item.attr}:${item.code}`).sort();
    expect(codes).toEqual([
      'customers.0.landline:invalid_phone_number',
      'customers:customer_with_unknown_occupier',
      'date_of_sale:invalid_date',
      'extra:unknown_field',
    ]);
  });

  it('needs body or document_paths on a note, and refuses .. in paths', () => {
    const issues = validateNotesRequest({
      import_supplier: 'ACME',
      external_account_number: 'A-1',
      notes: [{ is_pinned: true }, { document_paths: [{ document_path: '../etc/passwd' }] }],
    });
    expect(issues.map((item) => `${item.attr}:${item.code}`)).toEqual([
      'notes.1.document_paths.0.document_path:invalid_document_path',
      'notes.0:note_body_or_document_path_not_found',
    ]);
  });

  it('refuses duplicate transaction ids and negative payments', () => {
    const base = { transaction_date: '2025-01-01', type: 'PAYMENT' };
    const issues = validateTransactionsRequest(
      {
        import_supplier: 'ACME',
        external_account_number: 'A-1',
        transactions: [
          { ...base, transaction_id: 't1', amount: -1 },
          { ...base, transaction_id: 't1', amount: 2 },
        ],
      },
      { today: '2026-01-01' },
    );
    expect(issues.map((item) => `${item.attr}:${item.code}`).sort()).toEqual([
      'transactions.0.amount:negative_payment_amount',
      'transactions.1.transaction_id:duplicate_transaction_ids',
    ]);
  });
});
