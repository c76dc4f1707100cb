import type { ImportServiceClient } from '../api/types.js';
import { DEFAULT_TRANSACTION_FLAGS } from '../schema/index.js';
import type { ExportEntry } from '../mapping/types.js';
import { ITEM_KINDS, type ItemKind, type Ledger, type LedgerCounts } from '../ledger/index.js';
import type { EngineSettings } from './context.js';
import type { EventSink, StopReason } from './events.js';
import { Executor } from './executor.js';
import type { Failure } from './failure.js';
import { exitCodeOf } from './outcome.js';
import { DEFAULT_POLL_SCHEDULE } from './poll-schedule.js';
import { stageExport, type StageSummary } from './stage.js';

export type { EngineSettings } from './context.js';
export { nullSink, teeSink, type EngineEvent, type EventSink, type StopReason } from './events.js';
export type { Failure } from './failure.js';
export { exitCodeOf } from './outcome.js';
export { DEFAULT_POLL_SCHEDULE, type PollSchedule } from './poll-schedule.js';
export type { StageSummary } from './stage.js';

export const DEFAULT_ENGINE_SETTINGS = {
  concurrency: 8,
  retryErrored: false,
  wait: true,
  waitTimeoutMs: 10 * 60_000,
  transactionFlags: { ...DEFAULT_TRANSACTION_FLAGS },
  pollSchedule: DEFAULT_POLL_SCHEDULE,
  pageSize: 256,
  drainMs: 10_000,
  maxConsecutiveFailures: 25,
} as const satisfies EngineSettings;

export interface PushRun {
  ledger: Ledger;
  client: ImportServiceClient;
  settings: EngineSettings;
  sink: EventSink;
  /** The export, streamed; undefined: work on what the ledger holds. */
  entries: AsyncIterable<ExportEntry> | undefined;
  /** Aborted on SIGINT/SIGTERM: stop taking work, drain, return `interrupted`. */
  signal?: AbortSignal;
}

export interface PushResult {
  reason: StopReason;
  fatal?: Failure;
  staged: StageSummary | undefined;
  counts: LedgerCounts;
  exitCode: number;
}

/** Stages the export into the ledger, then runs the state machine until done, stopped, or timed out. */
export async function runPush(run: PushRun): Promise<PushResult> {
  const { ledger, settings, sink } = run;
  const staged = run.entries === undefined ? undefined : await stageExport(ledger, run.entries, sink, run.signal);
  if (run.signal?.aborted) return finish(ledger, 'interrupted', undefined, staged, settings);
  sink.emit(planEvent(ledger, settings));
  const executor = new Executor(ledger, run.client, settings, sink);
  const onAbort = (): void => executor.stop('interrupted');
  run.signal?.addEventListener('abort', onAbort, { once: true });
  try {
    const result = await executor.run();
    return finish(ledger, result.reason, result.fatal, staged, settings);
  } finally {
    run.signal?.removeEventListener('abort', onAbort);
  }
}

function finish(ledger: Ledger, reason: StopReason, fatal: Failure | undefined, staged: StageSummary | undefined, settings: EngineSettings): PushResult {
  ledger.flush();
  const counts = ledger.read.counts();
  return { reason, ...(fatal ? { fatal } : {}), staged, counts, exitCode: exitCodeOf(reason, counts, settings.wait) };
}

function planEvent(ledger: Ledger, settings: EngineSettings): { type: 'plan'; toCreate: number; toProcess: number; items: Record<ItemKind, number> } {
  const a = ledger.read.counts().accounts;
  // Records of accounts this run can bring to processed (not those held back as invalid or errored).
  const waiting = ledger.read.waitingItems(['staged', 'creating', 'scheduled', 'processed', 'unresolved', ...(settings.retryErrored ? ['errored' as const] : [])]);
  const items = Object.fromEntries(ITEM_KINDS.map((kind) => [kind, waiting[kind] ?? 0])) as Record<ItemKind, number>;
  return {
    type: 'plan',
    toCreate: (a.staged ?? 0) + (a.creating ?? 0) + (settings.retryErrored ? (a.errored ?? 0) : 0),
    toProcess: (a.staged ?? 0) + (a.creating ?? 0) + (a.scheduled ?? 0) + (settings.retryErrored ? (a.errored ?? 0) : 0),
    items,
  };
}
