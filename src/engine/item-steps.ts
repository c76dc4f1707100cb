import type {
  HistoricalStatement,
  Note,
  PaymentInstructionRequest,
  Transaction,
  ValidationIssue,
} from '../schema/index.js';
import {
  ITEM_KINDS,
  type AccountRow,
  type ErrorInfo,
  type ItemKind,
  type ItemPatch,
  type OpenItem,
} from '../ledger/index.js';
import { call } from './account-steps.js';
import type { StepContext } from './context.js';
import {
  configurationIssue,
  configurationRefusal,
  errorInfoOf,
  mayHaveApplied,
  StopRun,
  UNEXPECTED_ATTEMPTS,
  type Failure,
} from './failure.js';
import { decideInstruction, settledByResult } from './instruction-outcome.js';

// Post-import steps, write-ahead: items are marked `sending` (attempt + 1) durably before the
// request, and get their outcome after it. Reconciliation of a `sending` item relies on the
// service's own dedup (spec "Create notes", "Create transactions", historical statements by
// statement_id) and, for payment instructions, on the platform's one active instruction per
// account (instruction-outcome.ts). Where there is none (transactions when
// check_previously_added is off; payment instructions where a deployment allows several per
// account) an item whose outcome is unknown is never resent.

/**
 * ok: nothing is left to send; blocked: the service could not take them now (next run);
 * partial: records of kinds outside --only are left (the account stays processed).
 */
export type StepResult = 'ok' | 'blocked' | 'partial';

/** What one request did to its batch: items to send again (with their current state), or blocked. */
interface Sent {
  blocked?: true;
  retry: OpenItem[];
}

/**
 * Records per request. The spec sets no batch limit, so an account's notes, transactions and
 * statements go in one request each (the fewest requests); the cap only keeps a body far below
 * the few megabytes a proxy in front of the service may refuse (413). A payment instruction
 * request carries one instruction (spec "Create payment instruction").
 */
const BATCH: Record<ItemKind, number> = { note: 1000, transaction: 1000, statement: 1000, payment_instruction: 1 };
/** Sends of items answered ambiguously, per account and run, before they wait for the next run. */
const EXTRA_ROUNDS = 3;

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
    const batchSize = kind === 'transaction' && !ctx.settings.transactionFlags.check_previously_added ? 1 : BATCH[kind];
    let rounds = Math.ceil(remaining.length / batchSize) + remaining.length + EXTRA_ROUNDS;
    while (remaining.length > 0) {
      if (ctx.stopping() || rounds-- <= 0) return 'blocked';
      const batch = remaining.slice(0, batchSize);
      const sent = await SENDERS[kind](ctx, account, batch);
      if (sent.blocked) return 'blocked';
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
): OpenItem[] {
  if (items.length === 0) return [];
  if (patch.state === 'done' && patch.settledBy === undefined)
    patch = { ...patch, settledBy: settledByResult(patch.result ?? '') };
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
  return items.map((item) => ({ ...item, state: patch.state ?? item.state }));
}

/**
 * The write-ahead intent: committed before the request; fsynced too (power-loss safe) where
 * the service cannot deduplicate a resend (payment instructions, transactions without
 * check_previously_added): see src/ledger/db.ts. The record's row holds it (`sending`, one more
 * attempt); the account's history gets the outcome only, one event per record instead of two
 * (events are a third of the ledger's writes per request).
 */
async function intent(ctx: StepContext, items: readonly OpenItem[]): Promise<OpenItem[]> {
  const kind = items[0]?.kind ?? 'note';
  const durable =
    kind === 'payment_instruction' || (kind === 'transaction' && !ctx.settings.transactionFlags.check_previously_added);
  await ctx.ledger.updateItems(
    items.map((item) => item.id),
    { state: 'sending', addAttempt: true },
    undefined,
    durable,
  );
  return items.map((item) => ({ ...item, state: 'sending' as const }));
}

/**
 * Sends one request for `items` (their intent committed: `sending`); `before`: their states before that intent. When
 * the run stops on this request (fatal) and it certainly did not land, items that were pending go back to pending
 * instead of being left "sent, no answer"; items already `sending` from an earlier request keep that state (that
 * request may have landed).
 */
async function callFor<T>(
  ctx: StepContext,
  account: AccountRow,
  items: readonly OpenItem[],
  before: readonly OpenItem[],
  request: () => Promise<T>,
): ReturnType<typeof call<T>> {
  try {
    return await call(ctx, request);
  } catch (error) {
    if (error instanceof StopRun && !mayHaveApplied(error.request))
      backToPending(ctx, account, items, before, error.failure);
    throw error;
  }
}

function backToPending(
  ctx: StepContext,
  account: AccountRow,
  items: readonly OpenItem[],
  before: readonly OpenItem[],
  failure: Failure,
): void {
  const wasPending = new Set(before.filter((item) => item.state === 'pending').map((item) => item.id));
  settle(
    ctx,
    account,
    items.filter((item) => wasPending.has(item.id)),
    { state: 'pending', error: errorInfoOf(failure) },
    `not sent: ${failure.code}`,
  );
}

/**
 * A 400 whose issues concern the run's configuration (failure.ts configurationIssue), not these records: they go
 * back as they were and the run stops.
 */
function stopIfConfiguration(
  ctx: StepContext,
  account: AccountRow,
  items: readonly OpenItem[],
  before: readonly OpenItem[],
  errors: readonly ValidationIssue[],
): void {
  const issue = configurationIssue(errors);
  if (issue === undefined) return;
  const failure = configurationRefusal(issue, account.importSupplier);
  backToPending(ctx, account, items, before, failure);
  throw new StopRun(failure);
}

/** A request that failed without a definite answer: what happens to its items. */
function unsettled(
  ctx: StepContext,
  account: AccountRow,
  items: readonly OpenItem[],
  failure: Failure,
  resendSafe: boolean,
): Sent {
  const error = errorInfoOf(failure);
  if (failure.class === 'data') {
    // Refused by the client before sending (an undocumented field): the export must change.
    for (const item of items)
      settle(ctx, account, [item], {
        state: 'failed',
        error: {
          ...error,
          attr: failure.issues?.[0]?.attr,
          file: item.originFile ?? undefined,
          line: item.originLine ?? undefined,
        },
      });
    return { retry: [] };
  }
  if (failure.class === 'unexpected') return unexpected(ctx, account, items, failure, resendSafe);
  if (failure.class === 'ambiguous' && !resendSafe) {
    settle(ctx, account, items, {
      state: 'unknown',
      error: {
        code: 'outcome_unknown',
        detail: `sent, no answer (${failure.code}); not resent: the service cannot deduplicate it`,
      },
    });
    return { retry: [] };
  }
  // Ambiguous: still `sending`, and the resend is answered by the service's dedup.
  if (failure.class === 'ambiguous') return { retry: settle(ctx, account, items, { error }) };
  // The service answered (5xx, 429 after retries, 404 not imported): nothing was applied.
  settle(ctx, account, items, { state: 'pending', error });
  return { blocked: true, retry: [] };
}

/**
 * An answer that does not match the spec: the request may have been applied. Where the service
 * deduplicates, the items stay `sending` and the next run resends them (its dedup answers for
 * those that landed), at most UNEXPECTED_ATTEMPTS sends in all; then, or where nothing dedups
 * (payment instructions), they are recorded and never resent.
 */
function unexpected(
  ctx: StepContext,
  account: AccountRow,
  items: readonly OpenItem[],
  failure: Failure,
  resendSafe: boolean,
): Sent {
  if (!resendSafe) {
    settle(ctx, account, items, {
      state: 'unknown',
      error: {
        code: 'outcome_unknown',
        detail: `the answer did not match the spec (${failure.detail}); not resent: the service cannot deduplicate it`,
      },
    });
    return { retry: [] };
  }
  const spent = items.filter((item) => item.attempts + 1 >= UNEXPECTED_ATTEMPTS);
  settle(ctx, account, spent, {
    state: 'failed',
    error: {
      code: failure.code,
      detail:
        `${UNEXPECTED_ATTEMPTS} answers that do not match the spec; given up (check the service, then ` +
        `change the record to send it again): ${failure.detail}`,
    },
  });
  settle(
    ctx,
    account,
    items.filter((item) => !spent.includes(item)),
    { error: errorInfoOf(failure) },
  );
  return { blocked: true, retry: [] };
}

function parse<T>(item: OpenItem): T {
  return JSON.parse(item.body) as T;
}

/** Splits a 400's issues per item by the index in `attr` (`notes.2.body`); items named get the issue. */
function issuesByIndex(field: string, errors: ValidationIssue[], items: readonly OpenItem[]): Map<number, ErrorInfo> {
  const byIndex = new Map<number, ErrorInfo>();
  for (const error of errors) {
    const match = new RegExp(`^${field}\\.(\\d+)(?:\\.(.*))?$`).exec(error.attr);
    const index = match ? Number(match[1]) : -1;
    const item = items[index];
    if (item === undefined || byIndex.has(index)) continue;
    byIndex.set(index, {
      code: error.code,
      detail: error.detail,
      attr: match?.[2],
      file: item.originFile ?? undefined,
      line: item.originLine ?? undefined,
    });
  }
  return byIndex;
}

/**
 * A 400 refused the whole request: items it names fail (data class); the others go back to pending and are sent again.
 */
function refused(
  ctx: StepContext,
  account: AccountRow,
  items: readonly OpenItem[],
  field: string,
  errors: ValidationIssue[],
): Sent {
  const byIndex = issuesByIndex(field, errors, items);
  if (byIndex.size === 0) {
    const first = errors[0];
    const error: ErrorInfo = { code: first?.code ?? 'invalid', detail: first?.detail ?? 'refused by the service' };
    for (const item of items)
      settle(ctx, account, [item], {
        state: 'failed',
        error: { ...error, file: item.originFile ?? undefined, line: item.originLine ?? undefined },
      });
    return { retry: [] };
  }
  for (const [index, error] of byIndex) {
    const item = items[index];
    if (item) settle(ctx, account, [item], { state: 'failed', error });
  }
  return {
    retry: settle(
      ctx,
      account,
      items.filter((_, index) => !byIndex.has(index)),
      { state: 'pending' },
    ),
  };
}

async function sendNotes(ctx: StepContext, account: AccountRow, batch: OpenItem[]): Promise<Sent> {
  const items = await intent(ctx, batch);
  const request = {
    import_supplier: account.importSupplier,
    external_account_number: account.externalAccountNumber,
    notes: items.map((item) => parse<Note>(item)),
  };
  const answer = await callFor(ctx, account, items, batch, () => ctx.client.createNotes(request));
  if (!answer.ok) return unsettled(ctx, account, items, answer.failure, true);
  if (answer.value.kind === 'invalid') {
    stopIfConfiguration(ctx, account, items, batch, answer.value.errors);
    return refused(ctx, account, items, 'notes', answer.value.errors);
  }
  const results = answer.value.results;
  const retry: OpenItem[] = [];
  for (const [index, item] of items.entries()) {
    // One result per submitted note, in order (spec); NOTE_ALREADY_EXISTS is the dedup answer of a resend.
    const status = results[index]?.status;
    if (status === undefined) retry.push(item);
    else settle(ctx, account, [item], { state: 'done', result: status, error: null });
  }
  return { retry };
}

async function sendTransactions(ctx: StepContext, account: AccountRow, batch: OpenItem[]): Promise<Sent> {
  const flags = ctx.settings.transactionFlags;
  if (!flags.check_previously_added && batch.some((item) => item.state === 'sending')) {
    // Without the service's dedup a transaction whose request may have landed is never resent
    // (batches are of one transaction then, so every answer is about exactly one).
    settle(ctx, account, batch, {
      state: 'unknown',
      error: {
        code: 'outcome_unknown',
        detail: 'sent before without an answer; check_previously_added is off, so it is not resent',
      },
    });
    return { retry: [] };
  }
  const items = await intent(ctx, batch);
  const request = {
    import_supplier: account.importSupplier,
    external_account_number: account.externalAccountNumber,
    transactions: items.map((item) => parse<Transaction>(item)),
  };
  const answer = await callFor(ctx, account, items, batch, () => ctx.client.createTransactions(request, flags));
  if (!answer.ok) return unsettled(ctx, account, items, answer.failure, flags.check_previously_added);
  const outcome = answer.value;
  if (outcome.kind === 'invalid') {
    stopIfConfiguration(ctx, account, items, batch, outcome.errors);
    return refused(ctx, account, items, 'transactions', outcome.errors);
  }
  if (outcome.kind === 'import_error') {
    const failedId = outcome.transactionData['transaction_id'];
    const failing = items.filter((item) => item.naturalKey === failedId);
    const targets = failing.length > 0 ? failing : items.slice(0, 1);
    settle(ctx, account, targets, {
      state: 'failed',
      error: {
        code: 'transaction_import_error',
        detail: outcome.errorDetail,
        file: targets[0]?.originFile ?? undefined,
        line: targets[0]?.originLine ?? undefined,
      },
    });
    // Whether the others of the request were committed is not documented: they stay `sending`
    // and are sent again; check_previously_added answers TRANSACTION_ALREADY_EXISTS for those that were.
    return { retry: items.filter((item) => !targets.includes(item)) };
  }
  const byId = new Map(
    outcome.results.map((result) => [String(result.transaction_data['transaction_id']), result.status]),
  );
  const retry: OpenItem[] = [];
  for (const item of items) {
    const status = byId.get(item.naturalKey) ?? (items.length === 1 ? outcome.results[0]?.status : undefined);
    if (status === undefined) retry.push(item);
    // A result of the 201 can say the platform could not import that one (the real platform's status enum).
    else if (status === 'TRANSACTION_IMPORT_ERROR')
      settle(ctx, account, [item], {
        state: 'failed',
        result: status,
        error: {
          code: 'transaction_import_error',
          detail: 'the service answered TRANSACTION_IMPORT_ERROR for this transaction',
          file: item.originFile ?? undefined,
          line: item.originLine ?? undefined,
        },
      });
    else settle(ctx, account, [item], { state: 'done', result: status, error: null });
  }
  if (!flags.check_previously_added && retry.length > 0) {
    settle(ctx, account, retry, {
      state: 'unknown',
      error: {
        code: 'outcome_unknown',
        detail: 'the service did not report this transaction; check_previously_added is off, so it is not resent',
      },
    });
    return { retry: [] };
  }
  return { retry };
}

async function sendStatements(ctx: StepContext, account: AccountRow, batch: OpenItem[]): Promise<Sent> {
  const items = await intent(ctx, batch);
  const request = {
    import_supplier: account.importSupplier,
    external_account_number: account.externalAccountNumber,
    statements: items.map((item) => parse<HistoricalStatement>(item)),
  };
  const answer = await callFor(ctx, account, items, batch, () => ctx.client.createHistoricalStatements(request));
  if (!answer.ok) return unsettled(ctx, account, items, answer.failure, true);
  const outcome = answer.value;
  if (outcome.kind === 'invalid') {
    stopIfConfiguration(ctx, account, items, batch, outcome.errors);
    return refused(ctx, account, items, 'statements', outcome.errors);
  }
  if (outcome.kind === 'created') {
    settle(ctx, account, items, { state: 'done', result: 'created', error: null });
    return { retry: [] };
  }
  // historical_statement_already_exists rejects the whole request when any statement_id is on
  // the account already. Alone, a statement so refused is on the account (done); in a batch,
  // each is verified by sending it alone.
  if (items.length === 1) {
    settle(ctx, account, items, { state: 'done', result: 'historical_statement_already_exists', error: null });
    return { retry: [] };
  }
  const retry: OpenItem[] = [];
  for (const item of items) {
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
  const leftovers = batch.filter((item) => item.state === 'sending');
  if (leftovers.length > 0 && !onePerAccount) {
    // Several instructions per account allowed: a resend of one that may have been created could
    // set up a second at the vendor, and nothing can check it. Recorded `unknown` for an operator
    // (README "Rerun semantics").
    settle(ctx, account, leftovers, {
      state: 'unknown',
      error: {
        code: 'outcome_unknown',
        detail:
          'a previous request may have created it; with several instructions per account allowed nothing ' +
          'recognises a repeat, so it is not resent',
      },
    });
    return { retry: [] };
  }
  const resend = batch[0]?.state === 'sending';
  const [item] = await intent(ctx, batch.slice(0, 1));
  if (item === undefined) return { retry: [] };
  const answer = await callFor(ctx, account, [item], batch.slice(0, 1), () =>
    ctx.client.createPaymentInstruction(parse<PaymentInstructionRequest>(item)),
  );
  // A lost answer is resent (the one-active rule answers for a repeat), at most EXTRA_ROUNDS times a run.
  if (!answer.ok) return unsettled(ctx, account, [item], answer.failure, onePerAccount);
  const outcome = answer.value;
  if (outcome.kind === 'refused') stopIfConfiguration(ctx, account, [item], batch.slice(0, 1), outcome.errors);
  const decision = decideInstruction({
    answer: outcome.kind,
    resend,
    others: outcome.kind === 'already_active' ? otherInstructions(ctx, account, item) : 0,
    onePerAccount,
  });
  if (decision.state === 'done') {
    const result = outcome.kind === 'created' ? outcome.platformAccountNumber : outcome.detail;
    settle(
      ctx,
      account,
      [item],
      { state: 'done', result, settledBy: decision.settledBy, error: null },
      decision.detail,
    );
    return { retry: [] };
  }
  const located = { file: item.originFile ?? undefined, line: item.originLine ?? undefined };
  if (decision.state === 'unknown') {
    settle(ctx, account, [item], { state: 'unknown', error: { ...decision.error, ...located } });
    return { retry: [] };
  }
  // 400: invalid, or the vendor failed persistently: "not to be retried in the same form" (spec).
  const first = outcome.kind === 'refused' ? outcome.errors[0] : undefined;
  const error: ErrorInfo = {
    code: decision.error?.code ?? first?.code ?? 'payment_instruction_refused',
    detail: decision.error?.detail ?? first?.detail ?? (outcome.kind === 'created' ? '' : outcome.detail),
    attr: first?.attr,
    ...located,
  };
  settle(ctx, account, [item], { state: 'failed', error });
  return { retry: [] };
}
