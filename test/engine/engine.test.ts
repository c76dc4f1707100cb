import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { nullSink, runPush, sourceOf, type EngineSettings } from '../../src/engine/index.js';
import { Ledger } from '../../src/ledger/index.js';
import type { ExportEntry } from '../../src/mapping/types.js';
import { accountEntry, type AccountSpec, fast, orphanEntry, stream } from './build.js';
import { droppedConnection, FakeService } from './fake-service.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'engine-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

async function push(
  service: FakeService,
  entries: ExportEntry[] | undefined,
  settings: Partial<EngineSettings> = {},
  signal?: AbortSignal,
) {
  const ledger = Ledger.open(dir);
  ledger.startRun('push', {});
  try {
    return await runPush({
      ledger,
      client: service,
      settings: { ...fast, ...settings },
      sink: nullSink,
      source: entries && sourceOf(stream(entries)),
      ...(signal ? { signal } : {}),
    });
  } finally {
    ledger.close();
  }
}

/** The ledger's payment instructions of an account, by reference. */
function instructions(
  number: string,
): Map<string, { state: string; settledBy: string | null; attempts: number; code?: string }> {
  const ledger = Ledger.open(dir);
  try {
    const account = ledger.findAccount('ACME', number);
    return new Map(
      ledger.read
        .items(account?.id ?? 0)
        .filter((item) => item.kind === 'payment_instruction')
        .map((item) => [
          item.naturalKey,
          {
            state: item.state,
            settledBy: item.settledBy,
            attempts: item.attempts,
            ...(item.error ? { code: item.error.code } : {}),
          },
        ]),
    );
  } finally {
    ledger.close();
  }
}

const instruction = (number: string) => [...instructions(number).values()][0];

const full = (n: number): AccountSpec => ({
  number: `A-${n}`,
  notes: [`note ${n}`],
  transactions: [`T-${n}-1`, `T-${n}-2`],
  statements: [`S-${n}`],
  paymentInstructions: [`PI-${n}`],
});

function expectExact(service: FakeService, specs: AccountSpec[]): void {
  for (const spec of specs) {
    const account = service.accounts.get(spec.number);
    expect(account?.creates, spec.number).toBe(1);
    expect(account?.notes.map((note) => note.body)).toEqual(spec.notes ?? []);
    expect(account?.transactions).toEqual(spec.transactions ?? []);
    expect(account?.statements).toEqual(spec.statements ?? []);
    expect(account?.paymentInstructions).toEqual(spec.paymentInstructions ?? []);
  }
}

describe('push engine against an in-memory service', () => {
  it('imports every valid account once with its records, holds invalid ones back, and a rerun sends nothing', async () => {
    const specs = Array.from({ length: 30 }, (_, n) => full(n));
    const service = new FakeService();
    const result = await push(
      service,
      [
        ...specs.map((spec, n) => accountEntry(spec, n + 2)),
        accountEntry({ number: 'BAD-1', notes: ['x'], invalid: true }),
      ],
      { concurrency: 4 },
    );
    expect(result.reason).toBe('finished');
    expectExact(service, specs);
    expect(service.accounts.has('BAD-1')).toBe(false);
    expect(service.maxInFlight).toBeLessThanOrEqual(4);
    expect(result.counts.accounts).toEqual({ done: 30, invalid: 1 });
    expect(result.exitCode).toBe(5);
    const calls = service.calls.length;
    const again = await push(service, [
      ...specs.map((spec, n) => accountEntry(spec, n + 2)),
      accountEntry({ number: 'BAD-1', notes: ['x'], invalid: true }),
    ]);
    expect(service.calls.length).toBe(calls);
    expect(again.exitCode).toBe(5);
  });

  it('creates once an account queued before the pages started over (entries out of order) and sent before its turn', async () => {
    // K-1 and M-1 are staged first and taken; K-1's create is answered late, so M-1 waits in the queue. Entries below
    // them come next (out of order): the pages start over from A-0 and read M-1 as still staged. By the time the pump
    // reaches M-1 there, M-1 has been created: the row it read is stale.
    const service = new FakeService();
    let answerK1: () => void = () => undefined;
    const k1Answered = new Promise<void>((resolve) => (answerK1 = resolve));
    let k1Sent: () => void = () => undefined;
    const k1Taken = new Promise<void>((resolve) => (k1Sent = resolve));
    const create = service.createAccount;
    service.createAccount = async (payload) => {
      if (payload.external_account_number === 'K-1') {
        k1Sent();
        await k1Answered;
      }
      return create(payload);
    };
    const first = [
      { ...full(1), number: 'K-1' },
      { ...full(2), number: 'M-1' },
    ];
    const below = Array.from({ length: 4 }, (_, n) => full(n));
    async function* entries(): AsyncGenerator<ExportEntry> {
      for (const [n, spec] of first.entries()) yield accountEntry(spec, n + 2);
      await k1Taken;
      for (const [n, spec] of below.entries()) yield accountEntry(spec, n + 4);
      // The whole export is staged (the pages start over) before K-1's create is answered.
      setImmediate(answerK1);
    }
    const ledger = Ledger.open(dir);
    ledger.startRun('push', {});
    try {
      const result = await runPush({
        ledger,
        client: service,
        settings: { ...fast, concurrency: 1 },
        sink: nullSink,
        source: sourceOf(entries()),
      });
      expect(result.reason).toBe('finished');
    } finally {
      ledger.close();
    }
    expectExact(service, [...first, ...below]);
  });

  it('reconciles an ambiguous create through the status instead of resending it', async () => {
    const service = new FakeService();
    service.fault = (method, n) => (method === 'create' && n === 1 ? 'ambiguous' : 'none');
    const result = await push(service, [accountEntry(full(1))]);
    expect(result.exitCode).toBe(0);
    expectExact(service, [full(1)]);
    expect(service.calls.filter((call) => call === 'create')).toHaveLength(1);
  });

  it('resends a create the service never received', async () => {
    const service = new FakeService();
    service.fault = (method, n) => (method === 'create' && n === 1 ? 'drop' : 'none');
    const result = await push(service, [accountEntry(full(1))]);
    expect(result.exitCode).toBe(0);
    expectExact(service, [full(1)]);
    expect(service.calls.filter((call) => call === 'create')).toHaveLength(2);
  });

  it('resends notes, transactions and statements after ambiguous failures: the service dedups them', async () => {
    const service = new FakeService();
    service.fault = (method, n) =>
      ['notes', 'transactions', 'statements'].includes(method) && n === 1 ? 'ambiguous' : 'none';
    const spec = { ...full(1), statements: ['S-1', 'S-2'] };
    const result = await push(service, [accountEntry(spec)]);
    expect(result.exitCode).toBe(0);
    expectExact(service, [spec]);
  });

  it('resends a payment instruction whose answer was lost; the one-active refusal settles it as reconciled', async () => {
    const service = new FakeService();
    service.fault = (method, n) => (method === 'payment' && n === 1 ? 'ambiguous' : 'none');
    const first = await push(service, [accountEntry(full(1))]);
    expect(first.counts.items.payment_instruction).toEqual({ done: 1 });
    expect(first.exitCode).toBe(0);
    expect(service.calls.filter((call) => call === 'payment')).toHaveLength(2);
    expect(service.accounts.get('A-1')?.paymentInstructions).toEqual(['PI-1']);
    expect(instruction('A-1')).toMatchObject({ state: 'done', settledBy: 'reconciled', attempts: 2 });
  });

  it('a crash between intent and outcome: the next run resends the instruction and records it reconciled', async () => {
    const service = new FakeService();
    // Applied, then no answer, and the run stops on it (one failure in a row is too many here): the intent is
    // committed with no outcome, as after a kill. (A failure answer would say it was not applied.)
    const original = service.createPaymentInstruction;
    service.createPaymentInstruction = async (request) => {
      await original(request);
      throw droppedConnection('createPaymentInstruction');
    };
    const crashed = await push(service, [accountEntry(full(1))], { maxConsecutiveFailures: 1 });
    expect(crashed.reason).toBe('fatal');
    expect(instruction('A-1')).toMatchObject({ state: 'sending', attempts: 1 });
    service.fault = () => 'none';
    service.createPaymentInstruction = original;
    const rerun = await push(service, [accountEntry(full(1))]);
    expect(rerun.exitCode).toBe(0);
    expect(service.accounts.get('A-1')?.paymentInstructions).toEqual(['PI-1']);
    expect(instruction('A-1')).toMatchObject({ state: 'done', settledBy: 'reconciled', attempts: 2 });
  });

  it('a first send refused as already active: done (already_exists) when it is the only one, failed when the ledger holds another', async () => {
    const service = new FakeService();
    await push(service, [accountEntry(full(1))]);
    // A second export brings another instruction for the same account: the platform refuses it.
    const second = await push(service, [accountEntry({ ...full(1), paymentInstructions: ['PI-1', 'PI-9'] })]);
    expect(second.counts.items.payment_instruction).toEqual({ done: 1, failed: 1 });
    expect(instructions('A-1').get('PI-9')).toMatchObject({
      state: 'failed',
      code: 'payment_instruction_already_active',
    });
    expect(instructions('A-1').get('PI-1')).toMatchObject({ state: 'done', settledBy: 'created' });
    expect(service.accounts.get('A-1')?.paymentInstructions).toEqual(['PI-1']);
  });

  it('with several instructions per account allowed, one whose outcome is unknown is never resent', async () => {
    const service = new FakeService();
    service.multiplePaymentInstructions = true;
    service.fault = (method) => (method === 'payment' ? 'ambiguous' : 'none');
    const first = await push(service, [accountEntry(full(1))], { multiplePaymentInstructions: true });
    expect(first.counts.items.payment_instruction).toEqual({ unknown: 1 });
    expect(first.exitCode).toBe(5);
    service.fault = () => 'none';
    await push(service, [accountEntry(full(1))], { multiplePaymentInstructions: true });
    expect(service.calls.filter((call) => call === 'payment')).toHaveLength(1);
    expect(service.accounts.get('A-1')?.paymentInstructions).toEqual(['PI-1']);
  });

  it('with check_previously_added off, sends one transaction per request and never resends an unknown one', async () => {
    const service = new FakeService();
    service.fault = (method, n) => (method === 'transactions' && n === 1 ? 'ambiguous' : 'none');
    const flags = { check_previously_added: false, force_add_to_current_statement: true };
    const result = await push(service, [accountEntry(full(1))], { transactionFlags: flags });
    expect(service.accounts.get('A-1')?.transactions).toEqual(['T-1-1', 'T-1-2']);
    expect(result.counts.items.transaction).toEqual({ unknown: 1, done: 1 });
    await push(service, [accountEntry(full(1))], { transactionFlags: flags });
    expect(service.accounts.get('A-1')?.transactions).toEqual(['T-1-1', 'T-1-2']);
  });

  it('a transaction the 201 answers TRANSACTION_IMPORT_ERROR for is failed at its row, the others of the request done', async () => {
    const service = new FakeService();
    const result = await push(service, [accountEntry({ number: 'A-1', transactions: ['T-1', 'BAD-2'] })]);
    expect(service.accounts.get('A-1')?.transactions).toEqual(['T-1']);
    expect(result.counts.items.transaction).toEqual({ done: 1, failed: 1 });
    expect(result.exitCode).toBe(5);
    const ledger = Ledger.open(dir);
    try {
      const account = ledger.findAccount('ACME', 'A-1');
      const bad = ledger.read.items(account?.id ?? 0).find((item) => item.naturalKey === 'BAD-2');
      expect(bad?.error).toMatchObject({ code: 'transaction_import_error', file: 'transactions.csv', line: 3 });
    } finally {
      ledger.close();
    }
  });

  it('records ERRORED imports and retries them only with --retry-errored or changed data', async () => {
    const service = new FakeService();
    const spec = { number: 'ERR-1', notes: ['n'] };
    const first = await push(service, [accountEntry(spec)]);
    expect(first.counts.accounts).toEqual({ errored: 1 });
    await push(service, [accountEntry(spec)]);
    expect(service.calls.filter((call) => call === 'create')).toHaveLength(1);
    await push(service, [accountEntry(spec)], { retryErrored: true });
    expect(service.calls.filter((call) => call === 'create')).toHaveLength(2);
    await push(service, [accountEntry({ ...spec, billingName: 'fixed' })]);
    expect(service.calls.filter((call) => call === 'create')).toHaveLength(3);
  });

  it('stops with a fatal result when the supplier does not accept migrations', async () => {
    const service = new FakeService();
    service.supplierOngoing = false;
    const result = await push(
      service,
      Array.from({ length: 20 }, (_, n) => accountEntry(full(n))),
      { concurrency: 2 },
    );
    expect(result.reason).toBe('fatal');
    expect(result.fatal?.code).toBe('configuration_refused');
    expect(result.fatal?.detail).toContain('(import_supplier_migration_not_ongoing: ');
    expect(result.fatal?.detail).toContain('ask the platform operators to set it Ongoing');
    expect(result.exitCode).toBe(3);
    expect(service.calls.length).toBeLessThanOrEqual(3);
    // Refused, so not sent: nothing is left "create unconfirmed", the next run sends them. (How much of the export
    // was staged when the run stopped depends on how far it was read: staging and sending go together.)
    expect(Object.keys(result.counts.accounts)).toEqual(['staged']);
  });

  it.each([
    ['odd', 'unexpected_answer', 'in a way the spec does not describe'],
    ['unreached', 'service_unreachable', 'answered none of 5 requests in a row'],
  ] as const)('a run of %s failures stops as %s', async (fault, code, said) => {
    const service = new FakeService();
    service.fault = () => fault;
    const result = await push(
      service,
      Array.from({ length: 20 }, (_, n) => accountEntry(full(n))),
      { maxConsecutiveFailures: 5 },
    );
    expect(result.reason).toBe('fatal');
    expect(result.fatal?.code).toBe(code);
    expect(result.fatal?.detail).toContain(said);
  });

  it('treats a run of 5xx answers as the service failing (it answered: not unreachable)', async () => {
    const service = new FakeService();
    service.fault = () => 'fail';
    const entries = Array.from({ length: 40 }, (_, n) => accountEntry(full(n)));
    const result = await push(service, entries, { maxConsecutiveFailures: 5 });
    expect(result.reason).toBe('fatal');
    expect(result.fatal?.code).toBe('service_failing');
    service.fault = () => 'none';
    // The stop ended staging too, wherever it had come: the rerun reads the export again, as cron's does.
    const rerun = await push(service, entries);
    expect(rerun.exitCode).toBe(0);
    expectExact(
      service,
      Array.from({ length: 40 }, (_, n) => full(n)),
    );
  });

  it('pushes records of a later export for an imported account, and holds back those of an account found nowhere', async () => {
    const service = new FakeService();
    await push(service, [accountEntry(full(1))]);
    const later = await push(service, [
      orphanEntry({ number: 'A-1', notes: ['later note'], transactions: ['T-9'] }),
      orphanEntry({ number: 'NEW-1', notes: ['x'] }),
    ]);
    expect(service.accounts.get('A-1')?.notes.map((note) => note.body)).toEqual(['note 1', 'later note']);
    expect(service.accounts.get('A-1')?.transactions).toEqual(['T-1-1', 'T-1-2', 'T-9']);
    // NEW-1 has no import process: a data error (fix-data.csv), not a wait.
    expect(later.counts.accounts).toEqual({ done: 1, invalid: 1 });
    expect(later.exitCode).toBe(5);
  });

  it('reports data changed after import without sending it', async () => {
    const service = new FakeService();
    await push(service, [accountEntry(full(1))]);
    const calls = service.calls.length;
    const result = await push(service, [accountEntry({ ...full(1), billingName: 'changed' })]);
    expect(service.calls.length).toBe(calls);
    expect(result.counts.changedAfterImport).toBe(1);
    expect(result.staged?.changedAfterImport).toBe(1);
  });

  it('an interrupted run leaves a consistent ledger that a rerun completes exactly', async () => {
    const service = new FakeService();
    const specs = Array.from({ length: 60 }, (_, n) => full(n));
    const controller = new AbortController();
    // SIGINT once a third of the accounts have been sent.
    service.fault = (method, n) => {
      if (method === 'create' && n === 20) controller.abort();
      return 'none';
    };
    const first = await push(
      service,
      specs.map((spec) => accountEntry(spec)),
      { concurrency: 3 },
      controller.signal,
    );
    expect(first.reason).toBe('interrupted');
    expect(first.exitCode).toBe(130);
    const second = await push(
      service,
      specs.map((spec) => accountEntry(spec)),
    );
    expect(second.exitCode).toBe(0);
    expectExact(service, specs);
  });

  it('--no-wait never waits for processing; the next --no-wait run checks what it left and pushes the records', async () => {
    const service = new FakeService();
    service.pollsToSettle = 1_000_000;
    // Checks due a second after a create: a run that waited for them would take that long.
    const noWait = { wait: false, pollSchedule: { firstDelayMs: 1_000, factor: 2, maxDelayMs: 2_000, jitter: 0 } };
    const first = await push(service, [accountEntry(full(1))], noWait);
    expect(first.reason).toBe('finished');
    expect(first.counts.accounts).toEqual({ scheduled: 1 });
    // Not finished: exit 1, as `migrate status` says (README "Exit codes").
    expect(first.exitCode).toBe(1);
    expect(service.calls).toEqual(['create']);
    // Still processing: the next run checks it once (its check brought forward) and does not wait for it.
    const second = await push(service, undefined, noWait);
    expect(second.counts.accounts).toEqual({ scheduled: 1 });
    expect(second.exitCode).toBe(1);
    expect(service.calls).toEqual(['create', 'transfer']);
    service.pollsToSettle = 0;
    const third = await push(service, undefined, noWait);
    expect(third.exitCode).toBe(0);
    expect(third.counts.accounts).toEqual({ done: 1 });
    expectExact(service, [full(1)]);
  });

  it('stops waiting when no account progressed for the wait timeout, leaving it scheduled', async () => {
    const service = new FakeService();
    service.pollsToSettle = 1_000_000;
    const result = await push(service, [accountEntry(full(1))], { waitTimeoutMs: 200 });
    expect(result.reason).toBe('wait_timeout');
    expect(result.exitCode).toBe(1);
    expect(result.counts.accounts).toEqual({ scheduled: 1 });
    // Polled with v1 transfer status (IN_PROGRESS): v2 is never needed for an account still in progress.
    expect(service.calls.filter((call) => call === 'transfer').length).toBeGreaterThan(1);
    expect(service.calls.filter((call) => call === 'status')).toHaveLength(0);
  });

  it('learns an imported account from one v1 transfer status (its platform account number); v2 only for a failed one (its latest_error)', async () => {
    const service = new FakeService();
    const specs = Array.from({ length: 5 }, (_, n) => ({ number: `A-${n}`, notes: [`note ${n}`] }));
    const result = await push(
      service,
      [...specs, { number: 'ERR-1' }].map((spec) => accountEntry(spec)),
    );
    expect(result.counts.accounts).toEqual({ done: 5, errored: 1 });
    const count = (name: string): number => service.calls.filter((call) => call === name).length;
    // Each imported account: create, one v1 status, its notes; the errored one: create, v1 (UNKNOWN), v2.
    expect([count('create'), count('transfer'), count('status'), count('notes')]).toEqual([6, 6, 1, 5]);
    const ledger = Ledger.open(dir);
    try {
      expect(ledger.findAccount('ACME', 'A-0')?.platformAccountNumber).toBe(service.accounts.get('A-0')?.number);
      expect(ledger.findAccount('ACME', 'ERR-1')?.error?.code).toBe('meter_failure');
    } finally {
      ledger.close();
    }
  });
});
