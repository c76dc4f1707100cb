import type { ErrorInfo, SettledBy } from '../ledger/index.js';
import { EngineCode } from './engine-codes.js';

// What an answer to a payment instruction means, read against the ledger: pure, table-tested in
// test/engine/instruction-outcome.test.ts. The spec gives payment instructions no dedup and no read
// endpoint, but the platform keeps one active instruction per account and refuses another with
// 400 "Account already has an active instruction" (docs/service.md "Payment instructions"). So
// an instruction whose earlier request may have landed (answer lost, time-out, an answer that
// does not match the spec, a crash between intent and outcome) is sent again, and the answer
// settles it. Where a deployment allows several instructions per account (mapping file
// `multiple_payment_instructions`), nothing tells a repeat apart: such an instruction stays
// `unknown` for a person.

export interface InstructionFacts {
  /** The service's answer: 201, the one-active refusal, or another 400. */
  answer: 'created' | 'already_active' | 'refused';
  /** This request is a resend of one whose outcome was not known (the item was `sending`). */
  resend: boolean;
  /**
   * Other payment instructions of the account in the ledger that may be active on the platform (pending, sending, done,
   * unknown).
   */
  others: number;
  /** The platform's rule of one active instruction per account holds (default). */
  onePerAccount: boolean;
}

export type InstructionDecision =
  | { state: 'done'; settledBy: SettledBy; detail?: string }
  | { state: 'failed'; error?: Pick<ErrorInfo, 'code' | 'detail'> }
  | { state: 'unknown'; error: Pick<ErrorInfo, 'code' | 'detail'> };

export function decideInstruction(facts: InstructionFacts): InstructionDecision {
  if (facts.answer === 'created') return { state: 'done', settledBy: 'created' };
  // Any other refusal is handled as on a first attempt: "not to be retried in the same form" (spec).
  if (facts.answer === 'refused' || !facts.onePerAccount) return { state: 'failed' };
  if (facts.others === 0) {
    // The account's one active instruction can only be this one.
    return facts.resend
      ? {
          state: 'done',
          settledBy: 'reconciled',
          detail: 'resent after an unknown outcome: the earlier request created it',
        }
      : {
          state: 'done',
          settledBy: 'already_exists',
          detail: 'the account already has an active instruction, and the ledger holds no other for it',
        };
  }
  if (facts.resend) {
    return {
      state: 'unknown',
      error: {
        code: EngineCode.outcomeUnknown,
        detail:
          'resent after an unknown outcome and refused: the account has an active instruction, but the ledger ' +
          'holds another instruction for it, so which one is active is not known',
      },
    };
  }
  return {
    state: 'failed',
    error: {
      code: EngineCode.paymentInstructionAlreadyActive,
      detail: 'the account already has an active instruction (another instruction of this account in the ledger)',
    },
  };
}

/** How a done record of the other kinds was settled, from the service's answer. */
export function settledByResult(result: string): SettledBy {
  return result === 'NOTE_ALREADY_EXISTS' ||
    result === 'TRANSACTION_ALREADY_EXISTS' ||
    result === 'historical_statement_already_exists'
    ? 'already_exists'
    : 'created';
}
