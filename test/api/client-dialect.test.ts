import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createImportServiceClient, RequestRejectedError, type ServiceClient } from '../../src/api/index.js';
import type { AccountPayload } from '../../src/schema/index.js';
import { account, startHarness, today, type Harness } from './helpers/sandbox-client.js';
import { json, startScriptedServer, type ScriptedServer } from './helpers/scripted-server.js';
import { listItems } from './helpers/list-items.js';

// The two dialects (docs/real-platform.md): responses are read under either name in both; the
// kraken dialect's requests are what the real platform's schema requires.

const SPEC_NAMES = {
  v2: { platform_identifier: 'P-1' },
  v1: { platform_account_number: 'A-1234ABCD' },
  list: { platform_account_number: 'A-1234ABCD' },
  instruction: { platform_account_number: 'A-1234ABCD' },
  already: { account_id: 'A-1234ABCD' },
};
const REAL_NAMES = {
  v2: { kraken_identifier: 'P-1' },
  v1: { kraken_account_number: 'A-1234ABCD', account_number: 'A-1234ABCD' },
  list: { kraken_account_number: 'A-1234ABCD' },
  instruction: { kraken_account_number: 'A-1234ABCD' },
  already: { account_id: 'A-1234ABCD' },
};
const DEPRECATED_ONLY = { ...REAL_NAMES, v1: { account_number: 'A-1234ABCD' } };

/** A server answering every read endpoint with one naming of the fields. */
function namingServer(names: Record<keyof typeof SPEC_NAMES, Record<string, string>>): Promise<ScriptedServer> {
  const at = '2024-01-02T03:04:05.123456+00:00';
  return startScriptedServer((request, response) => {
    const url = request.url;
    if (url.startsWith('/v2/data-import/accounts/ACME/'))
      return json(response, 200, {
        status: 'PROCESSED',
        created_at: at,
        modified_at: at,
        latest_error: null,
        ...names.v2,
      });
    if (url.startsWith('/v1/data-import/account-transfer-status/'))
      return json(response, 200, { status: 'COMPLETED', ...names.v1 });
    if (url.includes('-account-import-processes/'))
      return json(response, 200, [{ external_account_number: 'X-1', account_created_at: at, ...names.list }]);
    if (url === '/v1/data-import/payment-instruction/create/')
      return json(response, 201, { reference: 'pm_1', ...names.instruction });
    if (url === '/v2/data-import/accounts/')
      return json(response, 400, {
        non_field_errors: { detail: 'already imported', code: 'account_import_process_already_imported' },
        ...names.already,
      });
    return json(response, 404, { detail: 'no', code: 'not_found' });
  });
}

async function readEverything(client: ServiceClient) {
  return {
    v2: (await client.getImportStatus('ACME', 'X-1'))?.platform_identifier,
    v1: (await client.getTransferStatus('ACME', 'X-1'))?.platform_account_number,
    list: (await client.listAllImports('ACME', listItems))[0]?.platform_account_number,
    instruction: await client.createPaymentInstruction({
      import_supplier: 'ACME',
      external_account_number: 'X-1',
      vendor: 'STRIPE',
      reference: 'pm_1',
      type: 'CARD',
    }),
    already: await client.createAccount(account('X-1')),
  };
}

describe('responses under either name', () => {
  for (const dialect of ['spec', 'kraken'] as const) {
    it(`the ${dialect} dialect reads the spec's names, the real platform's, and the deprecated account_number alike`, async () => {
      const results = [];
      for (const names of [SPEC_NAMES, REAL_NAMES, DEPRECATED_ONLY]) {
        const server = await namingServer(names);
        const client = createImportServiceClient({ baseUrl: server.url, credentials: { apiKey: 'k' }, dialect });
        try {
          results.push(await readEverything(client));
        } finally {
          await client.close();
          await server.close();
        }
      }
      const expected = {
        v2: 'P-1',
        v1: 'A-1234ABCD',
        list: 'A-1234ABCD',
        instruction: { kind: 'created', platformAccountNumber: 'A-1234ABCD', reference: 'pm_1' },
        already: { kind: 'already_imported', platformAccountNumber: 'A-1234ABCD' },
      };
      expect(results).toEqual([expected, expected, expected]);
    });
  }

  it('a v2 status without kraken_identifier (not processed yet) reads as null', async () => {
    const at = '2024-01-02T03:04:05Z';
    const server = await startScriptedServer((_request, response) =>
      json(response, 200, { status: 'PENDING', created_at: at, modified_at: at, latest_error: null }),
    );
    const client = createImportServiceClient({ baseUrl: server.url, credentials: { apiKey: 'k' } });
    try {
      expect((await client.getImportStatus('ACME', 'X-1'))?.platform_identifier).toBeNull();
    } finally {
      await client.close();
      await server.close();
    }
  });
});

describe('the kraken dialect against the kraken sandbox', () => {
  let harness: Harness;
  beforeAll(async () => {
    harness = await startHarness(
      { dialect: 'kraken' },
      {
        dialect: 'kraken',
        taskParams: { is_dry_run: false },
        tenantFields: { accounts: {}, supply_addresses: { meter_points: 'array' } },
      },
    );
  });
  afterAll(() => harness.close());

  /** An account the kraken sandbox accepts: every supply address has a meter point. */
  const krakenAccount = (number: string, changes: Partial<AccountPayload> = {}): AccountPayload =>
    account(number, {
      supply_addresses: [
        {
          supply_address1: '1 High Street',
          supply_postcode: 'LS1 1AA',
          customer_at_supply_address_from_date: '2024-01-01',
          meter_points: [{ mpan: '1200023305967' }],
        } as never,
      ],
      ...changes,
    });
  const withMoney = (number: string): AccountPayload =>
    account(number, {
      transfer_balance: 12.5,
      supply_addresses: [
        {
          supply_address1: '1 High Street',
          supply_postcode: 'LS1 1AA',
          customer_at_supply_address_from_date: '2024-01-01',
          meter_points: [{ mpan: '1200023305967' }],
        } as never,
      ],
    });

  it('create sends task_params and money as decimal strings; tenant fields arrive unchanged', async () => {
    const tenant = createImportServiceClient({
      baseUrl: harness.sandbox.url,
      credentials: { apiKey: harness.sandbox.apiKey },
      dialect: 'kraken',
      tenantFields: { accounts: {}, supply_addresses: { meter_points: 'array' } },
    });
    try {
      harness.sandbox.inspect.resetLog();
      expect(await tenant.createAccount(withMoney('K-1'))).toEqual({ kind: 'scheduled' });
      const payload = harness.sandbox.inspect.account('ACME', 'K-1')?.payload as Record<string, unknown>;
      expect(payload['transfer_balance']).toBe(12.5);
      expect((payload['supply_addresses'] as Array<Record<string, unknown>>)[0]?.['meter_points']).toEqual([
        { mpan: '1200023305967' },
      ]);
    } finally {
      await tenant.close();
    }
  });

  it('a field the mapping file does not declare is still refused by the documented-fields guard', async () => {
    const undeclared = createImportServiceClient({
      baseUrl: harness.sandbox.url,
      credentials: { apiKey: harness.sandbox.apiKey },
      dialect: 'kraken',
    });
    try {
      await expect(undeclared.createAccount(withMoney('K-2'))).rejects.toBeInstanceOf(RequestRejectedError);
    } finally {
      await undeclared.close();
    }
    expect(harness.sandbox.inspect.account('ACME', 'K-2')).toBeUndefined();
  });

  it('transactions go as decimal strings and land as the same amounts; a value with too many places is refused unsent', async () => {
    expect(await harness.client.createAccount(krakenAccount('K-3'))).toEqual({ kind: 'scheduled' });
    harness.sandbox.control.settleAll();
    const request = {
      import_supplier: 'ACME',
      external_account_number: 'K-3',
      transactions: [
        { transaction_id: 'T-1', transaction_date: today(), amount: 40.1, type: 'CHARGE' as const },
        { transaction_id: 'T-2', transaction_date: today(), amount: 0.29, type: 'CREDIT' as const },
      ],
    };
    const outcome = await harness.client.createTransactions(request);
    expect(outcome.kind).toBe('created');
    expect(harness.sandbox.inspect.account('ACME', 'K-3')?.transactions.map((t) => t.amount)).toEqual([
      '40.10',
      '0.29',
    ]);
    const precise = {
      ...request,
      transactions: [{ ...request.transactions[0]!, transaction_id: 'T-9', amount: 1.005 }],
    };
    await expect(harness.client.createTransactions(precise)).rejects.toThrow(/more than 2 decimal places/);
  });

  it('the spec dialect is refused by the kraken sandbox: task_params missing, money as numbers', async () => {
    const spec = createImportServiceClient({
      baseUrl: harness.sandbox.url,
      credentials: { apiKey: harness.sandbox.apiKey },
      tenantFields: { accounts: {}, supply_addresses: { meter_points: 'array' } },
    });
    try {
      const outcome = await spec.createAccount(krakenAccount('K-4', { transfer_balance: 3 }));
      expect(outcome.kind === 'invalid' && outcome.errors.map((e) => `${e.attr}:${e.code}`)).toEqual([
        'task_params:required',
        'transfer_balance:invalid',
      ]);
    } finally {
      await spec.close();
    }
  });

  it('a supply address without a meter point is no_supply_point_on_supply', async () => {
    const outcome = await harness.client.validateAccount(
      account('K-5', {
        supply_addresses: [
          {
            supply_address1: '1 High Street',
            supply_postcode: 'LS1 1AA',
            customer_at_supply_address_from_date: '2024-01-01',
          },
        ],
      }),
    );
    expect(outcome).toEqual({
      kind: 'invalid',
      errors: [expect.objectContaining({ attr: 'supply_addresses.0.meter_points', code: 'no_supply_point_on_supply' })],
    });
  });

  it('the status endpoints answer under the real names, and the client reads them', async () => {
    expect(await harness.client.createAccount(krakenAccount('K-6'))).toEqual({ kind: 'scheduled' });
    harness.sandbox.control.settleAll();
    const number = harness.sandbox.inspect.account('ACME', 'K-6')?.platformAccountNumber;
    expect((await harness.client.getTransferStatus('ACME', 'K-6'))?.platform_account_number).toBe(number);
    expect((await harness.client.getImportStatus('ACME', 'K-6'))?.platform_identifier).toMatch(/.+/);
    const raw = await fetch(`${harness.sandbox.url}/v1/data-import/account-transfer-status/ACME/K-6/`, {
      headers: { authorization: await tokenOf(harness) },
    });
    expect(await raw.json()).toEqual({ status: 'COMPLETED', kraken_account_number: number, account_number: number });
  });
});

async function tokenOf(harness: Harness): Promise<string> {
  const response = await fetch(`${harness.sandbox.url}/v1/graphql/`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      query: 'mutation($input: ObtainJSONWebTokenInput!) { obtainKrakenToken(input: $input) { token } }',
      variables: { input: { APIKey: harness.sandbox.apiKey } },
    }),
  });
  const body = (await response.json()) as { data: { obtainKrakenToken: { token: string } } };
  return body.data.obtainKrakenToken.token;
}
