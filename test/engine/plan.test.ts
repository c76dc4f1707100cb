import { describe, expect, it } from 'vitest';
import { ErrorBudget, errorLimitOf } from '../../src/engine/error-budget.js';
import { planAccount, PUSH_STEPS, type PlanOptions, type PushStep } from '../../src/engine/plan.js';
import { Selection } from '../../src/engine/selection.js';
import type { AccountState } from '../../src/ledger/index.js';

// The pure plan of a push (--dry-run, --limit, --accounts, --only) and the --max-errors budget.

const options = (over: Partial<PlanOptions> = {}): PlanOptions => ({
  retryErrored: false,
  wait: true,
  steps: new Set(PUSH_STEPS),
  transactionFlags: { check_previously_added: true, force_add_to_current_statement: true },
  ...over,
});
const plan = (state: AccountState, pending: Record<string, number> = {}, over: Partial<PlanOptions> = {}) =>
  planAccount({ state, externalAccountNumber: 'A-1' }, pending, options(over));
const only = (...steps: PushStep[]): Partial<PlanOptions> => ({ steps: new Set(steps) });

describe('planAccount', () => {
  it.each([
    ['staged', {}, {}, true, 'create_only', { create: 1, status_check: 1 }],
    [
      'staged',
      // The sender's batch sizes (item-batches.ts): 1,000 notes a request.
      { note: 1500, transaction: 3 },
      {},
      true,
      'create',
      { create: 1, status_check: 1, note: 2, transaction: 1 },
    ],
    ['staged', { note: 1 }, { wait: false }, true, 'create_only', { create: 1 }],
    ['staged', { note: 1 }, only('note'), false, 'not_selected_steps', {}],
    ['staged', { note: 1 }, { accounts: new Set(['B-2']) }, false, 'not_selected_accounts', {}],
    ['errored', {}, {}, false, 'errored', {}],
    ['errored', {}, { retryErrored: true }, true, 'retry_errored', { create: 1, status_check: 1 }],
    ['invalid', { note: 1 }, {}, false, 'invalid', {}],
    ['done', {}, {}, false, 'done', {}],
    ['creating', { statement: 1001 }, {}, true, 'reconcile', { status_check: 1, statement: 2 }],
    // --no-wait takes up accounts earlier runs left waiting: checked, their records pushed if imported.
    ['scheduled', { note: 1 }, { wait: false }, true, 'wait', { status_check: 1, note: 1 }],
    ['scheduled', { payment_instruction: 2 }, {}, true, 'wait', { status_check: 1, payment_instruction: 2 }],
    ['processed', { note: 2, transaction: 2 }, only('note'), true, 'post_import', { note: 1 }],
    ['processed', { transaction: 2 }, only('note'), false, 'not_selected_steps', {}],
    ['processed', {}, {}, true, 'finish', {}],
    [
      'processed',
      { transaction: 3 },
      { transactionFlags: { check_previously_added: false, force_add_to_current_statement: true } },
      true,
      'post_import',
      { transaction: 3 },
    ],
    ['unresolved', { note: 1 }, {}, true, 'resolve', { status_check: 1, note: 1 }],
  ] as const)('%s %j %j -> in plan %s, %s', (state, pending, over, inPlan, reason, requests) => {
    expect(plan(state, pending, over)).toMatchObject({ inPlan, reason, requests });
  });

  it('counts the records the run sends, only of the selected steps', () => {
    expect(plan('processed', { note: 2, transaction: 5 }, only('transaction')).records).toEqual({ transaction: 5 });
  });
});

describe('Selection', () => {
  it('polls only its parked accounts, and forgets those no longer parked', () => {
    const selection = new Selection(
      new Map([
        [1, { state: 'scheduled' as const, nextCheckAt: 100 }],
        [2, { state: 'staged' as const, nextCheckAt: 5 }],
        [3, { state: 'creating' as const, nextCheckAt: 50 }],
      ]),
    );
    expect(selection.due(100, 10)).toEqual([3, 1]);
    expect(selection.due(60, 10)).toEqual([3]);
    expect(selection.nextCheckAt()).toBe(50);
    selection.update({ id: 3, state: 'processed', nextCheckAt: 50 });
    selection.update({ id: 9, state: 'scheduled', nextCheckAt: 1 });
    expect(selection.has(9)).toBe(false);
    expect(selection.due(1000, 10)).toEqual([1]);
    expect(selection.countInState('scheduled')).toBe(1);
  });
});

describe('--max-errors', () => {
  it("N tolerates N failures; N% is a share of the run's work", () => {
    expect(errorLimitOf({ count: 3 }, 1000)).toBe(3);
    expect(errorLimitOf({ percent: 2 }, 450)).toBe(9);
    const budget = new ErrorBudget(2);
    budget.onEvent({ type: 'account', accountId: 1, externalAccountNumber: 'A', from: 'scheduled', to: 'errored' });
    budget.onFailure({ class: 'transient', code: 'server_error', detail: '' });
    budget.onFailure({ class: 'ambiguous', code: 'connection_reset', detail: '' });
    budget.onEvent({ type: 'account', accountId: 2, externalAccountNumber: 'B', from: 'scheduled', to: 'processed' });
    expect(budget.exceeded).toBe(false);
    budget.onEvent({ type: 'items', accountId: 1, kind: 'note', done: 3, failed: 1, unknown: 0 });
    expect(budget.exceeded).toBe(true);
    expect(budget.count).toBe(3);
  });
});
