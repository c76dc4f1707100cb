import { describe, expect, it } from 'vitest';
import { exitCodeOf } from '../../src/engine/outcome.js';

const none = { accounts: {}, items: {}, changedAfterImport: 0, recordsChangedAfterImport: {} };

describe('exitCodeOf', () => {
  it.each([
    ['everything done', 'finished', { ...none, accounts: { done: 3 }, items: { note: { done: 2 } } }, 0],
    ['an invalid account', 'finished', { ...none, accounts: { done: 3, invalid: 1 } }, 1],
    ['an errored account', 'finished', { ...none, accounts: { errored: 1 } }, 1],
    [
      'a payment instruction of unknown outcome',
      'finished',
      { ...none, accounts: { done: 1 }, items: { payment_instruction: { unknown: 1 } } },
      1,
    ],
    ['scheduled, waiting', 'finished', { ...none, accounts: { scheduled: 1 } }, 1],
    // --no-wait included: the state directory is not finished (README "Exit codes"), as `status` says.
    ['still processing', 'finished', { ...none, accounts: { scheduled: 1 }, items: { note: { pending: 1 } } }, 1],
    ['a create left unconfirmed', 'finished', { ...none, accounts: { creating: 1 } }, 1],
    ['fatal', 'fatal', { ...none, accounts: { done: 1 } }, 3],
    ['interrupted', 'interrupted', { ...none, accounts: { done: 1 } }, 130],
    ['wait timeout', 'wait_timeout', { ...none, accounts: { done: 1 } }, 1],
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
    ['a canary with an errored account', { ...none, accounts: { done: 1, errored: 1, staged: 98 } }, 1],
    [
      'a canary leaving a record of unknown outcome',
      { ...none, accounts: { done: 2, staged: 98 }, items: { payment_instruction: { unknown: 1 } } },
      1,
    ],
  ] as const)('filtered run (--limit, --accounts, --only), %s -> %i', (_name, counts, code) => {
    expect(exitCodeOf('finished', counts, true)).toBe(code);
  });
});
