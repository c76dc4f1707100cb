import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  NotFoundError,
  RequestRejectedError,
  SupplierNotOngoingError,
  SupplierUnknownError,
  createImportServiceClient,
  type ServiceClient,
} from '../../src/api/index.js';
import { UsageError } from '../../src/errors.js';
import { account, startHarness, today, type Harness } from './helpers/sandbox-client.js';
import { listItems } from './helpers/list-items.js';

// Every endpoint of the spec, success and error paths, over real HTTP against the sandbox.

let harness: Harness;
let client: ServiceClient;

beforeAll(async () => {
  harness = await startHarness({ suppliers: { ACME: 'Ongoing', PAUSED: 'Paused' } });
  client = harness.client;
});
afterAll(() => harness.close());

async function imported(externalAccountNumber: string): Promise<string> {
  expect(await client.createAccount(account(externalAccountNumber))).toEqual({ kind: 'scheduled' });
  harness.sandbox.control.settleAll();
  const number = harness.sandbox.inspect.account('ACME', externalAccountNumber)?.platformAccountNumber;
  expect(number).toMatch(/^A-[0-9A-F]{8}$/);
  return number as string;
}

describe('account endpoints (v2)', () => {
  it('validate: valid, and invalid with the service issue items', async () => {
    expect(await client.validateAccount(account('V-1'))).toEqual({ kind: 'valid' });
    const outcome = await client.validateAccount(
      account('V-2', { customers: [{ family_name: 'Smith', mobile: 'abcde' }] }),
    );
    expect(outcome.kind).toBe('invalid');
    expect(outcome.kind === 'invalid' && outcome.errors).toContainEqual(
      expect.objectContaining({ attr: 'customers.0.mobile', code: 'invalid_phone_number' }),
    );
    expect(harness.sandbox.inspect.account('ACME', 'V-1')).toBeUndefined();
  });

  it('create: scheduled; in progress while processing; already imported with the account number; invalid', async () => {
    const slow = await startHarness({ processingMs: 60_000 });
    try {
      expect(await slow.client.createAccount(account('C-1'))).toEqual({ kind: 'scheduled' });
      const again = await slow.client.createAccount(account('C-1'));
      expect(again).toMatchObject({ kind: 'in_progress' });
      slow.sandbox.control.settleAll();
      const number = slow.sandbox.inspect.account('ACME', 'C-1')?.platformAccountNumber;
      expect(await slow.client.createAccount(account('C-1'))).toEqual({
        kind: 'already_imported',
        platformAccountNumber: number,
      });
      const invalid = await slow.client.createAccount(account('C-2', { billing_email: 'not-an-email' }));
      expect(invalid).toMatchObject({ kind: 'invalid', errors: [expect.objectContaining({ attr: 'billing_email' })] });
      expect(slow.sandbox.inspect.account('ACME', 'C-1')?.createRequestsAccepted).toBe(1);
    } finally {
      await slow.close();
    }
  });

  it('v2 status: the record, and null for an unknown process', async () => {
    await imported('S-1');
    const status = await client.getImportStatus('ACME', 'S-1');
    expect(status).toMatchObject({ status: 'PROCESSED', latest_error: null });
    expect(status?.platform_identifier).toBeTruthy();
    expect(await client.getImportStatus('ACME', 'S-unknown')).toBeNull();
  });

  it('v2 status of an account that ends ERRORED carries latest_error', async () => {
    await client.createAccount(account('ERR-1'));
    harness.sandbox.control.settleAll();
    const status = await client.getImportStatus('ACME', 'ERR-1');
    expect(status?.status).toBe('ERRORED');
    expect(status?.latest_error?.code).toBeTruthy();
  });

  it('path segments are encoded', async () => {
    expect(await client.getImportStatus('ACME', 'a/b?c#d')).toBeNull();
    const last = harness.sandbox.inspect.requests().at(-1);
    expect(last?.path).toBe('/v2/data-import/accounts/ACME/a%2Fb%3Fc%23d/');
  });
});

describe('status and listing endpoints (v1)', () => {
  it('transfer status: COMPLETED with the account number; null when unknown', async () => {
    const number = await imported('T-1');
    expect(await client.getTransferStatus('ACME', 'T-1')).toMatchObject({
      status: 'COMPLETED',
      platform_account_number: number,
    });
    expect(await client.getTransferStatus('ACME', 'T-unknown')).toBeNull();
  });

  it('the three lists', async () => {
    const slow = await startHarness({ processingMs: 60_000 });
    try {
      await slow.client.createAccount(account('L-early'));
      await slow.client.createAccount(account('L-done'));
      slow.sandbox.control.settleAll();
      await slow.client.createAccount(account('L-pending-2'));
      const all = await slow.client.listAllImports('ACME', listItems);
      expect(all.map((item) => item.external_account_number).sort()).toEqual(['L-done', 'L-early', 'L-pending-2']);
      const pending = await slow.client.listPendingImports('ACME', listItems);
      expect(pending).toEqual([
        { external_account_number: 'L-pending-2', platform_account_number: null, account_created_at: null },
      ]);
      const importedList = await slow.client.listImportedAccounts('ACME', listItems);
      expect(importedList.map((item) => item.external_account_number).sort()).toEqual(['L-done', 'L-early']);
      expect(importedList.every((item) => /^A-/.test(item.platform_account_number ?? ''))).toBe(true);
    } finally {
      await slow.close();
    }
  });

  it('an unknown supplier is refused as unknown, not as a supplier that does not accept migrations (fatal)', async () => {
    const error = await client.listAllImports('NOSUCH', listItems).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(SupplierUnknownError);
    expect((error as SupplierUnknownError).fatal).toBe(true);
    expect((error as SupplierUnknownError).exitCode).toBe(2); // a mistake in the settings, not a state of the service
    expect((error as SupplierUnknownError).message).toMatch(/^listAllImports: the service does not know the import /);
    expect((error as SupplierUnknownError).message).not.toContain('not accepting migrations');
  });
});

describe('post-import endpoints (v1)', () => {
  it('notes: created, then NOTE_ALREADY_EXISTS on a resend; invalid; NotFoundError before import', async () => {
    await imported('N-1');
    const request = {
      import_supplier: 'ACME',
      external_account_number: 'N-1',
      notes: [{ body: 'Moved from legacy system.' }],
    };
    expect(await client.createNotes(request)).toMatchObject({
      kind: 'created',
      results: [{ status: 'NOTE_CREATION_SUCCESS', body: 'Moved from legacy system.' }],
    });
    expect(await client.createNotes(request)).toMatchObject({
      kind: 'created',
      results: [{ status: 'NOTE_ALREADY_EXISTS' }],
    });
    expect(harness.sandbox.inspect.account('ACME', 'N-1')?.notes.filter((note) => !note.bySandbox)).toHaveLength(1);
    const invalid = await client.createNotes({ ...request, notes: [{ is_pinned: true }] });
    expect(invalid.kind).toBe('invalid');
    const missing = await client
      .createNotes({ ...request, external_account_number: 'N-none' })
      .catch((caught: unknown) => caught);
    expect(missing).toBeInstanceOf(NotFoundError);
  });

  it('transactions: added, then TRANSACTION_ALREADY_EXISTS; both query flags sent; import error names the transaction', async () => {
    await imported('X-1');
    const transaction = {
      transaction_id: 'tx-1',
      transaction_date: today(),
      amount: 12.5,
      type: 'CHARGE' as const,
      reason: 'IMPORTED_CHARGE',
    };
    const request = { import_supplier: 'ACME', external_account_number: 'X-1', transactions: [transaction] };
    const first = await client.createTransactions(request);
    expect(first).toMatchObject({
      kind: 'created',
      results: [{ status: 'TRANSACTION_ADDED_TO_ACCOUNT', transaction_data: { amount: '12.50' } }],
    });
    expect(await client.createTransactions(request)).toMatchObject({
      kind: 'created',
      results: [{ status: 'TRANSACTION_ALREADY_EXISTS' }],
    });
    const log = harness.sandbox.inspect
      .requests()
      .filter((entry) => entry.path === '/v1/data-import/transactions/create/');
    expect(log.at(-1)?.query).toBe('check_previously_added=true&force_add_to_current_statement=true');
    const old = { ...transaction, transaction_id: 'tx-old', transaction_date: '2020-01-01' };
    const failed = await client.createTransactions(
      { ...request, transactions: [old] },
      { force_add_to_current_statement: false },
    );
    expect(failed).toMatchObject({ kind: 'import_error', transactionData: { transaction_id: 'tx-old' } });
    expect(harness.sandbox.inspect.requests().at(-1)?.query).toBe(
      'check_previously_added=true&force_add_to_current_statement=false',
    );
    expect(harness.sandbox.inspect.account('ACME', 'X-1')?.transactions.map((item) => item.transactionId)).toEqual([
      'tx-1',
    ]);
  });

  it('historical statements: created, then already_exists on a resend; invalid', async () => {
    await imported('H-1');
    const statement = {
      statement_id: 'st-1',
      bill_period_from_date: '2026-01-01',
      bill_period_to_date: '2026-01-31',
      issued_date: '2026-02-02',
      gross_amount: 4200,
    };
    const request = { import_supplier: 'ACME', external_account_number: 'H-1', statements: [statement] };
    expect(await client.createHistoricalStatements(request)).toMatchObject({
      kind: 'created',
      statements: [{ statement_id: 'st-1' }],
    });
    expect(await client.createHistoricalStatements(request)).toMatchObject({ kind: 'already_exists' });
    const invalid = await client.createHistoricalStatements({
      ...request,
      statements: [{ ...statement, statement_id: 'st-2', bill_period_to_date: '2025-01-01' }],
    });
    expect(invalid.kind).toBe('invalid');
    expect(harness.sandbox.inspect.account('ACME', 'H-1')?.historicalStatements).toHaveLength(1);
  });

  it('payment instruction: created; a second for the account already_active; FAIL- refused (400, not resent); FLAKY- resent as is after its 500', async () => {
    const number = await imported('P-1');
    const request = {
      import_supplier: 'ACME',
      external_account_number: 'P-1',
      vendor: 'STRIPE',
      type: 'CARD' as const,
    };
    expect(await client.createPaymentInstruction({ ...request, reference: 'pi-1' })).toEqual({
      kind: 'created',
      platformAccountNumber: number,
      reference: 'pi-1',
    });
    // The platform keeps one active instruction per account: its 400 (no code) is read as already_active.
    expect(await client.createPaymentInstruction({ ...request, reference: 'pi-2' })).toEqual({
      kind: 'already_active',
      detail: 'Account already has an active instruction',
    });
    await imported('P-2');
    await imported('P-3');
    const sentBefore = harness.sandbox.inspect.requestCount();
    const refused = await client.createPaymentInstruction({
      ...request,
      external_account_number: 'P-2',
      reference: 'FAIL-1',
    });
    expect(refused).toMatchObject({
      kind: 'refused',
      errors: [expect.objectContaining({ code: 'payment_vendor_failed' })],
    });
    expect(refused.kind === 'refused' && refused.detail).toMatch(/no instruction/);
    expect(harness.sandbox.inspect.requestCount() - sentBefore).toBe(1);
    expect(
      await client.createPaymentInstruction({ ...request, external_account_number: 'P-3', reference: 'FLAKY-1' }),
    ).toMatchObject({
      kind: 'created',
      reference: 'FLAKY-1',
    });
    expect(harness.events).toContainEqual(
      expect.objectContaining({
        type: 'retry',
        endpoint: 'createPaymentInstruction',
        code: 'server_error',
        status: 500,
        ambiguous: false,
      }),
    );
    const references = (number: string) =>
      harness.sandbox.inspect.account('ACME', number)?.paymentInstructions.map((item) => item.reference);
    expect([references('P-1'), references('P-2'), references('P-3')]).toEqual([['pi-1'], [], ['FLAKY-1']]);
  });

  it('a supplier that is Paused: every write fails with the fatal SupplierNotOngoingError', async () => {
    const error = await client
      .createAccount(account('Z-1', { import_supplier: 'PAUSED' }))
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(SupplierNotOngoingError);
    expect(error).toMatchObject({
      code: 'supplier_not_ongoing',
      serviceCode: 'import_supplier_migration_not_ongoing',
      status: 400,
      fatal: true,
    });
    harness.sandbox.control.setSupplierStatus('ACME', 'Complete');
    try {
      const notes = await client
        .createNotes({ import_supplier: 'ACME', external_account_number: 'N-1', notes: [{ body: 'late' }] })
        .catch((caught: unknown) => caught);
      expect(notes).toBeInstanceOf(SupplierNotOngoingError);
    } finally {
      harness.sandbox.control.setSupplierStatus('ACME', 'Ongoing');
    }
  });
});

describe('requests and options', () => {
  it('refuses to send undocumented fields, without a request', async () => {
    const before = harness.sandbox.inspect.requestCount();
    const payload = { ...account('U-1'), favourite_colour: 'blue' } as never;
    const error = await client.createAccount(payload).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(RequestRejectedError);
    expect(error).toMatchObject({
      code: 'invalid_request',
      issues: [expect.objectContaining({ attr: 'favourite_colour', code: 'unknown_field' })],
    });
    expect(harness.sandbox.inspect.requestCount()).toBe(before);
  });

  it('the Token header form works too', async () => {
    const other = await startHarness({}, { headerForm: 'token' });
    try {
      expect(await other.client.validateAccount(account('F-1'))).toEqual({ kind: 'valid' });
    } finally {
      await other.close();
    }
  });

  it('base URL: https, or http on loopback only', () => {
    const make = (baseUrl: string) => () =>
      createImportServiceClient({ baseUrl, credentials: { apiKey: 'key-123456' } });
    expect(make('http://api.example.energy')).toThrow(UsageError);
    expect(make('http://api.example.energy')).toThrow(/https/);
    expect(make('ftp://127.0.0.1')).toThrow(UsageError);
    expect(make('https://user:secret@api.example.energy')).toThrow(/without user name/);
    expect(make('https://user:secret@api.example.energy')).not.toThrow(/secret/);
    expect(make('not a url')).toThrow(UsageError);
    for (const ok of ['https://api.example.energy', 'http://127.0.0.1:8080', 'http://localhost:1', 'http://[::1]:9']) {
      const created = make(ok)();
      void created.close();
    }
  });

  it('stats expose the current limit for progress displays', () => {
    expect(client.stats()).toMatchObject({ concurrencyLimit: 8, maxConcurrency: 8, inFlight: 0, queued: 0 });
    expect(client.stats().requests).toBeGreaterThan(10);
  });
});
