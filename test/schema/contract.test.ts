import { readFileSync } from 'node:fs';
import path from 'node:path';
import { load as parse } from 'js-yaml';
import { describe, expect, it } from 'vitest';
import { compileContract, ContractError, type Contract } from '../../src/schema/index.js';

// The tenant's contract, compiled from plain data: the two fixture documents (fixtures/contracts/, shaped like the
// two published families) and small documents holding one quirk each. Every rule is checked on bodies as they go on
// the wire (the kraken dialect: money as decimal strings).

const FIXTURES = path.join(import.meta.dirname, '..', '..', 'fixtures', 'contracts');

function fixture(name: 'flat-address' | 'structured-address'): Contract {
  const file = path.join(FIXTURES, name, 'openapi.yaml');
  return compileContract(parse(readFileSync(file, 'utf8')), file);
}

const flat = fixture('flat-address');
const structured = fixture('structured-address');

const meterPoint = {
  supply_type: 'ELECTRICITY',
  identifier: '1200023305967',
  mpid: 'FERN',
  supply_start_date: '2024-02-02',
};
const payload = {
  import_supplier: 'FERNLEIGH',
  external_account_number: 'FERN-1',
  transfer_balance: '12.40',
  customers: [{ given_name: 'Ada', family_name: 'Lovelace' }],
  supply_addresses: [
    {
      supply_address1: '1 High Street',
      supply_postcode: 'YO1 7HH',
      customer_at_supply_address_from_date: '2024-02-02',
      meter_points: [meterPoint],
    },
  ],
};
const charge = { type: 'CHARGE', transaction_id: 'T1', transaction_date: '2024-02-10', amount: '40.10' };
const transactions = (...items: unknown[]) => ({
  import_supplier: 'FERNLEIGH',
  external_account_number: 'FERN-1',
  transactions: items,
});

describe('a fixture contract', () => {
  it('passes bodies that keep the document', () => {
    expect(flat.check('createAccount', { payload, task_params: {} })).toEqual([]);
    expect(flat.check('accountPayload', payload)).toEqual([]);
    expect(flat.check('transactions', transactions({ ...charge, reason: 'IMPORTED_CHARGE' }))).toEqual([]);
  });

  it('names a missing required enum with the allowed values, from the variant the discriminator chose', () => {
    expect(flat.check('transactions', transactions(charge))).toEqual([
      {
        attr: 'transactions.0.reason',
        code: 'contract_required',
        detail:
          "reason is required by the tenant's document (Charge); allowed values: IMPORTED_CHARGE, METER_EXCHANGE_FEE, " +
          'MISSED_APPOINTMENT, RETURNED_PAYMENT_FEE, WARRANT_COSTS.',
      },
    ]);
  });

  it('names a value outside an enum with the allowed values; an unknown discriminator value lists the mapping', () => {
    const [credit] = flat.check('transactions', transactions({ ...charge, type: 'CREDIT', reason: 'Goodwill credit' }));
    expect(credit).toMatchObject({ attr: 'transactions.0.reason', code: 'contract_choice' });
    expect(credit?.detail).toContain('"Goodwill credit" is not a value the tenant\'s document (Credit.reason) allows');
    expect(flat.check('transactions', transactions({ ...charge, type: 'REFUND' }))).toEqual([
      expect.objectContaining({
        attr: 'transactions.0.type',
        code: 'contract_choice',
        detail: expect.stringContaining('CREDIT, CHARGE, PAYMENT, REPAYMENT, SUPPLY_CHARGE'),
      }),
    ]);
    const vendor = flat.check('paymentInstruction', {
      import_supplier: 'FERNLEIGH',
      external_account_number: 'FERN-1',
      vendor: 'STRIPE',
      reference: 'R',
      type: 'CARD',
    });
    expect(vendor).toEqual([
      expect.objectContaining({
        attr: 'vendor',
        detail: expect.stringContaining('allowed values: PAYGATE, BACSWAY, BACSWAY_BATCHED, DIRECTLINK'),
      }),
    ]);
  });

  it('finds a meter point without its identifier inside a supply address (attrs relative to the payload)', () => {
    const { identifier: _identifier, ...point } = meterPoint;
    const address = { ...payload.supply_addresses[0], meter_points: [point] };
    expect(
      flat.check('createAccount', { payload: { ...payload, supply_addresses: [address] }, task_params: {} }),
    ).toEqual([
      {
        attr: 'supply_addresses.0.meter_points.0.identifier',
        code: 'contract_required',
        detail: "identifier is required by the tenant's document (ElectricityMeterPoint).",
      },
    ]);
  });

  it('refuses a field the document does not define (the platform would drop it) and names the fields it has', () => {
    const [issue] = flat.check('accountPayload', { ...payload, ledgers: [] });
    expect(issue).toMatchObject({ attr: 'ledgers', code: 'contract_unknown_field' });
    expect(issue?.detail).toMatch(/^ledgers is not a field of the tenant's document \(FernleighAccount\)/);
    expect(issue?.detail).toContain('account_billing_options');
  });

  it("checks types, patterns, formats and limits in the document's words", () => {
    const issues = flat.check('accountPayload', {
      ...payload,
      transfer_balance: 12.4,
      date_of_sale: '2024-13-45',
      smart_read_cycle_day: 31,
      customers: [{ title: 'The Right Honourable Lady' }],
    });
    expect(issues.map((issue) => `${issue.attr} ${issue.code}`).sort()).toEqual([
      'customers.0.title contract_length',
      'date_of_sale contract_format',
      'smart_read_cycle_day contract_range',
      'transfer_balance contract_type',
    ]);
    expect(flat.check('accountPayload', { ...payload, transfer_balance: '1.2.3' })).toEqual([
      expect.objectContaining({ attr: 'transfer_balance', code: 'contract_pattern' }),
    ]);
  });

  it('reads the quirks of published documents: nullable without a type, enums holding null, nullable wrappers', () => {
    const customer = { family_name: 'Lovelace', details: null, pronouns: null, title: null };
    expect(flat.check('accountPayload', { ...payload, customers: [customer], business: null })).toEqual([]);
    expect(flat.check('accountPayload', { ...payload, customers: [{ details: { any: ['thing'] } }] })).toEqual([]);
    expect(
      structured.check('accountPayload', {
        import_supplier: 'WATTLE',
        remotely_communicating_meter_opt_out_reason: null,
      }),
    ).toEqual([]);
    expect(
      structured.check('accountPayload', {
        import_supplier: 'WATTLE',
        remotely_communicating_meter_opt_out_reason: 'NOISE',
      }),
    ).toEqual([expect.objectContaining({ code: 'contract_choice' })]);
    expect(flat.check('accountPayload', { ...payload, business: { company_name: 7 } })).toEqual([
      expect.objectContaining({ attr: 'business.company_name', code: 'contract_type' }),
    ]);
  });

  it('reads a discriminator keyed by a tenant setting as any of its variants', () => {
    const business = (extra: Record<string, unknown>) => flat.check('accountPayload', { ...payload, business: extra });
    expect(business({ company_name: 'Acme' })).toEqual([]);
    expect(business({ company_name: 'Acme', business_contract_identifier: 'C-1' })).toEqual([]);
    expect(business({ company_nam: 'Acme' })).toEqual([expect.objectContaining({ code: 'contract_unknown_field' })]);
    const options = (value: Record<string, unknown>) =>
      structured.check('accountPayload', { import_supplier: 'WATTLE', account_billing_options: value });
    expect(options({ period_length: 'QUARTERLY', period_start_day: 3 })).toEqual([]);
  });

  it("says which fields each level defines, over all variants, and whether a field is the document's", () => {
    expect([...flat.fieldsOf('customers')]).toEqual(expect.arrayContaining(['psr', 'portfolio_roles', 'details']));
    expect([...flat.fieldsOf('transactions')]).toEqual(
      expect.arrayContaining(['to_prepay_meter_serial_number', 'reason']),
    );
    expect([...flat.fieldsOf('line_items')]).toEqual(expect.arrayContaining(['external_rate_identifier']));
    expect([...structured.fieldsOf('supply_addresses')]).toEqual(
      expect.arrayContaining(['supply_address', 'meter_points']),
    );
    expect(structured.fieldsOf('supply_addresses').has('supply_address1')).toBe(false);
    expect(structured.defines('accountPayload', 'supply_addresses.0.supply_address1')).toBe(false);
    expect(flat.defines('accountPayload', 'supply_addresses.0.supply_address1')).toBe(true);
    expect(flat.defines('transactions', 'transactions.3.reason')).toBe(true);
  });
});

/** A document with every endpoint, its bodies given by `schemas` (the rest defined as open objects). */
function documentWith(schemas: Record<string, unknown>): Record<string, unknown> {
  const body = (name: string) => ({
    post: { requestBody: { content: { 'application/json': { schema: { $ref: `#/components/schemas/${name}` } } } } },
  });
  return {
    openapi: '3.0.3',
    info: { title: 'Quirks', version: '1' },
    paths: {
      '/v2/data-import/accounts/': body('Create'),
      '/v2/data-import/accounts/validate/': body('Create'),
      '/v1/data-import/notes/create/': body('Open'),
      '/v1/data-import/transactions/create/': body('Open'),
      '/v1/data-import/historical-statements/create/': body('Open'),
      '/v1/data-import/payment-instruction/create/': body('Open'),
    },
    components: {
      schemas: {
        Create: {
          type: 'object',
          properties: { payload: { $ref: '#/components/schemas/Account' }, task_params: { type: 'object' } },
        },
        Open: { type: 'object' },
        ...schemas,
      },
    },
  };
}

describe('documents with quirks', () => {
  it('reads OpenAPI 3.0 exclusive bounds, keeps what it cannot check as a warning, accepts unknown formats', () => {
    const contract = compileContract(
      documentWith({
        Account: {
          type: 'object',
          properties: {
            ratio: { type: 'number', minimum: 0, exclusiveMinimum: true },
            code: { type: 'string', pattern: '(?P<name>x)' },
            tag: { type: 'string', format: 'tenant-tag' },
          },
        },
      }),
      'quirks.yaml',
    );
    expect(contract.warnings).toEqual([expect.stringContaining('Account.code: the pattern (?P<name>x)')]);
    expect(contract.check('accountPayload', { ratio: 0 })).toEqual([
      expect.objectContaining({ attr: 'ratio', code: 'contract_invalid' }),
    ]);
    expect(contract.check('accountPayload', { ratio: 0.5, code: 'anything', tag: 'T' })).toEqual([]);
  });

  it('refuses what cannot serve as a contract, naming the file and what is missing', () => {
    expect(() => compileContract({ swagger: '2.0' }, 'old.yaml')).toThrow(ContractError);
    expect(() => compileContract({ swagger: '2.0' }, 'old.yaml')).toThrow(/old\.yaml: not an OpenAPI 3 document/);
    const partial = documentWith({ Account: { type: 'object' } });
    delete (partial['paths'] as Record<string, unknown>)['/v1/data-import/notes/create/'];
    expect(() => compileContract(partial, 'partial.yaml')).toThrow(
      /partial\.yaml: .*POST \/v1\/data-import\/notes\/create\/; is it the tenant's data-import document/,
    );
    const dangling = documentWith({ Account: { $ref: '#/components/schemas/Missing' } });
    expect(() => compileContract(dangling, 'dangling.yaml')).toThrow(/dangling\.yaml: its schemas cannot be compiled/);
  });
});
