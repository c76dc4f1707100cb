import type { ImportServiceClient } from '../api/types.js';
import { RUN_DEFAULTS } from '../defaults.js';
import { DEFAULT_TRANSACTION_FLAGS } from '../schema/index.js';
import { ITEM_KINDS, type ItemKind, type Ledger, type LedgerCounts } from '../ledger/index.js';
import type { EngineSettings } from './context.js';
import type { EventSink, StageSummary, StopReason } from './events.js';
import { Executor } from './executor.js';
import { EngineCode } from './engine-codes.js';
import type { Failure } from './failure.js';
import { errorLimitOf } from './error-budget.js';
import { exitCodeOf } from './outcome.js';
import { PUSH_STEPS, type PlanOptions, type PlanTotals } from './plan.js';
import { scanPlan, type PlanScan } from './plan-scan.js';
import { DEFAULT_POLL_SCHEDULE, longestPollDelay } from './poll-schedule.js';
import { Selection } from './selection.js';
import { stageExport, type ExportSource } from './stage.js';
import { StagingGate } from './staging-gate.js';

export type { EngineSettings } from './context.js';
export {
  nullSink,
  readingEvents,
  teeSink,
  type EngineEvent,
  type EventSink,
  type StageSummary,
  type StopReason,
} from './events.js';
export { configurationIssue, type Failure } from './failure.js';
export { sourceOf, type ExportSource } from './stage.js';
export {
  PLAN_REASONS,
  planAccount,
  REQUEST_KINDS,
  STEP_NAMES,
  type PlanReason,
  type PlanTotals,
  type PushStep,
  type RequestKind,
} from './plan.js';
import { monotonicNow } from '../clock.js';
export type { PlannedAccount } from './plan-scan.js';
export { planDryRun } from './dry-run.js';
export { exitCodeOf, leftIn, settleShared } from './outcome.js';
export { ITEMS_FOR_A_PERSON, STATE_FACTS, statesWhere, statesWithWork } from './account-states.js';
export { leaseFeed } from './shared-feed.js';

export const DEFAULT_ENGINE_SETTINGS = {
  concurrency: RUN_DEFAULTS.concurrency,
  retryErrored: false,
  wait: true,
  waitTimeoutMs: RUN_DEFAULTS.waitTimeoutSeconds * 1000,
  // The service moves a transaction dated outside its open statement period into it unless told not to (spec "Create
  // transactions"); the tool asks for that only where the migration declares it (force_add_to_current_statement).
  transactionFlags: { ...DEFAULT_TRANSACTION_FLAGS, force_add_to_current_statement: false },
  multiplePaymentInstructions: false,
  pollSchedule: DEFAULT_POLL_SCHEDULE,
  lostCreateChecks: RUN_DEFAULTS.lostCreateChecks,
  batchBytes: RUN_DEFAULTS.batchBytes,
  pageSize: 256,
  drainMs: RUN_DEFAULTS.drainSeconds * 1000,
  maxConsecutiveFailures: RUN_DEFAULTS.maxConsecutiveFailures,
} as const satisfies EngineSettings;

export interface PushInput {
  ledger: Ledger;
  client: ImportServiceClient;
  settings: EngineSettings;
  sink: EventSink;
  /** The export, streamed in external account number order; undefined: work on what the ledger holds. */
  source: ExportSource | undefined;
  /** Aborted on SIGINT/SIGTERM: stop taking work, drain, return `interrupted`. */
  signal?: AbortSignal;
  /** --limit / --accounts: the run touches only the plan's first `limit` accounts / these external account numbers. */
  selection?: { limit?: number | undefined; accounts?: ReadonlySet<string> | undefined } | undefined;
  /** --max-errors N or N% (of the accounts and records the run takes on). */
  maxErrors?: { count: number } | { percent: number } | undefined;
  /**
   * A ledger shared by several runners (shared-feed.ts): in place of staging beside the executor, this stages (or
   * finds staged) and brings leased accounts into the ledger, moving the gate; resolves once no more will come.
   */
  feed?: ((gate: StagingGate, signal: AbortSignal) => Promise<StageSummary | undefined>) | undefined;
}

export interface PushResult {
  reason: StopReason;
  fatal?: Failure;
  staged: StageSummary | undefined;
  counts: LedgerCounts;
  exitCode: number;
  /** A filtered run (--limit, --accounts, --only): work it leaves alone on purpose is not counted against it. */
  filtered: boolean;
  /** --accounts numbers neither the export nor the ledger holds. */
  unknownAccounts: string[];
  /** Failures tolerated by --max-errors in this run (resolved from N%). */
  maxErrors?: number;
}

/** The plan options of a run's settings (steps from --only; every step by default). */
export function planOptionsOf(settings: EngineSettings, accounts?: ReadonlySet<string>): PlanOptions {
  return {
    retryErrored: settings.retryErrored,
    wait: settings.wait,
    steps: settings.steps ?? new Set(PUSH_STEPS),
    transactionFlags: settings.transactionFlags,
    accounts,
  };
}

/**
 * Stages the export into the ledger and runs the state machine until done, stopped, or timed out.
 * A plain run sends while it stages (docs/complete-or-not.md "Sending while the export is read"): the executor
 * takes each account once staging has committed it (staging-gate.ts). A run with --limit,
 * --accounts or --max-errors N% needs the whole plan first: it stages, then sends.
 */
export async function runPush(run: PushInput): Promise<PushResult> {
  // --no-wait never waits for a check due later: the accounts earlier runs left waiting are checked in this run. A
  // check an earlier run left due further ahead than any poll delay was scheduled on a clock that has stepped since
  // (docs/limits.md "Clocks"): it is due within that delay, not an hour later.
  const now = monotonicNow();
  run.ledger.checksDueBy(run.settings.wait ? now + longestPollDelay(run.settings.pollSchedule) : now);
  const needsPlan = run.selection !== undefined || (run.maxErrors !== undefined && 'percent' in run.maxErrors);
  if (run.feed !== undefined) return sendWhileStaging(run, run.source);
  return run.source === undefined || needsPlan ? stageThenSend(run, run.source) : sendWhileStaging(run, run.source);
}

async function stageThenSend(run: PushInput, source: ExportSource | undefined): Promise<PushResult> {
  const { ledger, settings, sink } = run;
  const staged = source === undefined ? undefined : await stageExport(ledger, source, sink, { signal: run.signal });
  const extra = { unknownAccounts: new Array<string>() };
  if (run.signal?.aborted) return finish(ledger, 'interrupted', undefined, staged, extra);
  // A filtered run, or a budget in percent, needs the plan: which accounts, how much work.
  const scan =
    run.selection !== undefined || (run.maxErrors !== undefined && 'percent' in run.maxErrors)
      ? scanPlan(ledger, { ...planOptionsOf(settings, run.selection?.accounts), limit: run.selection?.limit })
      : undefined;
  const selection = run.selection !== undefined && scan !== undefined ? new Selection(scan.selected) : undefined;
  const maxErrors =
    run.maxErrors === undefined ? undefined : errorLimitOf(run.maxErrors, scan === undefined ? 0 : workOf(scan.totals));
  Object.assign(extra, { unknownAccounts: scan?.unknownAccounts ?? [] }, maxErrors === undefined ? {} : { maxErrors });
  sink.emit(scan && selection ? planEventOf(scan) : planEvent(ledger, settings));
  const executor = new Executor(ledger, run.client, settings, sink, { selection, maxErrors });
  const result = await untilStopped(run, executor, () => executor.run());
  return finish(ledger, result.reason, result.fatal, staged, extra, filteredRun(run));
}

async function sendWhileStaging(run: PushInput, source: ExportSource | undefined): Promise<PushResult> {
  const { ledger, settings, sink } = run;
  const maxErrors = run.maxErrors === undefined ? undefined : errorLimitOf(run.maxErrors, 0);
  const extra = { unknownAccounts: new Array<string>(), ...(maxErrors === undefined ? {} : { maxErrors }) };
  // The work the ledger holds already; staging events add what the export brings.
  sink.emit(planEvent(ledger, settings));
  const gate = new StagingGate(Math.max(STAGED_LEAD_MIN, settings.concurrency * STAGED_LEAD_PER_SLOT));
  const executor = new Executor(ledger, run.client, settings, sink, { maxErrors, gate });
  const { staged, result } = await untilStopped(run, executor, async () => {
    const running = executor.run();
    // The executor stopping early (interrupted, fatal, --max-errors) stops staging too.
    const stopStaging = new AbortController();
    const stop = (): void => stopStaging.abort();
    running.then(stop, stop);
    const signal = run.signal === undefined ? stopStaging.signal : AbortSignal.any([run.signal, stopStaging.signal]);
    try {
      const summary =
        run.feed !== undefined
          ? await run.feed(gate, signal)
          : source === undefined
            ? undefined
            : await stageExport(ledger, source, sink, {
                signal,
                gate,
                batchSize: OVERLAP_BATCH,
                sliceMs: OVERLAP_SLICE_MS,
              });
      return { staged: summary, result: await running };
    } catch (error) {
      // An export that cannot be read on (a damaged file), or a shared ledger that cannot be leased from: what is
      // staged
      // and sent stays; the run ends with the error.
      executor.stop(
        'fatal',
        run.feed === undefined
          ? {
              class: 'fatal',
              code: EngineCode.exportUnreadable,
              detail: 'the export cannot be read further (below); what was sent is recorded',
            }
          : {
              class: 'fatal',
              code: EngineCode.ledgerUnreachable,
              detail: 'the shared ledger cannot be read further (below); what was sent is recorded',
            },
      );
      await running;
      throw error;
    }
  });
  return finish(ledger, result.reason, result.fatal, staged, extra, filteredRun(run));
}

/** Staging batches while requests are in flight: small, so that a commit holds the event loop for a few ms. */
const OVERLAP_BATCH = 100;
const OVERLAP_SLICE_MS = 4;
/** How many accounts to create staging keeps ready ahead of the executor (staging-gate.ts roomAhead). */
const STAGED_LEAD_PER_SLOT = 8;
const STAGED_LEAD_MIN = 256;

/** Runs `work` with SIGINT/SIGTERM (the run's signal) stopping the executor. */
async function untilStopped<T>(run: PushInput, executor: Executor, work: () => Promise<T>): Promise<T> {
  const onAbort = (): void => executor.stop('interrupted');
  // A signal that came before the run started (while the export was opened) fires no event: it stops the run now,
  // else the executor would wait for a staging gate that staging, stopped, never moves.
  if (run.signal?.aborted) onAbort();
  run.signal?.addEventListener('abort', onAbort, { once: true });
  try {
    return await work();
  } finally {
    run.signal?.removeEventListener('abort', onAbort);
  }
}

function filteredRun(run: PushInput): boolean {
  return (
    run.selection !== undefined || (run.settings.steps !== undefined && run.settings.steps.size < PUSH_STEPS.length)
  );
}

function finish(
  ledger: Ledger,
  reason: StopReason,
  fatal: Failure | undefined,
  staged: StageSummary | undefined,
  extra: Pick<PushResult, 'unknownAccounts' | 'maxErrors'>,
  filtered = false,
): PushResult {
  ledger.flush();
  const counts = ledger.read.counts();
  return {
    reason,
    ...(fatal ? { fatal } : {}),
    staged,
    counts,
    exitCode: exitCodeOf(reason, counts, filtered),
    filtered,
    ...extra,
  };
}

/** The work --max-errors N% is a share of: the accounts in the plan and the records it sends. */
function workOf(totals: PlanTotals): number {
  return totals.inPlan + Object.values(totals.records).reduce((sum, n) => sum + n, 0);
}

/** The plan event of a filtered run: progress totals count only the selected accounts' work. */
function planEventOf(scan: PlanScan): {
  type: 'plan';
  toCreate: number;
  toProcess: number;
  items: Record<ItemKind, number>;
} {
  const reasons = scan.totals.reasons;
  const toProcess =
    (reasons.create ?? 0) + (reasons.retry_errored ?? 0) + (reasons.reconcile ?? 0) + (reasons.wait ?? 0);
  return { type: 'plan', toCreate: scan.totals.requests.create, toProcess, items: { ...scan.totals.records } };
}

function planEvent(
  ledger: Ledger,
  settings: EngineSettings,
): { type: 'plan'; toCreate: number; toProcess: number; items: Record<ItemKind, number> } {
  const a = ledger.read.counts().accounts;
  // Records of accounts this run can bring to processed (not those held back as invalid or errored).
  const waiting = ledger.read.waitingItems([
    'staged',
    'creating',
    'scheduled',
    'processed',
    'unresolved',
    ...(settings.retryErrored ? ['errored' as const] : []),
  ]);
  const items = Object.fromEntries(ITEM_KINDS.map((kind) => [kind, waiting[kind] ?? 0])) as Record<ItemKind, number>;
  return {
    type: 'plan',
    toCreate: (a.staged ?? 0) + (a.creating ?? 0) + (settings.retryErrored ? (a.errored ?? 0) : 0),
    toProcess:
      (a.staged ?? 0) + (a.creating ?? 0) + (a.scheduled ?? 0) + (settings.retryErrored ? (a.errored ?? 0) : 0),
    items,
  };
}
