import type { HistoricalStatement, Note, PaymentInstructionRequest, Transaction } from '../schema/index.js';
import { ITEM_KINDS, type AccountRow, type ItemKind, type ItemPatch, type OpenItem } from '../ledger/index.js';
import { call } from './account-steps.js';
import type { StepContext } from './context.js';
import { mayHaveApplied, StopRun } from './failure.js';
import { batchSize, intentIsDurable, nextBatch, roundsFor } from './item-batches.js';
import type { ItemDecision, SentBatch } from './item-decision.js';
import {
  afterFailure,
  afterInstruction,
  afterNotes,
  afterStatements,
  afterTransactions,
  backToPending,
  beforeInstruction,
  beforeTransactions,
} from './item-transitions.js';

// Post-import steps, write-ahead: items are marked `sending` (attempt + 1) durably before the
// request, and get their outcome after it. Reconciliation of a `sending` item relies on the
// service's own dedup (spec "Create notes", "Create transactions", historical statements by
// statement_id) and, for payment instructions, on the platform's one active instruction per
// account (instruction-outcome.ts). Where there is none (transactions when
// check_previously_added is off; payment instructions where a deployment allows several per
// account) an item whose outcome is unknown is never resent. Each sender here is intent ->
// request -> apply; what an answer means is decided in item-transitions.ts (pure).

/**
 * ok: nothing is left to send; blocked: the service could not take them now (next run);
 * partial: records of kinds outside --only are left (the account stays processed).
 */
export type StepResult = 'ok' | 'blocked' | 'partial';

/** What one request did to its batch: items to send again (with their current state), or blocked. */
interface Sent {
  blocked?: true | undefined;
  /** Too large (413): the records go again in requests half this one's size. */
  split?: true | undefined;
  retry: OpenItem[];
}

/**
 * Pushes an account's pending records, kind after kind (ITEM_KINDS order). The items are read
 * once; only this account's chain writes them while it runs (see Ledger.flush).
 */
export async function pushItems(ctx: StepContext, account: AccountRow): Promise<StepResult> {
  const all = ctx.ledger.itemsOf(account.id, ['pending', 'sending']);
  const steps = ctx.settings.steps;
  for (const kind of ITEM_KINDS) {
    if (steps !== undefined && !steps.has(kind)) continue;
    let remaining = all.filter((item) => item.kind === kind);
    let size = batchSize(kind, ctx.settings.transactionFlags);
    let rounds = roundsFor(remaining.length, size);
    while (remaining.length > 0) {
      if (ctx.stopping() || rounds-- <= 0) return 'blocked';
      const batch = nextBatch(remaining, size, ctx.settings.batchBytes);
      const sent = await SENDERS[kind](ctx, account, batch);
      if (sent.blocked) return 'blocked';
      // 413: the rest of this kind goes in requests half the refused one's size, down to one record each.
      if (sent.split) [size, rounds] = [Math.max(1, Math.floor(batch.length / 2)), rounds + 1];
      remaining = [...sent.retry, ...remaining.slice(batch.length)];
    }
  }
  return steps !== undefined && all.some((item) => !steps.has(item.kind)) ? 'partial' : 'ok';
}

type Sender = (ctx: StepContext, account: AccountRow, items: OpenItem[]) => Promise<Sent>;

const SENDERS: Record<ItemKind, Sender> = {
  note: sendNotes,
  transaction: sendTransactions,
  statement: sendStatements,
  payment_instruction: sendPaymentInstruction,
};

/** Records an outcome (queued; committed with the next group, before the next intent). */
function settle(
  ctx: StepContext,
  account: AccountRow,
  items: readonly OpenItem[],
  patch: ItemPatch,
  detail?: string,
): void {
  if (items.length === 0) return;
  ctx.ledger
    .updateItemsDeferred(
      items.map((item) => item.id),
      patch,
      { accountId: account.id, step: items[0]?.kind ?? 'item', ...(detail ? { detail } : {}) },
    )
    .catch((error: unknown) => ctx.writeFailed(error));
  const count = items.length;
  if (patch.state === 'done' || patch.state === 'failed' || patch.state === 'unknown') {
    ctx.sink.emit({
      type: 'items',
      accountId: account.id,
      kind: items[0]?.kind ?? 'note',
      done: patch.state === 'done' ? count : 0,
      failed: patch.state === 'failed' ? count : 0,
      unknown: patch.state === 'unknown' ? count : 0,
      ...(patch.state !== 'done' && patch.error ? { code: patch.error.code } : {}),
    });
  }
}

/** Records a decision's outcomes; a refusal of the run's configuration then stops the run. */
function apply(ctx: StepContext, account: AccountRow, decision: ItemDecision): Sent {
  for (const one of decision.settle) settle(ctx, account, one.items, one.patch, one.detail);
  if (decision.stop) throw new StopRun(decision.stop);
  return { retry: decision.retry, blocked: decision.blocked, split: decision.split };
}

/**
 * The write-ahead intent: committed before the request; fsynced too (power-loss safe) where
 * the service cannot deduplicate a resend (item-batches.ts intentIsDurable): see src/ledger/db.ts.
 * The record's row holds it (`sending`, one more attempt); the account's history gets the outcome
 * only, one event per record instead of two (events are a third of the ledger's writes per request).
 */
async function intent(ctx: StepContext, items: readonly OpenItem[]): Promise<OpenItem[]> {
  const kind = items[0]?.kind ?? 'note';
  await ctx.ledger.updateItems(
    items.map((item) => item.id),
    { state: 'sending', addAttempt: true },
    undefined,
    intentIsDurable(kind, ctx.settings.transactionFlags),
  );
  return items.map((item) => ({ ...item, state: 'sending' as const }));
}

/**
 * Sends one request for a batch (its intent committed). When the run stops on this request (fatal) and it certainly
 * did not land, the records go back as they were (item-transitions.ts backToPending).
 */
async function callFor<T>(
  ctx: StepContext,
  account: AccountRow,
  batch: Omit<SentBatch, 'supplier'>,
  request: () => Promise<T>,
): ReturnType<typeof call<T>> {
  try {
    return await call(ctx, request);
  } catch (error) {
    if (error instanceof StopRun && !mayHaveApplied(error.request))
      apply(ctx, account, { settle: backToPending(batch, error.failure), retry: [] });
    throw error;
  }
}

function parse<T>(item: OpenItem): T {
  return JSON.parse(item.body) as T;
}

function sentBatch(account: AccountRow, items: OpenItem[], before: OpenItem[]): SentBatch {
  return { items, before, supplier: account.importSupplier };
}

async function sendNotes(ctx: StepContext, account: AccountRow, before: OpenItem[]): Promise<Sent> {
  const batch = sentBatch(account, await intent(ctx, before), before);
  const request = {
    import_supplier: account.importSupplier,
    external_account_number: account.externalAccountNumber,
    notes: batch.items.map((item) => parse<Note>(item)),
  };
  const answer = await callFor(ctx, account, batch, () => ctx.client.createNotes(request));
  return apply(
    ctx,
    account,
    answer.ok ? afterNotes(batch, answer.value) : afterFailure(batch.items, answer.failure, true),
  );
}

async function sendTransactions(ctx: StepContext, account: AccountRow, before: OpenItem[]): Promise<Sent> {
  const flags = ctx.settings.transactionFlags;
  const held = beforeTransactions(before, flags);
  if (held !== undefined) return apply(ctx, account, held);
  const batch = sentBatch(account, await intent(ctx, before), before);
  const request = {
    import_supplier: account.importSupplier,
    external_account_number: account.externalAccountNumber,
    transactions: batch.items.map((item) => parse<Transaction>(item)),
  };
  const answer = await callFor(ctx, account, batch, () => ctx.client.createTransactions(request, flags));
  return apply(
    ctx,
    account,
    answer.ok
      ? afterTransactions(batch, answer.value, flags)
      : afterFailure(batch.items, answer.failure, flags.check_previously_added),
  );
}

async function sendStatements(ctx: StepContext, account: AccountRow, before: OpenItem[]): Promise<Sent> {
  const batch = sentBatch(account, await intent(ctx, before), before);
  const request = {
    import_supplier: account.importSupplier,
    external_account_number: account.externalAccountNumber,
    statements: batch.items.map((item) => parse<HistoricalStatement>(item)),
  };
  const answer = await callFor(ctx, account, batch, () => ctx.client.createHistoricalStatements(request));
  const decision = answer.ok ? afterStatements(batch, answer.value) : afterFailure(batch.items, answer.failure, true);
  if (decision.sendAlone === undefined) return apply(ctx, account, decision);
  const retry: OpenItem[] = [];
  for (const item of decision.sendAlone) {
    const single = await sendStatements(ctx, account, [item]);
    if (single.blocked) return single;
    retry.push(...single.retry);
  }
  return { retry };
}

/** Payment instructions the account has in the ledger besides this one that may be active on the platform. */
function otherInstructions(ctx: StepContext, account: AccountRow, item: OpenItem): number {
  return ctx.ledger
    .itemsOf(account.id, ['pending', 'sending', 'done', 'unknown'])
    .filter((other) => other.kind === 'payment_instruction' && other.id !== item.id).length;
}

async function sendPaymentInstruction(ctx: StepContext, account: AccountRow, batch: OpenItem[]): Promise<Sent> {
  const onePerAccount = !ctx.settings.multiplePaymentInstructions;
  const held = beforeInstruction(batch, onePerAccount);
  if (held !== undefined) return apply(ctx, account, held);
  const before = batch.slice(0, 1);
  const sent = sentBatch(account, await intent(ctx, before), before);
  const [item] = sent.items;
  if (item === undefined) return { retry: [] };
  const answer = await callFor(ctx, account, sent, () =>
    ctx.client.createPaymentInstruction(parse<PaymentInstructionRequest>(item)),
  );
  // A lost answer is resent (the one-active rule answers for a repeat), at most a few times a run (item-batches.ts).
  if (!answer.ok) return apply(ctx, account, afterFailure(sent.items, answer.failure, onePerAccount));
  const outcome = answer.value;
  const facts = {
    resend: before[0]?.state === 'sending',
    others: outcome.kind === 'already_active' ? otherInstructions(ctx, account, item) : 0,
    onePerAccount,
  };
  return apply(ctx, account, afterInstruction(sent, outcome, facts));
}
