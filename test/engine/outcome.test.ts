import { describe, expect, it } from 'vitest';
import { exitCodeOf } from '../../src/engine/outcome.js';

const none = { accounts: {}, items: {}, changedAfterImport: 0, recordsChangedAfterImport: {} };

describe('exitCodeOf', () => {
  it.each([
    ['everything done', 'finished', { ...none, accounts: { done: 3 }, items: { note: { done: 2 } } }, 0],
    ['an invalid account', 'finished', { ...none, accounts: { done: 3, invalid: 1 } }, 5],
    ['an errored account', 'finished', { ...none, accounts: { errored: 1 } }, 5],
    [
      'a payment instruction of unknown outcome',
      'finished',
      { ...none, accounts: { done: 1 }, items: { payment_instruction: { unknown: 1 } } },
      5,
    ],
    ['a refused record', 'finished', { ...none, accounts: { done: 1 }, items: { note: { failed: 1 } } }, 5],
    ['a record held invalid', 'finished', { ...none, accounts: { done: 1 }, items: { transaction: { held: 1 } } }, 5],
    // Where something waits and something needs a person, the person comes first.
    ['invalid and waiting', 'finished', { ...none, accounts: { invalid: 1, scheduled: 4 } }, 5],
    ['ERRORED and not sent yet', 'finished', { ...none, accounts: { errored: 1, staged: 4 } }, 5],
    ['scheduled, waiting', 'finished', { ...none, accounts: { scheduled: 1 } }, 1],
    // --no-wait included: the state directory is not finished (README "Exit codes"), as `status` says.
    ['still processing', 'finished', { ...none, accounts: { scheduled: 1 }, items: { note: { pending: 1 } } }, 1],
    ['a create left unconfirmed', 'finished', { ...none, accounts: { creating: 1 } }, 1],
    ['fatal', 'fatal', { ...none, accounts: { done: 1 } }, 3],
    ['interrupted', 'interrupted', { ...none, accounts: { done: 1 } }, 130],
    ['wait timeout', 'wait_timeout', { ...none, accounts: { done: 1 } }, 1],
    ['wait timeout with an invalid account', 'wait_timeout', { ...none, accounts: { scheduled: 1, invalid: 1 } }, 5],
    ['stopped at --max-errors, the failures retryable', 'max_errors', { ...none, accounts: { staged: 9 } }, 1],
    ['stopped at --max-errors, accounts ERRORED', 'max_errors', { ...none, accounts: { staged: 9, errored: 3 } }, 5],
  ] as const)('%s -> %i', (_name, reason, counts, code) => {
    expect(exitCodeOf(reason, counts)).toBe(code);
  });

  it.each([
    ['a canary: the rest still staged', { ...none, accounts: { done: 2, staged: 98 } }, 0],
    [
      'only notes: other records still pending',
      { ...none, accounts: { processed: 2 }, items: { note: { done: 2 }, transaction: { pending: 4 } } },
      0,
    ],
    ['a canary with an errored account', { ...none, accounts: { done: 1, errored: 1, staged: 98 } }, 5],
    [
      'a canary leaving a record of unknown outcome',
      { ...none, accounts: { done: 2, staged: 98 }, items: { payment_instruction: { unknown: 1 } } },
      5,
    ],
    ['a canary leaving a create unconfirmed', { ...none, accounts: { done: 1, creating: 1, staged: 98 } }, 1],
  ] as const)('filtered run (--limit, --accounts, --only), %s -> %i', (_name, counts, code) => {
    expect(exitCodeOf('finished', counts, true)).toBe(code);
  });

  it('counts rows outside any account as for a person: every account was sent, those rows were not', () => {
    expect(exitCodeOf('finished', { ...none, accounts: { done: 1 } }, false, 2)).toBe(5);
    expect(exitCodeOf('fatal', { ...none, accounts: { done: 1 } }, false, 2)).toBe(3);
  });
});
