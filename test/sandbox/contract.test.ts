import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadContractFile } from '../../src/config/contract-file.js';
import { startSandbox } from '../../src/sandbox/index.js';
import { openSession, send, type Session } from './helpers.js';

// The sandbox rehearsing a tenant (docs/sandbox.md "Rehearsing a tenant"): with a contract, the tenant's document
// decides which fields exist and adds its rules to the sandbox's own; every request over real HTTP.

const FLAT = path.join(import.meta.dirname, '..', '..', 'fixtures', 'contracts', 'flat-address', 'openapi.yaml');
const contract = await loadContractFile(FLAT, FLAT);

let session: Session | undefined;
afterEach(async () => {
  await session?.sandbox.close();
  session = undefined;
});

async function tenantSandbox(withContract = true): Promise<Session> {
  session = await openSession({
    dialect: 'kraken',
    suppliers: { FERNLEIGH: 'Ongoing' },
    ...(withContract ? { contract } : {}),
  });
  return session;
}

const psr = [{ need_code: 'HEARING', effective_from: '2024-01-15T09:30:00Z', additional_information: 'Text only' }];
const meterPoint = {
  supply_type: 'ELECTRICITY',
  identifier: '1200023305967',
  mpid: 'FERN',
  supply_start_date: '2024-02-02',
};

function payload(number: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    import_supplier: 'FERNLEIGH',
    external_account_number: number,
    account_type: 'DOMESTIC',
    transfer_balance: '12.40',
    warm_home_discount: [{ scheme_year: '2024/25', group: 'CORE' }],
    customers: [{ given_name: 'Ruth', family_name: 'Haddad', mobile: '+447911123021', psr }],
    supply_addresses: [
      {
        supply_address1: '6 Church Lane',
        supply_address2: 'Flat 2',
        supply_postcode: 'BS1 5TR',
        customer_at_supply_address_from_date: '2024-03-03',
        meter_points: [meterPoint],
      },
    ],
    ...extra,
  };
}

async function create(open: Session, body: Record<string, unknown>) {
  return open.post('/v2/data-import/accounts/', { payload: body, task_params: {} });
}

const charge = { type: 'CHARGE', transaction_id: 'T1', transaction_date: '2024-03-10', amount: '15.00' };

describe('the sandbox with a tenant contract', () => {
  it('accepts what the document defines, and its tenant fields reach the inspection endpoint as given', async () => {
    const open = await tenantSandbox();
    expect((await create(open, payload('FERN-1'))).status).toBe(201);
    open.sandbox.control.settleAll();
    const transaction = { ...charge, reason: 'METER_EXCHANGE_FEE', to_prepay_meter_serial_number: '21E0012345' };
    const added = await open.post('/v1/data-import/transactions/create/', {
      import_supplier: 'FERNLEIGH',
      external_account_number: 'FERN-1',
      transactions: [transaction],
    });
    expect(added.status).toBe(201);
    const note = await open.post('/v1/data-import/notes/create/', {
      import_supplier: 'FERNLEIGH',
      external_account_number: 'FERN-1',
      notes: [{ body: 'Moved in', external_id: 'LEGACY-N-2' }],
    });
    expect(note.status).toBe(201);
    const inspected = await send(`${open.sandbox.url}/_sandbox/accounts/FERNLEIGH/`, {
      method: 'GET',
      headers: { authorization: open.token },
    });
    const [held] = inspected.body as Array<Record<string, any>>;
    expect(held?.['payload'].customers[0].psr).toEqual(psr);
    expect(held?.['payload'].supply_addresses[0].supply_address2).toBe('Flat 2');
    expect(held?.['transactions'][0].data.to_prepay_meter_serial_number).toBe('21E0012345');
    const notes = held?.['notes'] as Array<{ body: string; extra?: unknown }>;
    expect(notes.find((item) => item.body === 'Moved in')?.extra).toEqual({ external_id: 'LEGACY-N-2' });
  });

  it('refuses what the document refuses: a missing required enum, a value outside one, an undefined field', async () => {
    const open = await tenantSandbox();
    await create(open, payload('FERN-2'));
    open.sandbox.control.settleAll();
    const noReason = await open.post('/v1/data-import/transactions/create/', {
      import_supplier: 'FERNLEIGH',
      external_account_number: 'FERN-2',
      transactions: [charge],
    });
    expect(noReason.status).toBe(400);
    expect(noReason.body.errors).toEqual([
      expect.objectContaining({ attr: 'transactions.0.reason', code: 'contract_required' }),
    ]);
    const vendor = await open.post('/v1/data-import/payment-instruction/create/', {
      import_supplier: 'FERNLEIGH',
      external_account_number: 'FERN-2',
      vendor: 'STRIPE',
      reference: 'R-1',
      type: 'CARD',
    });
    expect(vendor.status).toBe(400);
    expect(vendor.body.errors).toEqual([
      expect.objectContaining({ attr: 'vendor', code: 'contract_choice', detail: expect.stringContaining('PAYGATE') }),
    ]);
    const address = { ...(payload('X')['supply_addresses'] as object[])[0], meter_pointz: [] };
    const unknown = await create(open, payload('FERN-3', { supply_addresses: [address] }));
    expect(unknown.status).toBe(400);
    expect(unknown.body.errors).toEqual([
      expect.objectContaining({ attr: 'supply_addresses.0.meter_pointz', code: 'contract_unknown_field' }),
    ]);
  });

  it("keeps its own rules of the service's behaviour on top of the document's", async () => {
    const open = await tenantSandbox();
    const customers = [{ given_name: 'Ruth', family_name: 'Haddad', mobile: 'not a phone' }];
    const answer = await create(open, payload('FERN-4', { customers }));
    expect(answer.status).toBe(400);
    expect(answer.body.errors).toEqual([
      expect.objectContaining({ attr: 'customers.0.mobile', code: 'invalid_phone_number' }),
    ]);
  });

  it("without a contract stays as it was: a tenant's field it does not know is unknown_field", async () => {
    const open = await tenantSandbox(false);
    const answer = await create(open, payload('FERN-5'));
    expect(answer.status).toBe(400);
    expect(answer.body.errors).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ attr: 'supply_addresses.0.supply_address2', code: 'unknown_field' }),
      ]),
    );
  });

  it('rehearses a contract in the kraken dialect only', async () => {
    await expect(startSandbox({ contract })).rejects.toThrow(/sandbox option contract: expected the kraken dialect/);
  });
});
