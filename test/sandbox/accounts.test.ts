import { afterEach, describe, expect, it } from 'vitest';
import { validateAccountRequest } from '../../src/schema/index.js';
import { account, manualClock, openSession, type Session } from './helpers.js';

// Spec "Account import endpoints (v2)", "States and transitions", "Status and listing endpoints (v1)".

let session: Session | undefined;
afterEach(async () => {
  await session?.sandbox.close();
  session = undefined;
});
const open = async (options: Parameters<typeof openSession>[0] = {}, hooks: Parameters<typeof openSession>[1] = {}) =>
  (session = await openSession(options, hooks));
const v2 = (s: Session, ext: string, supplier = 'ACME') =>
  s.get(`/v2/data-import/accounts/${supplier}/${encodeURIComponent(ext)}/`);
const v1 = (s: Session, ext: string, supplier = 'ACME') =>
  s.get(`/v1/data-import/account-transfer-status/${supplier}/${encodeURIComponent(ext)}/`);
const OFFSET_DATETIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}\+00:00$/;

describe('validate', () => {
  it('answers 200 {} to a valid payload and creates nothing', async () => {
    const s = await open();
    const answer = await s.post('/v2/data-import/accounts/validate/', { payload: account('V-1') });
    expect(answer).toMatchObject({ status: 200, body: {} });
    expect(s.sandbox.inspect.account('ACME', 'V-1')).toBeUndefined();
  });

  it('reports every problem at once in the spec body, attr paths such as customers.0.landline', async () => {
    const s = await open();
    const payload = account('V-2', {
      customers: [
        { family_name: 'X', landline: 'abcde' },
        { family_name: 'Y', email: 'not-an-email' },
      ],
      date_of_sale: '2023-02-30',
      colour: 'blue',
    });
    const answer = await s.post('/v2/data-import/accounts/validate/', { payload });
    expect(answer.status).toBe(400);
    expect(answer.body.detail).toBe('Could not validate account data.');
    expect(answer.body.code).toBe('account_failed_validation');
    const found = answer.body.errors.map((item: { attr: string; code: string }) => `${item.attr}:${item.code}`).sort();
    expect(found).toEqual([
      'colour:unknown_field',
      'customers.0.landline:invalid_phone_number',
      'customers.1.email:invalid_email',
      'date_of_sale:invalid_date',
    ]);
    for (const item of answer.body.errors) expect(typeof item.detail).toBe('string');
  });

  it('agrees with the local validator (src/schema) on the same payload', async () => {
    const s = await open();
    const body = {
      payload: account('V-3', { customers: [{ mobile: '07123456789' }], billing_email: 'test@example.org' }),
    };
    const answer = await s.post('/v2/data-import/accounts/validate/', body);
    expect(answer.body.errors).toEqual(validateAccountRequest(body));
  });

  it('refuses a body that is not {payload}: missing payload, extra keys, not an object', async () => {
    const s = await open();
    for (const body of [{}, { payload: account('V-4'), task_params: {} }, [], 'text']) {
      const answer = await s.post('/v2/data-import/accounts/validate/', body);
      expect(answer.status).toBe(400);
      expect(answer.body.code).toBe('account_failed_validation');
      expect(answer.body.errors.length).toBeGreaterThan(0);
    }
  });
});

describe('create and the asynchronous process', () => {
  it('loses the creates it is told to after answering 201: no process appears; --lost-create-once lands the next', async () => {
    const s = await open({ processingMs: 0, lostCreateShare: 1, lostCreateOnce: true });
    expect((await s.post('/v2/data-import/accounts/', { payload: account('L-1') })).status).toBe(201);
    expect((await v2(s, 'L-1')).status).toBe(404);
    expect((await v1(s, 'L-1')).status).toBe(404);
    expect(s.sandbox.inspect.requests().at(-3)?.fault).toBe('lost_create');
    expect((await s.post('/v2/data-import/accounts/', { payload: account('L-1') })).status).toBe(201);
    expect((await v2(s, 'L-1')).body.status).toBe('PROCESSED');
  });

  it('NOID- and NONUM- accounts contradict themselves: PROCESSED without an identifier, COMPLETED without a number', async () => {
    const s = await open({ processingMs: 0 });
    for (const number of ['NOID-1', 'NONUM-1'])
      expect((await s.post('/v2/data-import/accounts/', { payload: account(number) })).status).toBe(201);
    expect((await v2(s, 'NOID-1')).body).toMatchObject({ status: 'PROCESSED', platform_identifier: null });
    expect((await v1(s, 'NOID-1')).body.platform_account_number).toMatch(/^A-/);
    expect((await v1(s, 'NONUM-1')).body).toEqual({ status: 'COMPLETED', platform_account_number: '' });
    expect((await v2(s, 'NONUM-1')).body.platform_identifier).toEqual(expect.any(String));
  });

  it('schedules (201 {}), then PENDING -> IN_PROGRESS -> PROCESSED with platform_identifier set', async () => {
    const clock = manualClock();
    const s = await open({ processingMs: 400 }, { clock: clock.now });
    expect(await s.post('/v2/data-import/accounts/', { payload: account('C-1') })).toMatchObject({
      status: 201,
      body: {},
    });
    const pending = await v2(s, 'C-1');
    expect(pending.body).toMatchObject({ status: 'PENDING', platform_identifier: null, latest_error: null });
    expect(pending.body.created_at).toMatch(OFFSET_DATETIME);
    expect((await v1(s, 'C-1')).body).toEqual({ status: 'IN_PROGRESS', platform_account_number: '' });
    clock.advance(220);
    expect((await v2(s, 'C-1')).body.status).toBe('IN_PROGRESS');
    clock.advance(180);
    const done = await v2(s, 'C-1');
    expect(done.body.status).toBe('PROCESSED');
    expect(typeof done.body.platform_identifier).toBe('string');
    expect(Date.parse(done.body.modified_at) - Date.parse(done.body.created_at)).toBe(400);
    const transfer = await v1(s, 'C-1');
    expect(transfer.body.status).toBe('COMPLETED');
    expect(transfer.body.platform_account_number).toMatch(/^A-[0-9A-F]{8}$/);
    expect(s.sandbox.inspect.account('ACME', 'C-1')).toMatchObject({
      createRequestsAccepted: 1,
      payload: account('C-1'),
    });
  });

  it('--processing-spread-ms: each process takes processingMs plus its own seeded share of the spread', async () => {
    const clock = manualClock();
    const s = await open({ processingMs: 300, processingSpreadMs: 600 }, { clock: clock.now });
    const numbers = Array.from({ length: 40 }, (_, n) => `SP-${n}`);
    for (const number of numbers) await s.post('/v2/data-import/accounts/', { payload: account(number) });
    const processedAt = new Map<string, number>();
    for (let elapsed = 0; elapsed <= 900; elapsed += 10) {
      for (const number of numbers)
        if (!processedAt.has(number) && s.sandbox.inspect.account('ACME', number)?.status === 'PROCESSED')
          processedAt.set(number, elapsed);
      clock.advance(10);
    }
    const times = numbers.map((number) => processedAt.get(number) ?? -1);
    expect(processedAt.size).toBe(numbers.length);
    expect(Math.min(...times)).toBeGreaterThanOrEqual(300);
    expect(Math.max(...times)).toBeLessThanOrEqual(900);
    // Not in creation order: a later process may finish first.
    expect(new Set(times).size).toBeGreaterThan(10);
    expect(times).not.toEqual([...times].sort((a, b) => a - b));
  });

  it('refuses a create while the process is PENDING or IN_PROGRESS (account_import_process_in_progress)', async () => {
    const s = await open({ processingMs: 10_000 });
    await s.post('/v2/data-import/accounts/', { payload: account('C-2') });
    const again = await s.post('/v2/data-import/accounts/', { payload: account('C-2') });
    expect(again.status).toBe(400);
    expect(again.body).toMatchObject({ code: 'account_import_process_in_progress', errors: [] });
    expect(s.sandbox.inspect.account('ACME', 'C-2')?.createRequestsAccepted).toBe(1);
  });

  it('answers the already-imported body once PROCESSED, with the account number in account_id', async () => {
    const s = await open();
    await s.importAccount('C-3');
    const again = await s.post('/v2/data-import/accounts/', { payload: account('C-3') });
    expect(again.status).toBe(400);
    const number = s.sandbox.inspect.account('ACME', 'C-3')?.platformAccountNumber;
    expect(again.body).toEqual({
      non_field_errors: {
        detail: 'The account import process with the account number C-3 has already been imported.',
        code: 'account_import_process_already_imported',
      },
      account_id: number,
    });
  });

  it('ends ERRORED with latest_error for an external account number starting ERR-; v1 says UNKNOWN; a new create replaces it', async () => {
    const s = await open();
    await s.importAccount('ERR-1');
    const status = await v2(s, 'ERR-1');
    expect(status.body).toMatchObject({ status: 'ERRORED', platform_identifier: null });
    expect(status.body.latest_error).toEqual({
      code: 'account_creation_failed',
      detail: expect.stringContaining('ERR-'),
      domain: 'import_process',
    });
    expect((await v1(s, 'ERR-1')).body).toEqual({ status: 'UNKNOWN', platform_account_number: '' });
    expect((await s.post('/v2/data-import/accounts/', { payload: account('ERR-1') })).status).toBe(201);
    expect(s.sandbox.inspect.account('ACME', 'ERR-1')).toMatchObject({ status: 'ERRORED', createRequestsAccepted: 2 });
  });

  it('ends CANCELLED (latest_error null) for an external account number starting CANCEL-; v1 UNKNOWN; pending in the lists', async () => {
    const s = await open();
    await s.importAccount('CANCEL-1');
    expect((await v2(s, 'CANCEL-1')).body).toMatchObject({
      status: 'CANCELLED',
      platform_identifier: null,
      latest_error: null,
    });
    expect((await v1(s, 'CANCEL-1')).body).toEqual({ status: 'UNKNOWN', platform_account_number: '' });
    expect((await s.get('/v1/data-import/pending-account-import-processes/ACME/')).body).toEqual([
      { external_account_number: 'CANCEL-1', platform_account_number: null, account_created_at: null },
    ]);
    expect((await s.post('/v2/data-import/accounts/', { payload: account('CANCEL-1') })).status).toBe(201);
  });

  it('ends a seeded share of accounts ERRORED, the same ones for the same seed', async () => {
    const run = async (seed: number) => {
      const s = await openSession({ erroredShare: 0.3, seed });
      for (let i = 0; i < 60; i++) await s.post('/v2/data-import/accounts/', { payload: account(`S-${i}`) });
      const errored = s.sandbox.inspect
        .accounts('ACME')
        .filter((item) => item.status === 'ERRORED')
        .map((item) => item.externalAccountNumber);
      await s.sandbox.close();
      return errored;
    };
    const first = await run(7);
    expect(first.length).toBeGreaterThan(8);
    expect(first.length).toBeLessThan(30);
    expect(await run(7)).toEqual(first);
    expect(await run(8)).not.toEqual(first);
  });

  it('gives platform account numbers A- + 8 upper-case hex, unique and deterministic from the seed', async () => {
    const numbers = async () => {
      const s = await openSession({ seed: 42 });
      for (const ext of ['N-1', 'N-2', 'N-3']) await s.importAccount(ext);
      const found = ['N-1', 'N-2', 'N-3'].map((ext) => s.sandbox.inspect.account('ACME', ext)?.platformAccountNumber);
      await s.sandbox.close();
      return found;
    };
    const first = await numbers();
    for (const number of first) expect(number).toMatch(/^A-[0-9A-F]{8}$/);
    expect(new Set(first).size).toBe(3);
    expect(await numbers()).toEqual(first);
  });

  it('keeps no payload when retainPayloads is false', async () => {
    const s = await open({ retainPayloads: false });
    await s.importAccount('P-1');
    expect(s.sandbox.inspect.account('ACME', 'P-1')?.payload).toBeUndefined();
  });
});

describe('import suppliers', () => {
  it('refuses validate and create for a Paused or Complete supplier (import_supplier_migration_not_ongoing)', async () => {
    const s = await open();
    for (const supplier of ['PAUSED', 'COMPLETE']) {
      for (const path of ['/v2/data-import/accounts/validate/', '/v2/data-import/accounts/']) {
        const answer = await s.post(path, { payload: account('G-1', { import_supplier: supplier }) });
        expect(answer.status).toBe(400);
        expect(answer.body).toEqual({ detail: expect.any(String), code: 'import_supplier_migration_not_ongoing' });
      }
    }
  });

  it('reports an unknown supplier code as invalid_import_supplier on import_supplier', async () => {
    const s = await open();
    const answer = await s.post('/v2/data-import/accounts/', { payload: account('G-2', { import_supplier: 'NOPE' }) });
    expect(answer.status).toBe(400);
    expect(answer.body.errors).toContainEqual({
      attr: 'import_supplier',
      code: 'invalid_import_supplier',
      detail: expect.any(String),
    });
  });

  it('follows a status set at run time (control.setSupplierStatus)', async () => {
    const s = await open();
    s.sandbox.control.setSupplierStatus('ACME', 'Paused');
    expect((await s.post('/v2/data-import/accounts/', { payload: account('G-3') })).body.code).toBe(
      'import_supplier_migration_not_ongoing',
    );
    s.sandbox.control.setSupplierStatus('ACME', 'Ongoing');
    expect((await s.post('/v2/data-import/accounts/', { payload: account('G-3') })).status).toBe(201);
    expect(s.sandbox.inspect.supplierStatus('ACME')).toBe('Ongoing');
  });
});

describe('status and lists', () => {
  it('seeded imported accounts: listed, imported on v1 and v2, with unique numbers; existing pairs left alone', async () => {
    const s = await open({ processingMs: 60_000 });
    await s.post('/v2/data-import/accounts/', { payload: account('S-1') });
    const numbers = Array.from({ length: 2000 }, (_, n) => `S-${n}`);
    expect(s.sandbox.control.seedImported('ACME', numbers)).toBe(1999);
    expect(s.sandbox.inspect.account('ACME', 'S-1')?.status).toBe('PENDING');
    const imported = (await s.get('/v1/data-import/imported-account-import-processes/ACME/')).body as Array<{
      external_account_number: string;
      platform_account_number: string;
    }>;
    expect(imported).toHaveLength(1999);
    expect(imported[0]).toEqual({
      external_account_number: 'S-0',
      platform_account_number: expect.stringMatching(/^A-/),
      account_created_at: expect.stringMatching(OFFSET_DATETIME),
    });
    expect(new Set(imported.map((item) => item.platform_account_number)).size).toBe(1999);
    expect((await v1(s, 'S-1999')).body).toEqual({
      status: 'COMPLETED',
      platform_account_number: imported[1998]?.platform_account_number,
    });
    expect((await v2(s, 'S-7')).body).toMatchObject({ status: 'PROCESSED' });
  });

  it('answers 404 {detail, code: not_found} for an unknown process, v2 and v1', async () => {
    const s = await open();
    expect(await v2(s, 'missing')).toMatchObject({
      status: 404,
      body: { detail: 'The requested resource was not found.', code: 'not_found' },
    });
    expect((await v1(s, 'missing')).status).toBe(404);
  });

  it('lists all, pending (null number and date) and imported accounts, bare arrays in creation order', async () => {
    const s = await open({ processingMs: 60_000 });
    await s.post('/v2/data-import/accounts/', { payload: account('L-1') });
    s.sandbox.control.settleAll();
    await s.post('/v2/data-import/accounts/', { payload: account('L-2') });
    const number = s.sandbox.inspect.account('ACME', 'L-1')?.platformAccountNumber;
    const all = await s.get('/v1/data-import/all-account-import-processes/ACME/');
    expect(all.body).toEqual([
      {
        external_account_number: 'L-1',
        platform_account_number: number,
        account_created_at: expect.stringMatching(OFFSET_DATETIME),
      },
      { external_account_number: 'L-2', platform_account_number: null, account_created_at: null },
    ]);
    expect((await s.get('/v1/data-import/pending-account-import-processes/ACME/')).body).toEqual([all.body[1]]);
    expect((await s.get('/v1/data-import/imported-account-import-processes/ACME/')).body).toEqual([all.body[0]]);
    expect((await s.get('/v1/data-import/all-account-import-processes/PAUSED/')).body).toEqual([]);
    expect((await s.get('/v1/data-import/all-account-import-processes/NOPE/')).body.code).toBe(
      'invalid_import_supplier',
    );
  });

  it('decodes path segments: an external account number with a slash or space', async () => {
    const s = await open();
    await s.importAccount('A/B C');
    expect((await v2(s, 'A/B C')).body.status).toBe('PROCESSED');
  });
});
