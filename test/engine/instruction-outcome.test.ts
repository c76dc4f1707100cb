import { describe, expect, it } from 'vitest';
import { decideInstruction, settledByResult, type InstructionFacts } from '../../src/engine/instruction-outcome.js';

// The outcome table of a payment instruction's answer, read against the ledger (pure).

const facts = (over: Partial<InstructionFacts>): InstructionFacts => ({
  answer: 'created',
  resend: false,
  others: 0,
  onePerAccount: true,
  ...over,
});

describe('decideInstruction', () => {
  it.each<[string, Partial<InstructionFacts>, { state: string; settledBy?: string; code?: string }]>([
    ['201 on a first send', {}, { state: 'done', settledBy: 'created' }],
    [
      '201 on a resend: the earlier request did not create it',
      { resend: true },
      { state: 'done', settledBy: 'created' },
    ],
    [
      'already active on a resend, the only instruction: the earlier request created it',
      { answer: 'already_active', resend: true },
      { state: 'done', settledBy: 'reconciled' },
    ],
    [
      'already active on a first send, the only instruction (restored or lost ledger)',
      { answer: 'already_active' },
      { state: 'done', settledBy: 'already_exists' },
    ],
    [
      'already active on a resend, another instruction in the ledger: cannot tell which',
      { answer: 'already_active', resend: true, others: 1 },
      { state: 'unknown', code: 'outcome_unknown' },
    ],
    [
      'already active on a first send, another instruction in the ledger: refused',
      { answer: 'already_active', others: 1 },
      { state: 'failed', code: 'payment_instruction_already_active' },
    ],
    ['another 400 on a resend: as on a first send', { answer: 'refused', resend: true }, { state: 'failed' }],
    [
      'the rule lifted: already active is a refusal like any other',
      { answer: 'already_active', resend: true, onePerAccount: false },
      { state: 'failed' },
    ],
  ])('%s', (_, over, expected) => {
    const decision = decideInstruction(facts(over));
    expect(decision.state).toBe(expected.state);
    if (expected.settledBy) expect(decision).toMatchObject({ settledBy: expected.settledBy });
    if (expected.code) expect(decision).toMatchObject({ error: { code: expected.code } });
    if (!expected.code && decision.state === 'failed') expect(decision.error).toBeUndefined();
  });
});

describe('settledByResult', () => {
  it('reads the service dedup answers as already_exists, anything else as created', () => {
    expect(settledByResult('NOTE_ALREADY_EXISTS')).toBe('already_exists');
    expect(settledByResult('TRANSACTION_ALREADY_EXISTS')).toBe('already_exists');
    expect(settledByResult('historical_statement_already_exists')).toBe('already_exists');
    expect(settledByResult('NOTE_CREATION_SUCCESS')).toBe('created');
    expect(settledByResult('TRANSACTION_ADDED_TO_ACCOUNT')).toBe('created');
  });
});
