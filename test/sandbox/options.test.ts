import { afterEach, describe, expect, it } from 'vitest';
import { parseSuppliers, resolveSandboxOptions, startSandbox } from '../../src/sandbox/index.js';
import { openSession, type Session } from './helpers.js';

// Options that change behaviour: the open statement period, today, retainPayloads; and their validation.

let session: Session | undefined;
afterEach(async () => {
  await session?.sandbox.close();
  session = undefined;
});
const pair = { import_supplier: 'ACME', external_account_number: 'O-1' };
const charge = (id: string, date: string) => ({
  transaction_id: id,
  transaction_date: date,
  amount: 1,
  type: 'CHARGE',
});

describe('openPeriodStart and today', () => {
  it('moves only transactions dated before openPeriodStart, and refuses those after today', async () => {
    session = await openSession({ openPeriodStart: '2024-01-01', today: '2024-03-15' });
    await session.importAccount('O-1');
    const answer = await session.post('/v1/data-import/transactions/create/', {
      ...pair,
      transactions: [charge('in', '2024-02-01'), charge('before', '2023-12-31')],
    });
    expect(answer.status).toBe(201);
    const stored = session.sandbox.inspect
      .account('ACME', 'O-1')
      ?.transactions.map((item) => [item.transactionId, item.transactionDate, item.movedIntoOpenPeriod]);
    expect(stored).toEqual([
      ['in', '2024-02-01', false],
      ['before', '2024-01-01', true],
    ]);
    const future = await session.post('/v1/data-import/transactions/create/', {
      ...pair,
      transactions: [charge('late', '2024-03-16')],
    });
    expect(future.body.errors[0].code).toBe('transaction_in_future');
  });

  it('defaults openPeriodStart to the first day of the month of today', () => {
    expect(resolveSandboxOptions({ today: '2025-07-19' }).openPeriodStart).toBe('2025-07-01');
    expect(resolveSandboxOptions({}).openPeriodStart).toBe(`${new Date().toISOString().slice(0, 7)}-01`);
  });
});

describe('retainPayloads: false (large benchmarks)', () => {
  it('keeps what dedup needs, not the submitted items', async () => {
    session = await openSession({ retainPayloads: false });
    await session.importAccount('O-1');
    await session.post('/v1/data-import/transactions/create/', {
      ...pair,
      transactions: [charge('t1', new Date().toISOString().slice(0, 10))],
    });
    const statement = { statement_id: 'S1', bill_period_from_date: '2024-01-01', bill_period_to_date: '2024-01-31' };
    await session.post('/v1/data-import/historical-statements/create/', { ...pair, statements: [statement] });
    const inspected = session.sandbox.inspect.account('ACME', 'O-1');
    expect(inspected?.payload).toBeUndefined();
    expect(inspected?.transactions[0]).toMatchObject({ transactionId: 't1', amount: '1.00', data: {} });
    expect(inspected?.historicalStatements).toEqual([{ statement_id: 'S1' }]);
    expect(
      (await session.post('/v1/data-import/historical-statements/create/', { ...pair, statements: [statement] })).body
        .code,
    ).toBe('historical_statement_already_exists');
    const resent = await session.post('/v1/data-import/transactions/create/', {
      ...pair,
      transactions: [charge('t1', new Date().toISOString().slice(0, 10))],
    });
    expect(resent.body.results[0].status).toBe('TRANSACTION_ALREADY_EXISTS');
  });
});

describe('option validation', () => {
  it('names the option, what it expects and what it got', async () => {
    expect(() => resolveSandboxOptions({ failRate: 2 })).toThrow(
      'sandbox option failRate: expected a share between 0 and 1, got 2',
    );
    expect(() => resolveSandboxOptions({ failRate: 0.6, dropRate: 0.6 })).toThrow(/total share <= 1/);
    expect(() => resolveSandboxOptions({ openPeriodStart: '1/1/2024' })).toThrow(/openPeriodStart/);
    expect(() => resolveSandboxOptions({ suppliers: { X: 'Closed' as 'Paused' } })).toThrow(/suppliers.X/);
    await expect(startSandbox({ port: -1 })).rejects.toThrow(/port/);
    expect(() => resolveSandboxOptions({ transferStatusWord: 'pending' })).toThrow(
      'sandbox option transferStatusWord: expected an upper-case word',
    );
    expect(() => resolveSandboxOptions({ processingStatusWord: '' })).toThrow(/processingStatusWord/);
    expect(() => resolveSandboxOptions({ throttleTokenStatus: 500 as 503 })).toThrow(
      'sandbox option throttleTokenStatus: expected 200 (KT-CT-1199), 429 or 503, got 500',
    );
    expect(() => resolveSandboxOptions({ throttleTokenRequests: -1 })).toThrow(/throttleTokenRequests/);
  });

  it('never shows the API key in an option error', () => {
    expect(() => resolveSandboxOptions({ apiKey: '' })).toThrow('"(hidden)"');
  });

  it('parses --suppliers: CODE[:STATUS], status optional and case-insensitive', () => {
    expect(parseSuppliers('ACME, NORTH:paused,SOUTH:Complete')).toEqual({
      ACME: 'Ongoing',
      NORTH: 'Paused',
      SOUTH: 'Complete',
    });
    expect(() => parseSuppliers('A:B:C')).toThrow(/CODE\[:STATUS\]/);
    expect(() => parseSuppliers(' , ')).toThrow(/at least one/);
  });
});
