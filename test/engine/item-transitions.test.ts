import { describe, expect, it } from 'vitest';
import type { ItemKind, ItemState, OpenItem } from '../../src/ledger/index.js';
import type { ValidationIssue } from '../../src/schema/index.js';
import type { Failure, FailureClass } from '../../src/engine/failure.js';
import { batchSize, intentIsDurable, nextBatch, roundsFor } from '../../src/engine/item-batches.js';
import type { ItemDecision, SentBatch } from '../../src/engine/item-decision.js';
import {
  afterFailure,
  afterInstruction,
  afterNotes,
  afterRefusal,
  afterStatements,
  afterTransactions,
  backToPending,
  beforeInstruction,
  beforeTransactions,
} from '../../src/engine/item-transitions.js';

// The post-import records' transitions as tables (pure): the records of one request and the service's answer in,
// the outcomes the ledger records and the records sent again out.

function item(id: number, over: Partial<OpenItem> = {}): OpenItem {
  return {
    id,
    kind: 'note',
    naturalKey: `T-${id}`,
    body: '{}',
    state: 'sending',
    attempts: 1,
    originFile: 'notes.ndjson',
    originLine: id + 1,
    ...over,
  };
}

function batch(count: number, before: ItemState = 'pending', over: Partial<OpenItem> = {}): SentBatch {
  const items = Array.from({ length: count }, (_, index) => item(index + 1, over));
  return { items, before: items.map((one) => ({ ...one, state: before })), supplier: 'ACME' };
}

/** A decision in short: `id:state:code` per settled record, `id:state` per record sent again. */
function brief(decision: ItemDecision): Record<string, unknown> {
  return {
    settle: decision.settle.flatMap((one) =>
      one.items.map((it) => `${it.id}:${one.patch.state ?? '-'}:${one.patch.error?.code ?? '-'}`),
    ),
    retry: decision.retry.map((it) => `${it.id}:${it.state}`),
    ...(decision.blocked ? { blocked: true } : {}),
    ...(decision.stop ? { stop: decision.stop.code } : {}),
    ...(decision.sendAlone ? { sendAlone: decision.sendAlone.map((it) => it.id) } : {}),
  };
}

const failure = (cls: FailureClass, code = `${cls}_code`): Failure => ({ class: cls, code, detail: 'd' });
const issue = (attr: string, code = 'invalid_value'): ValidationIssue => ({ attr, code, detail: 'bad' });
const checked = { check_previously_added: true, force_add_to_current_statement: true };
const unchecked = { check_previously_added: false, force_add_to_current_statement: true };

describe('afterFailure', () => {
  const items = batch(2).items;
  it.each<[string, Failure, boolean, Record<string, unknown>]>([
    [
      'data (refused by the client): every record fails',
      failure('data', 'invalid_request'),
      true,
      { settle: ['1:failed:invalid_request', '2:failed:invalid_request'], retry: [] },
    ],
    [
      'ambiguous, the service deduplicates: still sending, sent again',
      failure('ambiguous'),
      true,
      { settle: ['1:-:ambiguous_code', '2:-:ambiguous_code'], retry: ['1:sending', '2:sending'] },
    ],
    [
      'ambiguous, nothing deduplicates: unknown, never resent',
      failure('ambiguous'),
      false,
      { settle: ['1:unknown:outcome_unknown', '2:unknown:outcome_unknown'], retry: [] },
    ],
    [
      'transient (answered, nothing applied): pending, the account waits',
      failure('transient'),
      true,
      { settle: ['1:pending:transient_code', '2:pending:transient_code'], retry: [], blocked: true },
    ],
    [
      '404 not imported: pending, the account waits',
      failure('not_found'),
      true,
      { settle: ['1:pending:not_found_code', '2:pending:not_found_code'], retry: [], blocked: true },
    ],
    [
      'unexpected, nothing deduplicates: unknown',
      failure('unexpected'),
      false,
      { settle: ['1:unknown:outcome_unknown', '2:unknown:outcome_unknown'], retry: [] },
    ],
  ])('%s', (_, given, resendSafe, expected) => {
    expect(brief(afterFailure(items, given, resendSafe))).toEqual(expected);
  });

  it('locates a data failure at each record and the first field at fault', () => {
    const given = { ...failure('data', 'invalid_request'), issues: [issue('notes.0.extra')] };
    const [first] = afterFailure(items, given, true).settle;
    expect(first?.patch.error).toMatchObject({ attr: 'notes.0.extra', file: 'notes.ndjson', line: 2 });
  });

  it('gives up a record after UNEXPECTED_ATTEMPTS unexpected answers, keeps the others sending', () => {
    const mixed = [item(1, { attempts: 2 }), item(2, { attempts: 1 })];
    expect(brief(afterFailure(mixed, failure('unexpected', 'unexpected_answer'), true))).toEqual({
      settle: ['1:failed:unexpected_answer', '2:-:unexpected_answer'],
      retry: [],
      blocked: true,
    });
  });
});

describe('backToPending', () => {
  it('puts back what was pending before the intent, leaves what an earlier request may have landed', () => {
    const sent = batch(2);
    const before = [{ ...sent.items[0]!, state: 'pending' as const }, sent.items[1]!];
    const settled = backToPending({ items: sent.items, before }, failure('fatal', 'unauthorized'));
    expect(settled.map((one) => [one.items.map((it) => it.id), one.patch.state, one.detail])).toEqual([
      [[1], 'pending', 'not sent: unauthorized'],
    ]);
  });

  it('records nothing when every record was sending already', () => {
    expect(backToPending(batch(2, 'sending'), failure('fatal'))).toEqual([]);
  });
});

describe('afterRefusal', () => {
  it.each<[string, ValidationIssue[], Record<string, unknown>]>([
    [
      'issues naming records: those fail, the others go back to pending and are sent again',
      [issue('notes.1.body'), issue('notes.1.other')],
      { settle: ['2:failed:invalid_value', '1:pending:-', '3:pending:-'], retry: ['1:pending', '3:pending'] },
    ],
    [
      'issues naming no record: all fail with the first',
      [issue('notes', 'too_many'), issue('x')],
      { settle: ['1:failed:too_many', '2:failed:too_many', '3:failed:too_many'], retry: [] },
    ],
    [
      'an index beyond the batch names no record',
      [issue('notes.7.body')],
      { settle: ['1:failed:invalid_value', '2:failed:invalid_value', '3:failed:invalid_value'], retry: [] },
    ],
    [
      "the run's configuration (unknown supplier): back to pending, the run stops",
      [issue('import_supplier', 'invalid_import_supplier'), issue('notes.0.body')],
      {
        settle: [
          '1:pending:configuration_refused',
          '2:pending:configuration_refused',
          '3:pending:configuration_refused',
        ],
        retry: [],
        stop: 'configuration_refused',
      },
    ],
  ])('%s', (_, errors, expected) => {
    expect(brief(afterRefusal(batch(3), 'notes', errors))).toEqual(expected);
  });

  it('locates a named issue at its record and keeps the path below the index', () => {
    const [first] = afterRefusal(batch(2), 'notes', [issue('notes.1.body')]).settle;
    expect(first?.patch.error).toMatchObject({ attr: 'body', file: 'notes.ndjson', line: 3 });
  });
});

describe('afterNotes', () => {
  it('settles each note by its result, in order; a note without a result is sent again', () => {
    const results = [
      { body: null, created_at: 'x', status: 'NOTE_CREATION_SUCCESS' as const },
      { body: null, created_at: 'x', status: 'NOTE_ALREADY_EXISTS' as const },
    ];
    const decided = afterNotes(batch(3), { kind: 'created', results });
    expect(brief(decided)).toEqual({ settle: ['1:done:-', '2:done:-'], retry: ['3:sending'] });
    expect(decided.settle.map((one) => one.patch.settledBy)).toEqual(['created', 'already_exists']);
  });

  it('reads a 400 as a refusal of the notes it names', () => {
    expect(brief(afterNotes(batch(1), { kind: 'invalid', errors: [issue('notes.0.body')] }))).toEqual({
      settle: ['1:failed:invalid_value'],
      retry: [],
    });
  });
});

describe('transactions', () => {
  const tx = (count: number): SentBatch => batch(count, 'pending', { kind: 'transaction' });
  const result = (id: string, status: string) => ({ status, transaction_data: { transaction_id: id } });

  it.each<[string, ItemState, typeof checked, boolean]>([
    ['a first send', 'pending', unchecked, false],
    ['a resend with check_previously_added', 'sending', checked, false],
    ['a resend without check_previously_added: unknown, never resent', 'sending', unchecked, true],
  ])('before %s', (_, state, flags, held) => {
    const decided = beforeTransactions([item(1, { kind: 'transaction', state })], flags);
    expect(decided === undefined ? undefined : brief(decided)).toEqual(
      held ? { settle: ['1:unknown:outcome_unknown'], retry: [] } : undefined,
    );
  });

  it.each<[string, ReturnType<typeof result>[], typeof checked, Record<string, unknown>]>([
    [
      'results matched by transaction_id; one not reported is sent again',
      [result('T-2', 'TRANSACTION_ALREADY_EXISTS'), result('T-1', 'TRANSACTION_ADDED_TO_ACCOUNT')],
      checked,
      { settle: ['1:done:-', '2:done:-'], retry: ['3:sending'] },
    ],
    [
      'a result of TRANSACTION_IMPORT_ERROR fails that one',
      [result('T-1', 'TRANSACTION_IMPORT_ERROR'), result('T-2', 'X'), result('T-3', 'X')],
      checked,
      { settle: ['1:failed:transaction_import_error', '2:done:-', '3:done:-'], retry: [] },
    ],
    [
      'without check_previously_added one not reported is unknown, never resent',
      [result('T-1', 'X'), result('T-2', 'X')],
      unchecked,
      { settle: ['1:done:-', '2:done:-', '3:unknown:outcome_unknown'], retry: [] },
    ],
  ])('after a 201: %s', (_, results, flags, expected) => {
    expect(brief(afterTransactions(tx(3), { kind: 'created', results }, flags))).toEqual(expected);
  });

  it('takes the only result of a single transaction whatever its id', () => {
    expect(brief(afterTransactions(tx(1), { kind: 'created', results: [result('other', 'X')] }, checked))).toEqual({
      settle: ['1:done:-'],
      retry: [],
    });
  });

  it.each<[string, string, Record<string, unknown>]>([
    [
      'the one named fails, the others are sent again',
      'T-2',
      { settle: ['2:failed:transaction_import_error'], retry: ['1:sending', '3:sending'] },
    ],
    [
      'none named: the first fails',
      'nope',
      { settle: ['1:failed:transaction_import_error'], retry: ['2:sending', '3:sending'] },
    ],
  ])('after TRANSACTION_IMPORT_ERROR: %s', (_, id, expected) => {
    const outcome = { kind: 'import_error' as const, errorDetail: 'no', transactionData: { transaction_id: id } };
    expect(brief(afterTransactions(tx(3), outcome, checked))).toEqual(expected);
  });

  it("a refusal for the open statement period is recorded as such, in the service's words", () => {
    const errorDetail =
      'UnableToCreateTransaction - T-1 dated 2026-10-03 is not within the statement A-1 2026-11-01 - 2026-11-27 ' +
      '(OPEN) period';
    const decided = afterTransactions(
      tx(2),
      { kind: 'import_error', errorDetail, transactionData: { transaction_id: 'T-1' } },
      checked,
    );
    expect(brief(decided)).toEqual({ settle: ['1:failed:transaction_outside_open_period'], retry: ['2:sending'] });
    expect(decided.settle[0]?.patch.error?.detail).toBe(errorDetail);
  });

  it('a transaction added with another date than the one sent is done, its move recorded with it', () => {
    const sent = tx(2).items.map((one) => ({ ...one, body: JSON.stringify({ transaction_date: '2026-10-03' }) }));
    const results = [
      {
        status: 'TRANSACTION_ADDED_TO_ACCOUNT',
        transaction_data: { transaction_id: 'T-1', transaction_date: '2026-11-01', description: 'Moved.' },
      },
      {
        status: 'TRANSACTION_ADDED_TO_ACCOUNT',
        transaction_data: { transaction_id: 'T-2', transaction_date: '2026-10-03' },
      },
    ];
    const decided = afterTransactions(
      { items: sent, before: sent, supplier: 'ACME' },
      { kind: 'created', results },
      checked,
    );
    expect(brief(decided)).toEqual({ settle: ['1:done:transaction_moved_into_open_period', '2:done:-'], retry: [] });
    expect(decided.settle[0]?.patch.error?.detail).toBe(
      'moved from 2026-10-03 to 2026-11-01 by the service (force_add_to_current_statement): Moved.',
    );
  });
});

describe('afterStatements', () => {
  it.each<[string, number, Parameters<typeof afterStatements>[1], Record<string, unknown>]>([
    ['201: all done', 2, { kind: 'created', statements: [] }, { settle: ['1:done:-', '2:done:-'], retry: [] }],
    ['already exists, alone: done', 1, { kind: 'already_exists', detail: 'x' }, { settle: ['1:done:-'], retry: [] }],
    [
      'already exists in a batch: each is sent alone',
      2,
      { kind: 'already_exists', detail: 'x' },
      { settle: [], retry: [], sendAlone: [1, 2] },
    ],
  ])('%s', (_, count, outcome, expected) => {
    expect(brief(afterStatements(batch(count, 'pending', { kind: 'statement' }), outcome))).toEqual(expected);
  });
});

describe('payment instructions', () => {
  const pi = (before: ItemState): SentBatch => batch(1, before, { kind: 'payment_instruction' });
  const facts = { resend: false, others: 0, onePerAccount: true };

  it.each<[string, boolean, ItemState, boolean]>([
    ['one per account, a leftover: resent (the one-active rule answers)', true, 'sending', false],
    ['several allowed, a first send', false, 'pending', false],
    ['several allowed, a leftover: unknown, never resent', false, 'sending', true],
  ])('before: %s', (_, onePerAccount, state, held) => {
    const decided = beforeInstruction([item(1, { kind: 'payment_instruction', state })], onePerAccount);
    expect(decided === undefined ? undefined : brief(decided)).toEqual(
      held ? { settle: ['1:unknown:outcome_unknown'], retry: [] } : undefined,
    );
  });

  it.each<[string, Parameters<typeof afterInstruction>[1], Partial<typeof facts>, Record<string, unknown>]>([
    ['201', { kind: 'created', platformAccountNumber: 'P-1', reference: 'r' }, {}, { settle: ['1:done:-'], retry: [] }],
    [
      'already active on a resend',
      { kind: 'already_active', detail: 'x' },
      { resend: true },
      { settle: ['1:done:-'], retry: [] },
    ],
    [
      'already active with another in the ledger',
      { kind: 'already_active', detail: 'x' },
      { others: 1 },
      { settle: ['1:failed:payment_instruction_already_active'], retry: [] },
    ],
    [
      'already active on a resend with another in the ledger',
      { kind: 'already_active', detail: 'x' },
      { resend: true, others: 1 },
      { settle: ['1:unknown:outcome_unknown'], retry: [] },
    ],
    [
      'refused by the vendor',
      { kind: 'refused', detail: 'x', errors: [issue('bank_account', 'vendor_failed')] },
      {},
      { settle: ['1:failed:vendor_failed'], retry: [] },
    ],
    [
      'refused without issues',
      { kind: 'refused', detail: 'x', errors: [] },
      {},
      { settle: ['1:failed:payment_instruction_refused'], retry: [] },
    ],
    [
      "refused for the run's configuration: back to pending, the run stops",
      { kind: 'refused', detail: 'x', errors: [issue('import_supplier', 'invalid_import_supplier')] },
      {},
      { settle: ['1:pending:configuration_refused'], retry: [], stop: 'configuration_refused' },
    ],
  ])('after: %s', (_, outcome, over, expected) => {
    expect(brief(afterInstruction(pi('pending'), outcome, { ...facts, ...over }))).toEqual(expected);
  });

  it('records how a done instruction was settled and why', () => {
    const [one] = afterInstruction(
      pi('sending'),
      { kind: 'already_active', detail: 'x' },
      { ...facts, resend: true },
    ).settle;
    expect(one?.patch).toMatchObject({ state: 'done', result: 'x', settledBy: 'reconciled' });
    expect(one?.detail).toMatch(/earlier request created it/);
  });
});

describe('batches', () => {
  it.each<[ItemKind, typeof checked, number, boolean]>([
    ['note', unchecked, 1000, false],
    ['transaction', checked, 1000, false],
    ['transaction', unchecked, 1, true],
    ['statement', checked, 1000, false],
    ['payment_instruction', checked, 1, true],
  ])('%s (check_previously_added %o): %i a request, durable intent %s', (kind, flags, size, durable) => {
    expect(batchSize(kind, flags)).toBe(size);
    expect(intentIsDurable(kind, flags)).toBe(durable);
  });

  it('allows one request per batch, one per record resent and a few spare', () => {
    expect(roundsFor(5, 2)).toBe(3 + 5 + 3);
  });
});

describe('a request too large for the service (413)', () => {
  it('several records go back to be sent in smaller requests; one alone is its failure, with the service words', () => {
    const split = afterFailure(batch(4).items, failure('too_large', 'request_too_large'), true);
    expect(brief(split)).toEqual({
      settle: [
        '1:pending:request_too_large',
        '2:pending:request_too_large',
        '3:pending:request_too_large',
        '4:pending:request_too_large',
      ],
      retry: ['1:pending', '2:pending', '3:pending', '4:pending'],
    });
    expect(split.split).toBe(true);
    const alone = afterFailure(batch(1).items, failure('too_large', 'request_too_large'), true);
    expect(brief(alone)).toEqual({ settle: ['1:failed:request_too_large'], retry: [] });
    expect(alone.split).toBeUndefined();
    expect(alone.settle[0]?.patch.error).toMatchObject({ file: 'notes.ndjson', line: 2 });
    expect(alone.settle[0]?.patch.error?.detail).toMatch(/^d \(this record alone is larger than the service takes/);
  });

  it('requests are bounded by bytes as well as by count, and carry at least one record', () => {
    const records = Array.from({ length: 10 }, (_, index) => item(index + 1, { body: 'x'.repeat(999) }));
    expect(nextBatch(records, 1000, 512 + 5 * 1000)).toHaveLength(5);
    expect(nextBatch(records, 3, 1024 * 1024)).toHaveLength(3);
    expect(nextBatch(records, 1000, 10)).toHaveLength(1);
  });
});
