import type { ItemKind, OpenItem } from '../ledger/index.js';
import type { TransactionQueryFlags } from '../schema/index.js';

// How a kind's records are sent: how many per request, how many requests a run may spend on them, and whether the
// intent must be fsynced first. Shared by the sender (item-steps.ts) and the plan that counts its requests (plan.ts).

/**
 * Records per request. The spec sets no batch limit, so an account's notes, transactions and statements go in as few
 * requests as the count and the bytes allow (nextBatch: a proxy in front of the service refuses large bodies with
 * 413). A payment instruction request carries one instruction (spec "Create payment instruction"); without
 * check_previously_added a transaction goes alone, so every answer is about exactly one.
 */
const BATCH: Record<ItemKind, number> = { note: 1000, transaction: 1000, statement: 1000, payment_instruction: 1 };

export function batchSize(kind: ItemKind, flags: TransactionQueryFlags): number {
  return kind === 'transaction' && !flags.check_previously_added ? 1 : BATCH[kind];
}

/** What a request carries besides its records: the import supplier, the external account number, the list's key. */
const ENVELOPE_BYTES = 512;

/**
 * The next request's records: the first ones, at most `maxCount`, and no more than `maxBytes` of request body (push
 * --batch-bytes: a proxy in front of the service refuses larger bodies with 413, nginx's default at 1 MiB); always at
 * least one, however large (the service then says whether it takes it).
 */
export function nextBatch(items: readonly OpenItem[], maxCount: number, maxBytes: number): OpenItem[] {
  let bytes = ENVELOPE_BYTES;
  let count = 0;
  for (const item of items) {
    const size = Buffer.byteLength(item.body) + 1;
    if (count >= maxCount || (count > 0 && bytes + size > maxBytes)) break;
    bytes += size;
    count += 1;
  }
  return items.slice(0, Math.max(1, count));
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
