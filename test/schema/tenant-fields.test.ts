import { describe, expect, it } from 'vitest';
import {
  tenantKindIssues,
  validateTransactionsRequest,
  withoutTenantFields,
  type TenantFields,
} from '../../src/schema/index.js';

// Tenant fields at every level of a body (docs/real-platform.md "Tenant fields"): left out of the spec's checks
// where declared, kept where not (so an undeclared extra field is still refused), and, inside JSON cells, checked for
// their declared kind.

const tenant: TenantFields = {
  transactions: { to_prepay_meter_serial_number: 'string' },
  line_items: { external_rate_identifier: 'string' },
  notes: { external_id: 'string' },
};

const lineItem = {
  start_date: '2024-01-01',
  end_date: '2024-01-31',
  number_of_units: 100,
  net_amount: 20,
  price_per_unit: 0.2,
  rate_band: 'CONSUMPTION_STANDARD',
};
const body = {
  import_supplier: 'ACME',
  external_account_number: 'A-1',
  transactions: [
    {
      transaction_id: 'T1',
      transaction_date: '2024-02-01',
      amount: 20,
      type: 'SUPPLY_CHARGE',
      product_code: 'P',
      to_prepay_meter_serial_number: '21E0012345',
      line_items: [{ ...lineItem, external_rate_identifier: 'R-7' }],
    },
  ],
};

describe('tenant fields in a body', () => {
  it("are left out of the spec's checks where declared, at the transaction and inside its line items", () => {
    expect(validateTransactionsRequest(body, { today: '2024-12-01' }).map((issue) => issue.code)).toContain(
      'unknown_field',
    );
    expect(
      validateTransactionsRequest(withoutTenantFields('transactions', body, tenant), { today: '2024-12-01' }),
    ).toEqual([]);
  });

  it('keep an undeclared extra field, so that the spec still refuses it', () => {
    const extra = { ...body, transactions: [{ ...body.transactions[0], colour: 'blue' }] };
    const stripped = withoutTenantFields('transactions', extra, tenant) as typeof extra;
    expect(stripped.transactions[0]).toHaveProperty('colour', 'blue');
    expect(stripped.transactions[0]).not.toHaveProperty('to_prepay_meter_serial_number');
    expect(body.transactions[0]).toHaveProperty('to_prepay_meter_serial_number');
  });

  it('are the body itself when nothing is declared for it', () => {
    expect(withoutTenantFields('statements', body, tenant)).toBe(body);
    expect(withoutTenantFields('transactions', body, {})).toBe(body);
  });

  it("inside JSON cells must be of their declared kind: line items, an account's notes and its ledgers", () => {
    const wrong = {
      ...body,
      transactions: [{ ...body.transactions[0], line_items: [{ ...lineItem, external_rate_identifier: 7 }] }],
    };
    expect(tenantKindIssues('transactions', wrong, tenant)).toEqual([
      {
        attr: 'transactions.0.line_items.0.external_rate_identifier',
        code: 'invalid_type',
        detail:
          'external_rate_identifier is declared a tenant field of kind string (tenant_fields.line_items), not number.',
      },
    ]);
    expect(tenantKindIssues('transactions', body, tenant)).toEqual([]);
    const account = {
      notes: [{ body: 'B', external_id: ['N-1'] }],
      ledgers: [{ ledger_code: 'L', current_statement_transactions: [{ to_prepay_meter_serial_number: 12 }] }],
    };
    expect(tenantKindIssues('account', account, tenant).map((issue) => issue.attr)).toEqual([
      'notes.0.external_id',
      'ledgers.0.current_statement_transactions.0.to_prepay_meter_serial_number',
    ]);
  });
});
