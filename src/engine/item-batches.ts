import type { ItemKind } from '../ledger/index.js';
import type { TransactionQueryFlags } from '../schema/index.js';

// How a kind's records are sent: how many per request, how many requests a run may spend on them, and whether the
// intent must be fsynced first. Shared by the sender (item-steps.ts) and the plan that counts its requests (plan.ts).

/**
 * Records per request. The spec sets no batch limit, so an account's notes, transactions and statements go in one
 * request each (the fewest requests); the cap only keeps a body far below the few megabytes a proxy in front of the
 * service may refuse (413). A payment instruction request carries one instruction (spec "Create payment
 * instruction"); without check_previously_added a transaction goes alone, so every answer is about exactly one.
 */
const BATCH: Record<ItemKind, number> = { note: 1000, transaction: 1000, statement: 1000, payment_instruction: 1 };

export function batchSize(kind: ItemKind, flags: TransactionQueryFlags): number {
  return kind === 'transaction' && !flags.check_previously_added ? 1 : BATCH[kind];
}

/** Sends of records answered ambiguously, per account and run, before they wait for the next run. */
const EXTRA_ROUNDS = 3;

/** Requests a kind's records may take in one run: one per batch, one more per record resent, and a few spare. */
export function roundsFor(count: number, size: number): number {
  return Math.ceil(count / size) + count + EXTRA_ROUNDS;
}

/**
 * Whether an intent must be fsynced before its request (power-loss safe): where the service cannot deduplicate a
 * resend (payment instructions, transactions without check_previously_added).
 */
export function intentIsDurable(kind: ItemKind, flags: TransactionQueryFlags): boolean {
  return kind === 'payment_instruction' || (kind === 'transaction' && !flags.check_previously_added);
}
