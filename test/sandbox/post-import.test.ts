import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { OPEN_PERIOD_START, openSession, TODAY, type Session } from './helpers.js';

// Spec "Post-import endpoints (v1)": notes, transactions, historical statements, payment instructions.

let s: Session;
beforeEach(async () => {
  s = await openSession();
  await s.importAccount('P-1');
});
afterEach(() => s.sandbox.close());

const pair = { import_supplier: 'ACME', external_account_number: 'P-1' };
const inspected = () => s.sandbox.inspect.account('ACME', 'P-1');
const charge = (id: string, extra: Record<string, unknown> = {}) => ({
  transaction_id: id,
  transaction_date: TODAY,
  amount: 10.5,
  type: 'CHARGE',
  ...extra,
});
const dayBefore = (date: string) => new Date(Date.parse(date) - 86_400_000).toISOString().slice(0, 10);

describe('every post-import endpoint', () => {
  const requests: Array<[string, Record<string, unknown>]> = [
    ['/v1/data-import/notes/create/', { notes: [{ body: 'x' }] }],
    ['/v1/data-import/transactions/create/', { transactions: [charge('t')] }],
    [
      '/v1/data-import/historical-statements/create/',
      { statements: [{ statement_id: 's', bill_period_from_date: '2024-01-01', bill_period_to_date: '2024-01-31' }] },
    ],
    ['/v1/data-import/payment-instruction/create/', { vendor: 'STRIPE', reference: 'R', type: 'CARD' }],
  ];

  it.each(requests)(
    '%s answers 404 {detail, code: account_not_found} until the account is imported (staged is not enough)',
    async (path, body) => {
      const staged = await openSession({ processingMs: 60_000 });
      try {
        await staged.post('/v2/data-import/accounts/', {
          payload: { import_supplier: 'ACME', external_account_number: 'P-1' },
        });
        const answer = await staged.post(path, { ...pair, ...body });
        expect(answer.status).toBe(404);
        expect(answer.body).toEqual({ detail: expect.any(String), code: 'account_not_found' });
        expect((await staged.post(path, { ...pair, external_account_number: 'never', ...body })).status).toBe(404);
      } finally {
        await staged.sandbox.close();
      }
    },
  );

  it.each(requests)('%s refuses a Paused supplier with import_supplier_migration_not_ongoing', async (path, body) => {
    s.sandbox.control.setSupplierStatus('ACME', 'Complete');
    const answer = await s.post(path, { ...pair, ...body });
    expect(answer).toMatchObject({ status: 400, body: { code: 'import_supplier_migration_not_ongoing' } });
  });

  it.each(requests)('%s answers the standardized 400 body for missing fields and undocumented ones', async (path) => {
    const answer = await s.post(path, { import_supplier: 'ACME', extra: 1 });
    expect(answer.status).toBe(400);
    expect(answer.body.code).toBe('invalid');
    const attrs = answer.body.errors.map((item: { attr: string }) => item.attr);
    expect(attrs).toContain('external_account_number');
    expect(attrs).toContain('extra');
  });
});

describe('notes', () => {
  const notes = (items: unknown[]) => s.post('/v1/data-import/notes/create/', { ...pair, notes: items });

  it('creates each note once: same body -> NOTE_ALREADY_EXISTS, within one request and on a resend', async () => {
    const first = await notes([{ body: 'Moved in', is_pinned: true }, { body: 'Moved in' }]);
    expect(first.status).toBe(201);
    expect(first.body.map((item: { status: string }) => item.status)).toEqual([
      'NOTE_CREATION_SUCCESS',
      'NOTE_ALREADY_EXISTS',
    ]);
    expect(first.body[0]).toEqual({
      created_at: expect.any(String),
      body: 'Moved in',
      status: 'NOTE_CREATION_SUCCESS',
    });
    expect((await notes([{ body: 'Moved in' }])).body[0].status).toBe('NOTE_ALREADY_EXISTS');
    expect(inspected()?.notes).toEqual([
      {
        body: 'Moved in',
        documentPaths: [],
        createdAt: first.body[0].created_at,
        isPinned: true,
        unpinAt: null,
        bySandbox: false,
      },
    ]);
  });

  it('compares created_at too when one is given: same body at another time is a new note', async () => {
    await notes([{ body: 'Call', created_at: '2024-01-01T10:00:00Z' }]);
    const again = await notes([
      { body: 'Call', created_at: '2024-01-01T10:00:00+00:00' },
      { body: 'Call', created_at: '2024-02-01T10:00:00Z' },
    ]);
    expect(again.body.map((item: { status: string }) => item.status)).toEqual([
      'NOTE_ALREADY_EXISTS',
      'NOTE_CREATION_SUCCESS',
    ]);
    expect(again.body[1].created_at).toBe('2024-02-01T10:00:00Z');
  });

  it('needs a body or document paths; a document path may not leave the supplier root', async () => {
    const answer = await notes([
      { is_pinned: true },
      { document_paths: [{ document_path: '../secret.pdf' }] },
      { document_paths: [{ document_path: '/etc/passwd' }] },
    ]);
    expect(answer.status).toBe(400);
    const found = answer.body.errors.map((item: { attr: string; code: string }) => `${item.attr}:${item.code}`);
    expect(found).toEqual(
      expect.arrayContaining([
        'notes.0:note_body_or_document_path_not_found',
        'notes.1.document_paths.0.document_path:invalid_document_path',
        'notes.2.document_paths.0.document_path:invalid_document_path',
      ]),
    );
    const ok = await notes([{ document_paths: [{ document_path: 'notes/1/a.pdf' }] }]);
    expect(ok.body[0]).toMatchObject({ body: null, status: 'NOTE_CREATION_SUCCESS' });
  });

  it('refuses unpin_at before created_at and a datetime without offset', async () => {
    const answer = await notes([
      { body: 'a', created_at: '2024-01-02T00:00:00Z', unpin_at: '2024-01-01T00:00:00Z' },
      { body: 'b', created_at: '2024-01-02 10:00' },
    ]);
    const found = answer.body.errors.map((item: { attr: string; code: string }) => `${item.attr}:${item.code}`);
    expect(found).toEqual(
      expect.arrayContaining([
        'notes.0.unpin_at:note_unpin_at_earlier_than_creation_date',
        'notes.1.created_at:invalid_datetime',
      ]),
    );
  });
});

describe('transactions', () => {
  const post = (items: unknown[], query = '') =>
    s.post(`/v1/data-import/transactions/create/${query}`, { ...pair, transactions: items });

  it('adds transactions, echoing amounts as two-place decimal strings', async () => {
    const answer = await post([charge('t1'), charge('t2', { amount: 3 })]);
    expect(answer.status).toBe(201);
    expect(answer.body.results).toEqual([
      { status: 'TRANSACTION_ADDED_TO_ACCOUNT', transaction_data: { ...charge('t1'), amount: '10.50' } },
      { status: 'TRANSACTION_ADDED_TO_ACCOUNT', transaction_data: { ...charge('t2'), amount: '3.00' } },
    ]);
    expect(
      inspected()?.transactions.map((item) => [
        item.transactionId,
        item.amount,
        item.transactionDate,
        item.movedIntoOpenPeriod,
      ]),
    ).toEqual([
      ['t1', '10.50', TODAY, false],
      ['t2', '3.00', TODAY, false],
    ]);
  });

  it('check_previously_added (default true): a resent transaction is TRANSACTION_ALREADY_EXISTS and not added twice', async () => {
    await post([charge('t1')]);
    const again = await post([charge('t1'), charge('t2')]);
    expect(again.body.results.map((item: { status: string }) => item.status)).toEqual([
      'TRANSACTION_ALREADY_EXISTS',
      'TRANSACTION_ADDED_TO_ACCOUNT',
    ]);
    expect(inspected()?.transactions).toHaveLength(2);
  });

  it('check_previously_added=false adds a resent transaction again (a duplicate the inspector shows)', async () => {
    await post([charge('t1')]);
    const again = await post([charge('t1')], '?check_previously_added=false');
    expect(again.body.results[0].status).toBe('TRANSACTION_ADDED_TO_ACCOUNT');
    expect(inspected()?.transactions.map((item) => item.transactionId)).toEqual(['t1', 't1']);
  });

  it('force_add_to_current_statement (default true): a date before the open period is moved into it and a note is pinned', async () => {
    const early = dayBefore(OPEN_PERIOD_START);
    const answer = await post([charge('old', { transaction_date: early })]);
    expect(answer.status).toBe(201);
    // The answer says it: the date it holds now, and the description added.
    expect(answer.body.results[0].transaction_data.transaction_date).toBe(OPEN_PERIOD_START);
    const description = `Moved into the open statement period (from ${OPEN_PERIOD_START}) from ${early}.`;
    expect(answer.body.results[0].transaction_data.description).toBe(description);
    const stored = inspected()?.transactions[0];
    expect(stored).toMatchObject({
      transactionDate: OPEN_PERIOD_START,
      submittedDate: early,
      movedIntoOpenPeriod: true,
      description,
    });
    expect(inspected()?.notes).toEqual([
      expect.objectContaining({ isPinned: true, bySandbox: true, body: expect.stringContaining('old') }),
    ]);
  });

  it('force_add_to_current_statement=false: TRANSACTION_IMPORT_ERROR naming the first failing transaction; nothing is added', async () => {
    const early = dayBefore(OPEN_PERIOD_START);
    const answer = await post(
      [charge('ok'), charge('bad', { transaction_date: early }), charge('bad2', { transaction_date: early })],
      '?force_add_to_current_statement=false',
    );
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({
      status: 'TRANSACTION_IMPORT_ERROR',
      transaction_data: { ...charge('bad', { transaction_date: early }), amount: '10.50' },
    });
    expect(answer.body.error_detail).toContain('not within the statement');
    expect(inspected()?.transactions ?? []).toEqual([]);
  });

  it('an invalid transaction gets TRANSACTION_IMPORT_ERROR with its issues; request-level problems the standardized body', async () => {
    const future = new Date(Date.now() + 3 * 86_400_000).toISOString().slice(0, 10);
    const answer = await post([charge('a'), charge('b', { transaction_date: future }), charge('c')]);
    expect(answer.body.status).toBe('TRANSACTION_IMPORT_ERROR');
    expect(answer.body.transaction_data.transaction_id).toBe('b');
    expect(answer.body.errors).toEqual([
      expect.objectContaining({ attr: 'transactions.1.transaction_date', code: 'transaction_in_future' }),
    ]);
    const negative = await post([{ ...charge('p'), type: 'PAYMENT', amount: -5 }]);
    expect(negative.body.errors[0].code).toBe('negative_payment_amount');
    expect((await post([])).body).toMatchObject({
      code: 'invalid',
      errors: [expect.objectContaining({ attr: 'transactions' })],
    });
    expect((await post([charge('x')], '?check_previously_added=maybe')).body.errors[0].attr).toBe(
      'check_previously_added',
    );
    expect(inspected()?.transactions ?? []).toEqual([]);
  });

  it('a missing or repeated transaction_id is a request-level 400 with the platform code, whatever else is wrong', async () => {
    const future = new Date(Date.now() + 3 * 86_400_000).toISOString().slice(0, 10);
    const { transaction_id: _, ...withoutId } = charge('x');
    const missing = await post([charge('a'), withoutId]);
    expect(missing.status).toBe(400);
    expect(missing.body).toMatchObject({
      code: 'invalid',
      errors: [expect.objectContaining({ attr: 'transactions.1.transaction_id', code: 'missing_transaction_id' })],
    });
    const repeated = await post([charge('a'), charge('b', { transaction_date: future }), charge('a')]);
    expect(repeated.status).toBe(400);
    expect(repeated.body.status).toBeUndefined();
    expect(repeated.body.errors).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ attr: 'transactions.1.transaction_date', code: 'transaction_in_future' }),
        expect.objectContaining({ attr: 'transactions.2.transaction_id', code: 'duplicate_transaction_ids' }),
      ]),
    );
    expect(inspected()?.transactions ?? []).toEqual([]);
  });
});

describe('historical statements', () => {
  const statement = (id: string) => ({
    statement_id: id,
    bill_period_from_date: '2024-01-01',
    bill_period_to_date: '2024-01-31',
    issued_date: '2024-02-02',
    gross_amount: 1234,
  });
  const post = (items: unknown[]) =>
    s.post('/v1/data-import/historical-statements/create/', { ...pair, statements: items });

  it('answers 201 with the validated data echoed', async () => {
    const answer = await post([statement('S1')]);
    expect(answer).toMatchObject({ status: 201, body: { ...pair, statements: [statement('S1')] } });
    expect(inspected()?.historicalStatements).toEqual([statement('S1')]);
  });

  it('refuses a request holding a statement_id already on the account, adding none of it', async () => {
    await post([statement('S1')]);
    const answer = await post([statement('S2'), statement('S1')]);
    expect(answer.status).toBe(400);
    expect(answer.body.code).toBe('historical_statement_already_exists');
    expect(answer.body.errors).toEqual([
      expect.objectContaining({ attr: 'statements.1.statement_id', code: 'historical_statement_already_exists' }),
    ]);
    expect(inspected()?.historicalStatements.map((item) => item['statement_id'])).toEqual(['S1']);
  });

  it('refuses a period that ends before it starts', async () => {
    const answer = await post([{ ...statement('S3'), bill_period_to_date: '2023-12-01' }]);
    expect(answer.body.errors[0]).toMatchObject({
      attr: 'statements.0.bill_period_to_date',
      code: 'start_date_later_than_end_date',
    });
  });
});

describe('payment instructions (a simulated vendor)', () => {
  const post = (reference: string) =>
    s.post('/v1/data-import/payment-instruction/create/', { ...pair, vendor: 'STRIPE', reference, type: 'CARD' });

  it('answers 201 {platform_account_number, reference}', async () => {
    const answer = await post('MANDATE-1');
    expect(answer).toEqual(
      expect.objectContaining({
        status: 201,
        body: { platform_account_number: inspected()?.platformAccountNumber, reference: 'MANDATE-1' },
      }),
    );
    expect(inspected()?.paymentInstructions).toEqual([
      { vendor: 'STRIPE', reference: 'MANDATE-1', type: 'CARD', createdAt: expect.any(String) },
    ]);
  });

  it('FAIL- references: persistent vendor failure, 400 every time, with the platform error body', async () => {
    for (let attempt = 0; attempt < 3; attempt++) {
      const answer = await post('FAIL-1');
      expect(answer.status).toBe(400);
      expect(answer.body).toEqual({
        ...pair,
        reference: 'FAIL-1',
        error_detail: expect.any(String),
        detail: expect.any(String),
        code: 'payment_vendor_failed',
      });
    }
    expect(inspected()?.paymentInstructions ?? []).toEqual([]);
  });

  it('FLAKY- references: 500 on the first attempt, then success (flakyAttempts)', async () => {
    expect((await post('FLAKY-1')).status).toBe(500);
    expect((await post('FLAKY-1')).status).toBe(201);
    const twice = await openSession({ flakyAttempts: 2 });
    try {
      await twice.importAccount('P-1');
      const send = () =>
        twice.post('/v1/data-import/payment-instruction/create/', {
          ...pair,
          vendor: 'STRIPE',
          reference: 'FLAKY-2',
          type: 'CARD',
        });
      expect([(await send()).status, (await send()).status, (await send()).status]).toEqual([500, 500, 201]);
    } finally {
      await twice.sandbox.close();
    }
  });

  it('keeps one active instruction per account: a second (any reference) gets the real 400 body', async () => {
    await post('MANDATE-2');
    for (const reference of ['MANDATE-2', 'MANDATE-3']) {
      const answer = await post(reference);
      expect(answer.status).toBe(400);
      expect(answer.body).toEqual({ ...pair, reference, error_detail: 'Account already has an active instruction' });
    }
    expect(inspected()?.paymentInstructions.map((pi) => pi.reference)).toEqual(['MANDATE-2']);
  });

  it('multiplePaymentInstructions: several per account, the same reference twice refused', async () => {
    const many = await openSession({ multiplePaymentInstructions: true });
    try {
      await many.importAccount('P-1');
      const send = (reference: string) =>
        many.post('/v1/data-import/payment-instruction/create/', {
          ...pair,
          vendor: 'STRIPE',
          reference,
          type: 'CARD',
        });
      expect((await send('M-1')).status).toBe(201);
      expect((await send('M-2')).status).toBe(201);
      expect((await send('M-2')).body.code).toBe('payment_instruction_already_exists');
    } finally {
      await many.sandbox.close();
    }
  });

  it('LOST- references: created, then the connection is dropped without an answer; a resend is refused as already active', async () => {
    await expect(post('LOST-1')).rejects.toThrow();
    expect(inspected()?.paymentInstructions.map((pi) => pi.reference)).toEqual(['LOST-1']);
    expect((await post('LOST-1')).body.error_detail).toBe('Account already has an active instruction');
  });

  it('refuses an undocumented type', async () => {
    const bad = await s.post('/v1/data-import/payment-instruction/create/', {
      ...pair,
      vendor: 'STRIPE',
      reference: 'X',
      type: 'GOLD',
    });
    expect(bad.body).toMatchObject({
      code: 'invalid',
      errors: [expect.objectContaining({ attr: 'type', code: 'invalid_choice' })],
    });
  });
});
