import { describe, expect, it } from 'vitest';
import {
  leaseLead,
  STATE_FACTS,
  statesWhere,
  statesWithWork,
  workableStates,
} from '../../src/engine/account-states.js';
import { ACCOUNT_STATES } from '../../src/ledger/index.js';

// The account-state facts, one table (docs/architecture.md "The per-account state machine"): each list derived from
// it is written out here once, so a changed fact shows as a changed list.

describe('the account-state facts', () => {
  it('have one row for every ledger state', () => {
    expect(Object.keys(STATE_FACTS).sort()).toEqual([...ACCOUNT_STATES].sort());
  });

  it.each([
    ['waiting', ['creating', 'scheduled']],
    ['asksFirst', ['creating', 'unresolved']],
    ['createSent', ['creating', 'scheduled', 'processed', 'done']],
    ['imported', ['processed', 'done']],
    ['hasImportProcess', ['scheduled', 'processed', 'errored', 'done']],
    ['needsPerson', ['invalid', 'errored']],
    ['statusAsked', ['creating', 'scheduled', 'errored']],
  ] as const)('%s: %j', (fact, states) => {
    expect(statesWhere(fact)).toEqual(states);
  });

  it.each([
    [false, ['staged', 'creating', 'processed', 'unresolved']],
    [true, ['staged', 'creating', 'processed', 'errored', 'unresolved']],
  ])('workable (retry errored %s): %j', (retryErrored, states) => {
    expect(workableStates(retryErrored)).toEqual(states);
  });

  it.each([
    [false, ['staged', 'creating', 'scheduled', 'processed', 'unresolved']],
    [true, ['staged', 'creating', 'scheduled', 'processed', 'errored', 'unresolved']],
  ])('with work for a run (retry errored %s): %j', (retryErrored, states) => {
    expect(statesWithWork(retryErrored)).toEqual(states);
  });

  it.each([
    [1, 16],
    [4, 16],
    [8, 32],
  ])('a sharing runner at --concurrency %i leases up to %i workable accounts ahead', (concurrency, lead) => {
    expect(leaseLead(concurrency)).toBe(lead);
  });
});
