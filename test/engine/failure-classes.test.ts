import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  AbortedError,
  AuthenticationError,
  HtmlAnswerError,
  NetworkError,
  NotFoundError,
  RequestRejectedError,
  RetryAfterTooLongError,
  ServerError,
  SupplierNotOngoingError,
  UnexpectedResponseError,
} from '../../src/api/errors.js';
import { runPush, sourceOf, type EngineEvent } from '../../src/engine/index.js';
import { classifyFailure, FAILURE_CLASSES } from '../../src/engine/failure.js';
import { Ledger } from '../../src/ledger/index.js';
import type { ExportEntry } from '../../src/mapping/types.js';
import { accountEntry, fast, stream } from './build.js';
import { FakeService } from './fake-service.js';

// Failure classification (architecture.md "Failure classes"): a request the client refuses to
// send (undocumented field) is a data error; an answer that does not match the spec is
// reconciled like a lost answer and given up after a bounded number of sends across runs.

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'engine-classes-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

async function push(service: FakeService, entries: ExportEntry[]) {
  const ledger = Ledger.open(dir);
  ledger.startRun('push', {});
  const events: EngineEvent[] = [];
  try {
    const result = await runPush({
      ledger,
      client: service,
      settings: fast,
      sink: { emit: (event) => events.push(event) },
      source: sourceOf(stream(entries)),
    });
    return { result, events };
  } finally {
    ledger.close();
  }
}

function inLedger<T>(read: (ledger: Ledger) => T): T {
  const ledger = Ledger.open(dir);
  try {
    return read(ledger);
  } finally {
    ledger.close();
  }
}

describe('classifyFailure', () => {
  it.each([
    [
      new RequestRejectedError('createAccount', undefined, 'undocumented field(s) foo', [
        { attr: 'foo', code: 'undocumented_field', detail: 'x' },
      ]),
      'data',
    ],
    [new RequestRejectedError('createNotes', 413, 'too large'), 'too_large'],
    [new RequestRejectedError('createNotes', 405, 'not allowed'), 'transient'],
    [new UnexpectedResponseError('createNotes', 201, 'not a list', 'results'), 'unexpected'],
    [new ServerError('createNotes', 500, 'boom', false), 'transient'],
    [new ServerError('createNotes', 500, 'boom', true), 'ambiguous'],
    [new NotFoundError('createNotes', 'no account'), 'not_found'],
    [new SupplierNotOngoingError('createAccount', 'paused', 'import_supplier_migration_not_ongoing', 400), 'fatal'],
    [new AuthenticationError('createNotes', 'refused', { status: 401 }), 'fatal'],
    [new RetryAfterTooLongError('createNotes', '86400', 86_400_000, 120_000), 'fatal'],
    [new HtmlAnswerError('createNotes', 200, 'https://x.example/', 'text/html', 'Sign in'), 'fatal'],
    [new NetworkError('createNotes', 'sent', 'reset'), 'ambiguous'],
    [new NetworkError('createNotes', 'not_sent', 'refused'), 'transient'],
    [new AbortedError('createNotes', undefined), 'stopped'],
    [new TypeError('a bug'), 'fatal'],
  ])('%s -> %s', (error, expected) => {
    expect(classifyFailure(error).class).toBe(expected);
  });

  it('keeps the refused fields of an invalid_request', () => {
    const failure = classifyFailure(
      new RequestRejectedError('createAccount', undefined, 'undocumented', [
        { attr: 'customers.0.nickname', code: 'undocumented_field', detail: 'x' },
      ]),
    );
    expect(failure.issues?.[0]?.attr).toBe('customers.0.nickname');
  });
});

describe('the engine and the failure classes', () => {
  it('an account the client refuses to send (undocumented field) is invalid, held back until its data changes, and not counted as the service failing', async () => {
    const service = new FakeService();
    const original = service.createAccount;
    service.createAccount = async (payload: { external_account_number?: string }) => {
      if (payload.external_account_number === 'UND-1')
        throw new RequestRejectedError('createAccount', undefined, 'undocumented field(s) nickname', [
          { attr: 'nickname', code: 'undocumented_field', detail: 'not a documented field' },
        ]);
      return original(payload);
    };
    const entries = [
      accountEntry({ number: 'OK-1', notes: ['n'] }),
      accountEntry({ number: 'UND-1', notes: ['m'] }, 3),
    ];
    const { result, events } = await push(service, entries);
    expect(result.counts.accounts).toEqual({ done: 1, invalid: 1 });
    expect(events.some((event) => event.type === 'retrying')).toBe(false);
    const account = inLedger((ledger) => ledger.findAccount('ACME', 'UND-1'));
    expect(account?.error).toMatchObject({ code: 'invalid_request', attr: 'nickname' });
    const calls = service.calls.length;
    const again = await push(service, entries);
    expect(service.calls.length, 'same data: nothing sent').toBe(calls);
    expect(again.result.counts.accounts).toEqual({ done: 1, invalid: 1 });
  });

  it('a create answered unexpectedly is reconciled through the v2 status, never sent twice', async () => {
    const service = new FakeService();
    const original = service.createAccount;
    service.createAccount = async (payload: { external_account_number?: string }) => {
      await original(payload);
      throw new UnexpectedResponseError('createAccount', 201, 'a body the spec does not give', 'detail');
    };
    const { result } = await push(service, [accountEntry({ number: 'U-1', notes: ['n'] })]);
    expect(result.counts.accounts).toEqual({ done: 1 });
    expect(service.accounts.get('U-1')?.creates).toBe(1);
  });

  it('records answered unexpectedly are resent by later runs (dedup; a payment instruction: the one-active rule), then given up as failed after 3 sends', async () => {
    const service = new FakeService();
    service.createNotes = async () => {
      service.calls.push('notes');
      throw new UnexpectedResponseError('createNotes', 201, 'results is not a list', 'results');
    };
    service.createPaymentInstruction = async () => {
      service.calls.push('payment');
      throw new UnexpectedResponseError('createPaymentInstruction', 201, 'no reference', 'reference');
    };
    const entries = [
      accountEntry({ number: 'N-1', notes: ['n'] }),
      accountEntry({ number: 'P-1', paymentInstructions: ['PI-1'] }, 3),
    ];
    const states = (number = 'N-1'): Record<string, { state: string; code: string | undefined; attempts: number }> =>
      inLedger((ledger) => {
        const account = ledger.findAccount('ACME', number);
        return Object.fromEntries(
          ledger.read
            .items(account?.id ?? 0)
            .map((item) => [item.kind, { state: item.state, code: item.error?.code, attempts: item.attempts }]),
        );
      });
    await push(service, entries);
    expect(states()['note']).toEqual({ state: 'sending', code: 'unexpected_answer', attempts: 1 });
    expect(states('P-1')['payment_instruction']).toEqual({
      state: 'sending',
      code: 'unexpected_answer',
      attempts: 1,
    });
    await push(service, entries);
    expect(states()['note']).toMatchObject({ state: 'sending', attempts: 2 });
    const third = await push(service, entries);
    expect(states()['note']).toMatchObject({ state: 'failed', code: 'unexpected_answer', attempts: 3 });
    expect(states('P-1')['payment_instruction']).toMatchObject({
      state: 'failed',
      code: 'unexpected_answer',
      attempts: 3,
    });
    expect(third.result.exitCode).toBe(5);
    const notesSent = service.calls.filter((call) => call === 'notes').length;
    await push(service, entries);
    expect(service.calls.filter((call) => call === 'notes').length, 'given up: not sent again').toBe(notesSent);
    expect(
      service.calls.filter((call) => call === 'payment'),
      'the payment instruction was sent three times, then given up',
    ).toHaveLength(3);
  });
});

describe('the failure classes', () => {
  it('are the same list in docs/architecture.md "Failure classes" as in the code', () => {
    const page = readFileSync(join(import.meta.dirname, '..', '..', 'docs', 'architecture.md'), 'utf8');
    const section = page.slice(page.indexOf('## Failure classes'));
    const documented = [...section.matchAll(/^\| ([a-z_]+) \|/gm)]
      .map((match) => match[1])
      .filter((c) => c !== 'class');
    expect(documented).toEqual([...FAILURE_CLASSES]);
  });
});
