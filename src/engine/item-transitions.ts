import type {
  HistoricalStatementsOutcome,
  NotesOutcome,
  PaymentInstructionOutcome,
  TransactionsOutcome,
} from '../api/types.js';
import type { ErrorInfo, ItemPatch, OpenItem } from '../ledger/index.js';
import type { TransactionQueryFlags, ValidationIssue } from '../schema/index.js';
import { EngineCode } from './engine-codes.js';
import { configurationIssue, configurationRefusal, errorInfoOf, UNEXPECTED_ATTEMPTS, type Failure } from './failure.js';
import { decideInstruction, settledByResult, type InstructionFacts } from './instruction-outcome.js';
import {
  decision,
  done,
  located,
  unknown,
  withState,
  type ItemDecision,
  type SentBatch,
  type Settlement,
} from './item-decision.js';
import { importErrorCode, movedIntoOpenPeriod } from './open-period.js';

// The post-import records' transitions (docs/architecture.md "The per-account state machine"), as pure functions
// from (the records of one request, the service's answer) to the outcomes the ledger records. No I/O here:
// item-steps.ts commits the intent, sends the request and applies the decision; tested with tables in
// test/engine/item-transitions.test.ts.

/**
 * The run stops on this request and it certainly did not land: records that were pending go back to pending instead
 * of being left "sent, no answer"; records already `sending` from an earlier request keep that state (that request
 * may have landed).
 */
export function backToPending(batch: Omit<SentBatch, 'supplier'>, failure: Failure): Settlement[] {
  const wasPending = new Set(batch.before.filter((item) => item.state === 'pending').map((item) => item.id));
  const back = batch.items.filter((item) => wasPending.has(item.id));
  if (back.length === 0) return [];
  return [
    { items: back, patch: { state: 'pending', error: errorInfoOf(failure) }, detail: `not sent: ${failure.code}` },
  ];
}

/**
 * A request that failed without a definite answer (`resendSafe`: the service deduplicates a resend of these records).
 */
export function afterFailure(items: readonly OpenItem[], failure: Failure, resendSafe: boolean): ItemDecision {
  const error = errorInfoOf(failure);
  switch (failure.class) {
    case 'data':
      // Refused by the client before sending (an undocumented field): the export must change.
      return decision(
        items.map((item) => ({
          items: [item],
          patch: { state: 'failed', error: { ...error, attr: failure.issues?.[0]?.attr, ...located(item) } },
        })),
        [],
      );
    case 'unexpected':
      return afterUnexpected(items, failure, resendSafe);
    case 'too_large':
      return afterTooLarge(items, failure);
    case 'ambiguous':
      if (!resendSafe)
        return decision(
          [unknown([...items], `sent, no answer (${failure.code}); not resent: the service cannot deduplicate it`)],
          [],
        );
      // Still `sending`, and the resend is answered by the service's dedup.
      return decision([{ items: [...items], patch: { error } }], withState(items, undefined));
    default:
      // The service answered (5xx, 429 after retries, 404 not imported): nothing was applied.
      return decision([{ items: [...items], patch: { state: 'pending', error } }], [], { blocked: true });
  }
}

/**
 * 413, nothing applied: several records go again in smaller requests (split); one record alone that the service still
 * refuses is that record's failure, with the service's words, and the account's other records go on.
 */
function afterTooLarge(items: readonly OpenItem[], failure: Failure): ItemDecision {
  const error = errorInfoOf(failure);
  if (items.length > 1)
    return decision([{ items: [...items], patch: { state: 'pending', error } }], withState(items, 'pending'), {
      split: true,
    });
  const detail = `${error.detail} (this record alone is larger than the service takes: shorten it)`;
  return decision(
    items.map((item) => ({ items: [item], patch: { state: 'failed', error: { ...error, detail, ...located(item) } } })),
    [],
  );
}

/**
 * An answer that does not match the spec: the request may have been applied. Where the service deduplicates, the
 * records stay `sending` and the next run resends them (its dedup answers for those that landed), at most
 * UNEXPECTED_ATTEMPTS sends in all; then, or where nothing deduplicates (payment instructions), they are recorded and
 * never resent.
 */
function afterUnexpected(items: readonly OpenItem[], failure: Failure, resendSafe: boolean): ItemDecision {
  if (!resendSafe) {
    const detail =
      `the answer did not match the spec (${failure.detail}); ` + 'not resent: the service cannot deduplicate it';
    return decision([unknown([...items], detail)], []);
  }
  const spent = items.filter((item) => item.attempts + 1 >= UNEXPECTED_ATTEMPTS);
  const given = {
    code: failure.code,
    detail:
      `${UNEXPECTED_ATTEMPTS} answers that do not match the spec; given up (check the service, then ` +
      `change the record to send it again): ${failure.detail}`,
  };
  return decision(
    [
      { items: spent, patch: { state: 'failed', error: given } },
      { items: items.filter((item) => !spent.includes(item)), patch: { error: errorInfoOf(failure) } },
    ],
    [],
    { blocked: true },
  );
}

/** Splits a 400's issues per record by the index in `attr` (`notes.2.body`); records named get the issue. */
function issuesByIndex(field: string, errors: ValidationIssue[], items: readonly OpenItem[]): Map<number, ErrorInfo> {
  const byIndex = new Map<number, ErrorInfo>();
  for (const error of errors) {
    const match = new RegExp(`^${field}\\.(\\d+)(?:\\.(.*))?$`).exec(error.attr);
    const index = match ? Number(match[1]) : -1;
    const item = items[index];
    if (item === undefined || byIndex.has(index)) continue;
    byIndex.set(index, { code: error.code, detail: error.detail, attr: match?.[2], ...located(item) });
  }
  return byIndex;
}

/** A refusal of the run's configuration: the records go back as they were, and the run stops. */
function configurationStop(batch: SentBatch, errors: readonly ValidationIssue[]): ItemDecision | undefined {
  const issue = configurationIssue(errors);
  if (issue === undefined) return undefined;
  const failure = configurationRefusal(issue, batch.supplier);
  return decision(backToPending(batch, failure), [], { stop: failure });
}

/**
 * A 400 refused the whole request. Issues that concern the run's configuration (failure.ts configurationIssue), not
 * these records: they go back as they were and the run stops. Otherwise the records it names fail (data class) and
 * the others go back to pending and are sent again; when it names none, all fail with its first issue.
 */
export function afterRefusal(batch: SentBatch, field: string, errors: ValidationIssue[]): ItemDecision {
  const stop = configurationStop(batch, errors);
  if (stop !== undefined) return stop;
  const { items } = batch;
  const byIndex = issuesByIndex(field, errors, items);
  if (byIndex.size === 0) {
    const first = errors[0];
    const error: ErrorInfo = { code: first?.code ?? 'invalid', detail: first?.detail ?? 'refused by the service' };
    const failed = items.map((item) => ({
      items: [item],
      patch: { state: 'failed' as const, error: { ...error, ...located(item) } },
    }));
    return decision(failed, []);
  }
  const failed = [...byIndex].map(([index, error]) => ({
    items: items.slice(index, index + 1),
    patch: { state: 'failed' as const, error },
  }));
  const others = items.filter((_, index) => !byIndex.has(index));
  return decision([...failed, { items: others, patch: { state: 'pending' } }], withState(others, 'pending'));
}

/**
 * One result per submitted note, in order (spec "Create notes"); NOTE_ALREADY_EXISTS is the dedup answer of a resend.
 */
export function afterNotes(batch: SentBatch, outcome: NotesOutcome): ItemDecision {
  if (outcome.kind === 'invalid') return afterRefusal(batch, 'notes', outcome.errors);
  const settle: Settlement[] = [];
  const retry: OpenItem[] = [];
  for (const [index, item] of batch.items.entries()) {
    const status = outcome.results[index]?.status;
    if (status === undefined) retry.push(item);
    else settle.push(done([item], status));
  }
  return decision(settle, retry);
}

/**
 * Without the service's dedup (check_previously_added off) a transaction whose request may have landed (`sending`)
 * is never resent: recorded `unknown` for a person. Undefined: the batch may be sent.
 */
export function beforeTransactions(batch: readonly OpenItem[], flags: TransactionQueryFlags): ItemDecision | undefined {
  if (flags.check_previously_added || !batch.some((item) => item.state === 'sending')) return undefined;
  const detail = 'sent before without an answer; check_previously_added is off, so it is not resent';
  return decision([unknown([...batch], detail)], []);
}

export function afterTransactions(
  batch: SentBatch,
  outcome: TransactionsOutcome,
  flags: TransactionQueryFlags,
): ItemDecision {
  if (outcome.kind === 'invalid') return afterRefusal(batch, 'transactions', outcome.errors);
  if (outcome.kind === 'import_error') return afterImportError(batch.items, outcome);
  const { items } = batch;
  const byId = new Map(outcome.results.map((result) => [String(result.transaction_data['transaction_id']), result]));
  const settle: Settlement[] = [];
  const retry: OpenItem[] = [];
  for (const item of items) {
    const result = byId.get(item.naturalKey) ?? (items.length === 1 ? outcome.results[0] : undefined);
    const status = result?.status;
    const moved = result === undefined ? undefined : movedIntoOpenPeriod(item, result.transaction_data);
    if (status === undefined) retry.push(item);
    // A result of the 201 can say the platform could not import that one (the real platform's status enum).
    else if (status === 'TRANSACTION_IMPORT_ERROR') settle.push(transactionImportError(item, status));
    // Added, with its date moved into the open statement period: done, the move kept with it.
    else if (moved !== undefined)
      settle.push({
        items: [item],
        patch: { state: 'done', result: status, settledBy: settledByResult(status), error: moved },
      });
    else settle.push(done([item], status));
  }
  if (flags.check_previously_added || retry.length === 0) return decision(settle, retry);
  const detail = 'the service did not report this transaction; check_previously_added is off, so it is not resent';
  return decision([...settle, unknown(retry, detail)], []);
}

function transactionImportError(item: OpenItem, status: string): Settlement {
  const detail = 'the service answered TRANSACTION_IMPORT_ERROR for this transaction';
  return {
    items: [item],
    patch: {
      state: 'failed',
      result: status,
      error: { code: EngineCode.transactionImportError, detail, ...located(item) },
    },
  };
}

/**
 * 400 TRANSACTION_IMPORT_ERROR names the first failing transaction only (spec "Create transactions"). Whether the
 * others of the request were committed is not documented: they stay `sending` and are sent again;
 * check_previously_added answers TRANSACTION_ALREADY_EXISTS for those that were.
 */
function afterImportError(
  items: readonly OpenItem[],
  outcome: Extract<TransactionsOutcome, { kind: 'import_error' }>,
): ItemDecision {
  const failedId = outcome.transactionData['transaction_id'];
  const failing = items.filter((item) => item.naturalKey === failedId);
  const targets = failing.length > 0 ? failing : items.slice(0, 1);
  const error: ErrorInfo = {
    code: importErrorCode(outcome.errorDetail),
    detail: outcome.errorDetail,
    file: targets[0]?.originFile ?? undefined,
    line: targets[0]?.originLine ?? undefined,
  };
  return decision(
    [{ items: targets, patch: { state: 'failed', error } }],
    items.filter((item) => !targets.includes(item)),
  );
}

/**
 * historical_statement_already_exists refuses the whole request when any statement_id is on the account already
 * (spec "Create historical statements"). Alone, a statement so refused is on the account (done); in a batch, each is
 * verified by sending it alone.
 */
export function afterStatements(batch: SentBatch, outcome: HistoricalStatementsOutcome): ItemDecision {
  const items = [...batch.items];
  switch (outcome.kind) {
    case 'invalid':
      return afterRefusal(batch, 'statements', outcome.errors);
    case 'created':
      return decision([done(items, 'created')], []);
    case 'already_exists':
      if (items.length === 1) return decision([done(items, 'historical_statement_already_exists')], []);
      return decision([], [], { sendAlone: items });
  }
}

/**
 * Several instructions per account allowed: a resend of one that may have been created (`sending`) could set up a
 * second at the vendor, and nothing can check it. Recorded `unknown` for a person (docs/reruns.md).
 * Undefined: the first of the batch may be sent.
 */
export function beforeInstruction(batch: readonly OpenItem[], onePerAccount: boolean): ItemDecision | undefined {
  const leftovers = batch.filter((item) => item.state === 'sending');
  if (leftovers.length === 0 || onePerAccount) return undefined;
  const detail =
    'a previous request may have created it; with several instructions per account allowed nothing ' +
    'recognises a repeat, so it is not resent';
  return decision([unknown(leftovers, detail)], []);
}

/**
 * A payment instruction's answer read against the ledger (instruction-outcome.ts). `facts`: whether it was a resend,
 * the account's other instructions that may be active, the one-active rule.
 */
export function afterInstruction(
  batch: SentBatch,
  outcome: PaymentInstructionOutcome,
  facts: Omit<InstructionFacts, 'answer'>,
): ItemDecision {
  const stop = outcome.kind === 'refused' ? configurationStop(batch, outcome.errors) : undefined;
  if (stop !== undefined) return stop;
  const items = [...batch.items];
  const item = items[0];
  if (item === undefined) return decision([], []);
  const decided = decideInstruction({ answer: outcome.kind, ...facts });
  if (decided.state === 'done') {
    const result = outcome.kind === 'created' ? outcome.platformAccountNumber : outcome.detail;
    const patch: ItemPatch = { state: 'done', result, settledBy: decided.settledBy, error: null };
    return decision([{ items, patch, ...(decided.detail === undefined ? {} : { detail: decided.detail }) }], []);
  }
  if (decided.state === 'unknown')
    return decision([{ items, patch: { state: 'unknown', error: { ...decided.error, ...located(item) } } }], []);
  // 400: invalid, or the vendor failed persistently: "not to be retried in the same form" (spec).
  const first = outcome.kind === 'refused' ? outcome.errors[0] : undefined;
  const error: ErrorInfo = {
    code: decided.error?.code ?? first?.code ?? EngineCode.paymentInstructionRefused,
    detail: decided.error?.detail ?? first?.detail ?? (outcome.kind === 'created' ? '' : outcome.detail),
    attr: first?.attr,
    ...located(item),
  };
  return decision([{ items, patch: { state: 'failed', error } }], []);
}
