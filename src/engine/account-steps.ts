import { locateIssue } from '../mapping/locate.js';
import type { Origin } from '../mapping/types.js';
import { Code, type AccountPayload, type V1StatusRecord, type ValidationIssue } from '../schema/index.js';
import { REFUSED_SUPPLIER_ERROR, type AccountRow, type ErrorInfo, type StoredIssue } from '../ledger/index.js';
import type { StepContext } from './context.js';
import {
  classifyFailure,
  configurationIssue,
  configurationRefusal,
  errorInfoOf,
  mayHaveApplied,
  refusesSupplierCode,
  StopRun,
  UNEXPECTED_ATTEMPTS,
  type Failure,
} from './failure.js';
import { nextPollDelay } from './poll-schedule.js';
import {
  afterCreate,
  afterPollTransferStatus,
  afterStatus,
  afterTransferStatus,
  completedWithoutNumber,
  isKnownV2Status,
  type CreateResult,
  type Transition,
} from './transitions.js';
import { EngineCode } from './engine-codes.js';
import { CODE_LIMIT, limitDetail } from '../errors.js';

// The account-level steps: create (write-ahead), status check (reconcile or poll), resolve an
// account known only by post-import records. Each performs one request and applies the pure
// transition of transitions.ts to the ledger; each returns the account as it now stands.

/** Patch fields that move a counter rather than set a column. */
const COUNTERS: ReadonlySet<string> = new Set(['addAttempt', 'addPoll', 'resetPolls']);

/**
 * Applies a transition to the ledger and tells the sink; returns the updated row. An intent
 * (`durable`) is awaited: it must be on disk before its request is sent. An outcome is queued
 * and committed with the next group (the writer keeps order, so the next intent's commit
 * covers it); if it is lost in a crash, the intent before it is reconciled on the next run.
 */
export async function applyTransition(
  ctx: StepContext,
  account: AccountRow,
  transition: Transition,
  durable = false,
): Promise<AccountRow> {
  const { patch } = transition;
  const event = { step: transition.step, from: account.state, detail: transition.detail ?? null };
  const written = durable
    ? ctx.ledger.updateAccount(account.id, patch, event)
    : ctx.ledger.updateAccountDeferred(account.id, patch, event);
  if (durable) await written;
  else written.catch((error: unknown) => ctx.writeFailed(error));
  const next: AccountRow = {
    ...account,
    ...Object.fromEntries(Object.entries(patch).filter(([key, value]) => value !== undefined && !COUNTERS.has(key))),
    attempts: account.attempts + (patch.addAttempt ? 1 : 0),
    polls: (patch.resetPolls ? 0 : account.polls) + (patch.addPoll ? 1 : 0),
    error: patch.error === undefined ? account.error : patch.error,
  };
  if (next.state !== account.state) {
    ctx.sink.emit({
      type: 'account',
      accountId: account.id,
      externalAccountNumber: account.externalAccountNumber,
      from: account.state,
      to: next.state,
      ...(next.error ? { code: next.error.code } : {}),
    });
  }
  return next;
}

/** Calls the service; a fatal failure stops the run, anything else comes back as a Failure value. */
export async function call<T>(
  ctx: StepContext,
  request: () => Promise<T>,
): Promise<{ ok: true; value: T } | { ok: false; failure: Failure }> {
  try {
    const value = await request();
    ctx.succeeded();
    return { ok: true, value };
  } catch (error) {
    if (error instanceof StopRun) throw error;
    const failure = classifyFailure(error);
    ctx.failed(failure);
    return { ok: false, failure };
  }
}

/**
 * Create, write-ahead: the intent (`creating`, attempt + 1) is durable before the request. An
 * ambiguous failure is reconciled at once through the v2 status; a status that cannot be read
 * leaves the intent for the next attempt, which reconciles before anything is resent.
 */
export async function createAccount(ctx: StepContext, account: AccountRow): Promise<AccountRow> {
  if (account.error?.code === EngineCode.unexpectedAnswer && account.attempts >= UNEXPECTED_ATTEMPTS) {
    // Bounded across runs (failure.ts): held back like an ERRORED account (--retry-errored sends it again).
    const detail =
      `${account.attempts} creates answered in a way the spec does not describe; held back (check ` +
      `the service, then --retry-errored): ${account.error.detail}`;
    return applyTransition(ctx, account, {
      step: 'create',
      detail: EngineCode.unexpectedAnswer,
      patch: { state: 'errored', error: { code: EngineCode.unexpectedAnswer, detail } },
    });
  }
  if (account.payload === null)
    return applyTransition(ctx, account, {
      step: 'create',
      detail: EngineCode.payloadPurged,
      patch: {
        state: 'invalid',
        error: {
          code: EngineCode.payloadPurged,
          detail:
            'its data was removed by migrate ledger purge --all before it was sent, and no export pushed since ' +
            'holds it: push the export that holds it',
        },
      },
    });
  const intent = await applyTransition(
    ctx,
    account,
    { step: 'create', detail: 'intent', patch: { state: 'creating', addAttempt: true, resetPolls: true } },
    true,
  );
  const payload = JSON.parse(account.payload ?? '{}') as AccountPayload;
  // 'safe': the client resends only what certainly did not reach the service; an ambiguous
  // failure comes back here and is reconciled through the v2 status (architecture.md).
  const answer = await call(ctx, () => ctx.client.createAccount(payload, { retry: 'safe' })).catch(
    async (error: unknown) => {
      // The run stops (fatal): a create that certainly did not land is not left "unconfirmed".
      if (error instanceof StopRun && !mayHaveApplied(error.request)) await notSent(ctx, intent, error.failure);
      throw error;
    },
  );
  const refusedForConfiguration =
    answer.ok && answer.value.kind === 'invalid' ? configurationIssue(answer.value.errors) : undefined;
  if (refusedForConfiguration !== undefined) {
    // Not this account's data: it stays staged for the next run, and the run stops (failure.ts).
    const failure = configurationRefusal(refusedForConfiguration, account.importSupplier);
    // An unknown supplier code is marked on the account: the next push stages its code's accounts again.
    await notSent(
      ctx,
      intent,
      failure,
      refusesSupplierCode(refusedForConfiguration) ? REFUSED_SUPPLIER_ERROR.attr : undefined,
    );
    throw new StopRun(failure);
  }
  let result: CreateResult;
  if (!answer.ok && answer.failure.class === 'data')
    result = { kind: 'invalid', error: recordServiceIssues(ctx, account, answer.failure.issues ?? [], answer.failure) };
  else if (!answer.ok && !mayHaveApplied(answer.failure))
    result = { kind: 'not_sent', error: errorInfoOf(answer.failure) };
  else if (!answer.ok) result = { kind: 'unsettled', error: errorInfoOf(answer.failure) };
  else if (answer.value.kind === 'invalid')
    result = { kind: 'invalid', error: recordServiceIssues(ctx, account, answer.value.errors) };
  else result = answer.value;
  const next = await applyTransition(ctx, intent, afterCreate(intent, result, clock(ctx), ctx.settings.pollSchedule));
  // A lost or unreadable answer: the v2 status says whether the create arrived.
  if (!answer.ok && (answer.failure.class === 'ambiguous' || answer.failure.class === 'unexpected'))
    return checkStatus(ctx, next);
  return next;
}

/**
 * A create that did not land (refused, or never sent): back to staged with the reason. Queued, not awaited, so the run
 * stops at once (the run's end commits it; lost in a crash, the intent left is reconciled by the next run).
 */
function notSent(ctx: StepContext, intent: AccountRow, failure: Failure, attr?: string): Promise<AccountRow> {
  const error = { ...errorInfoOf(failure), ...(attr === undefined ? {} : { attr }) };
  return applyTransition(
    ctx,
    intent,
    afterCreate(intent, { kind: 'not_sent', error }, clock(ctx), ctx.settings.pollSchedule),
  );
}

/**
 * Polls a `scheduled` account with v1 transfer status first (one request when it is imported:
 * COMPLETED carries the platform account number), v2 only when v1 says it is not there (its
 * latest_error); reconciles a `creating` account through v2 (whether the create arrived).
 */
export async function checkStatus(ctx: StepContext, account: AccountRow): Promise<AccountRow> {
  if (account.state === 'scheduled') {
    const askedAt = ctx.now();
    const v1 = await call(ctx, () =>
      ctx.client.getTransferStatus(account.importSupplier, account.externalAccountNumber),
    );
    if (!v1.ok) return askAgainLater(ctx, account, v1.failure);
    const transition = afterPollTransferStatus(account, v1.value, clock(ctx), ctx.settings.pollSchedule);
    if (account.polls === 0)
      ctx.firstPollAnswered?.(transition?.patch.state === 'processed', askedAt - (account.nextCheckAt ?? askedAt));
    if (transition !== undefined) return applyTransition(ctx, account, transition);
  }
  const answer = await call(ctx, () =>
    ctx.client.getImportStatus(account.importSupplier, account.externalAccountNumber),
  );
  if (!answer.ok) return askAgainLater(ctx, account, answer.failure);
  if (answer.value !== null && !isKnownV2Status(answer.value.status)) noteUnknownWord(ctx, answer.value.status);
  const transition = afterStatus(
    account,
    answer.value,
    clock(ctx),
    ctx.settings.pollSchedule,
    ctx.settings.lostCreateChecks,
  );
  if (transition.patch.state !== 'processed' || account.platformAccountNumber !== null)
    return applyTransition(ctx, account, transition);
  // v2 status gives the internal platform_identifier only; the platform account number that
  // operators and reports key on comes from v1 transfer status (spec "Account import status (v1)").
  const v1 = await transferStatusOf(ctx, account);
  if (v1?.status === 'COMPLETED' && v1.platform_account_number === '')
    return applyTransition(ctx, account, completedWithoutNumber(account));
  const platformAccountNumber = v1 ? v1.platform_account_number : '';
  return applyTransition(
    ctx,
    account,
    platformAccountNumber === ''
      ? transition
      : { ...transition, patch: { ...transition.patch, platformAccountNumber } },
  );
}

/** How many distinct unknown words a run says (a service inventing one per answer cannot flood the log). */
const UNKNOWN_WORDS_SAID = 100;

/** Says a v2 status word the spec does not give, once per word and run. */
function noteUnknownWord(ctx: StepContext, word: string): void {
  if (ctx.unknownWords.has(word) || ctx.unknownWords.size >= UNKNOWN_WORDS_SAID) return;
  ctx.unknownWords.add(word);
  ctx.sink.emit({ type: 'status_word', endpoint: 'getImportStatus', word: limitDetail(word, CODE_LIMIT) });
}

/**
 * A status that could not be asked: ask again later in this run (the poller takes creating and
 * scheduled accounts whose check is due); a create is never resent before the answer is known.
 */
function askAgainLater(ctx: StepContext, account: AccountRow, failure: Failure): Promise<AccountRow> {
  const retryAt = ctx.now() + nextPollDelay(ctx.settings.pollSchedule, account.polls + 1, ctx.random());
  return applyTransition(ctx, account, {
    step: account.state === 'creating' ? 'reconcile' : 'poll',
    // The account's history says why (status --account): the code alone hid what the service answered.
    detail: `${failure.code}: ${failure.detail}`,
    patch: { nextCheckAt: retryAt, addPoll: true },
  });
}

/**
 * The account's v1 transfer status (its platform account number); null when it cannot be had now (a later list or
 * status call fills the number).
 */
async function transferStatusOf(ctx: StepContext, account: AccountRow): Promise<V1StatusRecord | null> {
  const answer = await call(ctx, () =>
    ctx.client.getTransferStatus(account.importSupplier, account.externalAccountNumber),
  );
  return answer.ok ? answer.value : null;
}

/** v1 transfer status of an account known only by post-import records. */
export async function resolveAccount(ctx: StepContext, account: AccountRow): Promise<AccountRow> {
  const answer = await call(ctx, () =>
    ctx.client.getTransferStatus(account.importSupplier, account.externalAccountNumber),
  );
  if (!answer.ok) {
    return applyTransition(ctx, account, {
      step: 'resolve',
      detail: answer.failure.code,
      patch: { error: errorInfoOf(answer.failure) },
    });
  }
  const transition = afterTransferStatus(answer.value);
  if (transition.patch.state === 'invalid') recordNotFound(ctx, account);
  return applyTransition(ctx, account, transition);
}

/**
 * An account that exists nowhere: each of its records waiting to be sent becomes one issue at its own file and line
 * (fix-data.csv), so that the data team finds every row that names it.
 */
function recordNotFound(ctx: StepContext, account: AccountRow): void {
  const records = ctx.ledger.itemsOf(account.id, ['pending']);
  const issues: StoredIssue[] = records.map((record) => ({
    code: EngineCode.accountNotFound,
    message:
      `${account.importSupplier} ${account.externalAccountNumber}: no such account on the platform (no import ` +
      `process) and none in the export, so this ${record.kind.replace('_', ' ')} cannot be added; correct its ` +
      'external_account_number, or bring the account in an accounts file, then push again.',
    attr: record.kind,
    source: 'service',
    ...(record.originFile === null ? {} : { file: record.originFile }),
    ...(record.originLine === null ? {} : { line: record.originLine }),
  }));
  // Committed with the transition queued right after it (group commit keeps the order).
  ctx.ledger.commit(() => ctx.ledger.replaceIssues(account.id, issues)).catch(() => undefined);
}

function clock(ctx: StepContext): { now: number; random: number } {
  return { now: ctx.now(), random: ctx.random() };
}

/** Stores the service's validation errors mapped back to file/line/column; returns the first as the account's error. */
function recordServiceIssues(
  ctx: StepContext,
  account: AccountRow,
  errors: ValidationIssue[],
  refusedLocally?: Failure,
): ErrorInfo {
  const stored = JSON.parse(account.origins ?? '{}') as {
    origins?: Record<string, Origin>;
    columnOf?: Record<string, Record<string, string>>;
  };
  const source = {
    externalAccountNumber: account.externalAccountNumber,
    origins: stored.origins ?? {},
    ...(stored.columnOf ? { columnOf: stored.columnOf } : {}),
  };
  const issues: StoredIssue[] = errors.map((error) => {
    const located = locateIssue(source, error);
    return {
      code: located.code,
      message: located.message,
      attr: located.attr,
      source: 'service',
      ...(located.file === '' ? {} : { file: located.file, line: located.line }),
      column: located.column,
    };
  });
  // Committed with the transition queued right after it (group commit keeps the order); a failed commit fails that one
  // too.
  ctx.ledger.commit(() => ctx.ledger.replaceIssues(account.id, issues)).catch(() => undefined);
  const first = issues[0];
  if (first === undefined)
    return refusedLocally
      ? errorInfoOf(refusedLocally)
      : { code: Code.accountFailedValidation, detail: 'the service refused the account without details' };
  // The client's own refusal keeps its code (invalid_request), with the first field's location.
  const code = refusedLocally ? refusedLocally.code : first.code;
  return { code, detail: first.message, attr: first.attr, file: first.file, line: first.line, column: first.column };
}
