import { realpathSync } from 'node:fs';
import { bodyExcerpt, type ClientEvent } from '../api/index.js';
import { teeSink, type EngineEvent, type EventSink } from '../engine/index.js';
import { ExitCode, MigrateError, visibleText } from '../errors.js';
import { isLedgerDamage, type Ledger, storageError } from '../ledger/index.js';
import { estimateExportAccounts } from '../report/export-size.js';
import { createNdjsonLogSink, type NdjsonLogSink } from '../report/ndjson-log.js';
import { createProgressReporter, type ProgressReporter } from '../report/progress.js';
import { logFailedText, releasedText } from '../report/push-messages.js';
import { DEFAULT_UNREACHABLE_SECONDS, redactUrl } from '../ledger/postgres/index.js';
import { Closers } from './closers.js';
import type { OpenService } from './open-service.js';
import { openRunLedger, type RunLedger } from './push-ledger.js';
import { stampRunId } from './stamped-output.js';
import type { PushCommandOptions } from './push-options.js';
import { lastEndedPush, openMetrics, type OpenedMetrics } from './push-monitoring.js';
import type { PushSetup } from './push-setup.js';
import { checkLedgerService, moveText, openPushService, recordService } from './push-service.js';

// A push run's resources, opened in one place and closed in one (closers.ts, in reverse): the state directory's lock
// and its watch, the ledger and its snapshot, the recorded service and dialect, the service's client, the run's record,
// the progress display, the metrics file and the NDJSON log. Whatever way the run ends, every one is closed, the run is
// recorded (failed, when an exception ended it) and the log and metrics say how it ended.

/** How the run ended, told to every closer. */
export interface RunEnding {
  exitCode: number;
  /** The exception that ended it, if one did. */
  error?: unknown;
}

export interface PushRun {
  /** Where the run's files go: the state directory (for PostgreSQL, the working copy's temporary directory). */
  readonly stateDir: string;
  /** How messages and the summary name the ledger: the state directory, or the URL without its password. */
  readonly label: string;
  readonly ledger: Ledger;
  readonly service: OpenService;
  readonly runId: number;
  readonly progress: ProgressReporter;
  /** Every engine event goes here: progress, the log, the export's sizing. */
  readonly sink: EventSink;
  /** Aborted by SIGINT/SIGTERM or a lost lock: the engine and the client stop. */
  readonly signal: AbortSignal;
  /** Why the lock was lost, once it was (another run may have started). */
  lockLost(): string | undefined;
  /** For a runner sharing a PostgreSQL ledger: runPush's feed of leased accounts (engine/shared-feed.ts). */
  readonly feed: RunLedger['feed'];
  /** A sharing runner's result counts the whole ledger (every runner's accounts), as a state directory's does. */
  settle: RunLedger['settle'];
  /** The run's outcome is recorded; the service is recorded when it answered. */
  finish(outcome: { reason: string; exitCode: number; counts: Record<string, unknown>; answered: boolean }): void;
  closeLog(end: { outcome: string; exitCode: number }): void;
  /** Something the command opened for the run, closed with the rest (before what was opened earlier). */
  onClose(close: () => unknown): void;
  /** Closes everything (closers.ts); the first failure is rethrown unless the run already failed. */
  close(ending: RunEnding): Promise<void>;
  /** A storage failure or a damaged ledger as the message that names the state directory and what to do. */
  explain(error: unknown): unknown;
}

export async function openPushRun(
  options: PushCommandOptions,
  setup: PushSetup,
  signal: AbortSignal,
): Promise<PushRun> {
  const closers = new Closers<RunEnding>();
  const { stateDir } = setup;
  try {
    return await openResources(options, setup, signal, closers);
  } catch (error) {
    const explained = explainStorage(error, stateDir);
    await closers.close({ exitCode: exitCodeOf(explained), error: explained }, () => undefined);
    throw explained;
  }
}

async function openResources(
  options: PushCommandOptions,
  setup: PushSetup,
  signal: AbortSignal,
  closers: Closers<RunEnding>,
): Promise<PushRun> {
  const { stopAt } = setup;
  const { runLedger, lockLost } = await openLockedLedger(options, setup, signal, closers);
  const { ledger, stateDir, label } = runLedger;
  const services = checkLedgerService(options, setup, runLedger);
  // A consistent copy as the run starts (docs/ledger-recovery.md); reading every page also finds a damaged file now.
  runLedger.snapshot(nextRunId(ledger));
  stopAt('snapshot-taken');
  const progress = createProgressReporter({
    stream: process.stderr,
    wait: options.wait,
    ...(options.quiet ? { quiet: true } : {}),
    ...(options.progressInterval === undefined ? {} : { intervalSeconds: options.progressInterval }),
  });
  closers.add(() => progress.stop());
  const monitoring = openMonitoring(options, runLedger, progress);
  if (monitoring) closers.add((ending) => monitoring.finish(ending.exitCode));
  // The run's stop ends the client's waits too (a pause the service asked for, a resend's backoff) and cuts off its
  // reads in flight; writes in flight get the engine's grace, then close() cuts them off.
  const runSignal = AbortSignal.any([signal, lockLost]);
  const service = await openPushService(options, setup, services.dialect, {
    signal: runSignal,
    ...(monitoring ? { onEvent: (event: ClientEvent) => monitoring.metrics.onClientEvent(event) } : {}),
  });
  closers.add(() => service.close());
  progress.tally.unanswered = () => service.client.stats().unanswered;
  if (ledger.read.dialect() === undefined) ledger.recordDialect(service.config.dialect);
  const runId = ledger.startRun('push', runOptions(options));
  stampRunId(runId);
  stopAt('run-started');
  const moving = options.moveLedgerToService ? moveText(label, services.recorded, services.current) : undefined;
  if (moving !== undefined) tell(moving);
  if (options.retryInvalid !== undefined)
    tell(releasedText(options.retryInvalid, ledger.releaseInvalid(options.retryInvalid)));
  let finished = false;
  // A run that ends by an exception (unreadable export, lost lock) is recorded as failed, not left `running`.
  closers.add(({ exitCode, error }) => {
    if (!finished) quietly(() => ledger.finishRun(runId, 'failed', exitCode, failedCounts(ledger, error)));
  });
  const sizing = new AbortController();
  closers.add(() => sizing.abort());
  const log = options.logFile === undefined ? undefined : openLog(options.logFile, runId, ledger);
  if (log) closers.add(({ exitCode }) => closeLog(log, { outcome: 'failed', exitCode }));
  const sinks = [progress, sizeOnceStaging(setup, progress, sizing.signal), statusWords, ...(log ? [log] : [])];
  return {
    stateDir,
    label,
    feed: runLedger.feed,
    settle: (result, filtered) => runLedger.settle(result, filtered),
    ledger,
    service,
    runId,
    progress,
    sink: teeSink(...sinks),
    signal: runSignal,
    lockLost: () => (lockLost.aborted ? (runLedger.lockLost()?.message ?? 'unknown reason') : undefined),
    finish: ({ reason, exitCode, counts, answered }) => {
      ledger.finishRun(runId, reason, exitCode, counts);
      finished = true;
      // Recorded once the service has answered for a run (a first run against a mistyped URL records nothing).
      if (answered) recordService(ledger, services.recorded, services.current, runId);
    },
    closeLog: (end) => log && closeLog(log, end),
    onClose: (close) => closers.add(close),
    close: async (ending) => {
      const failure = await closers.close(ending, (error) => {
        if (!storageError(error, stateDir)) process.stderr.write(`migrate: while closing: ${String(error)}\n`);
      });
      if (failure !== undefined && ending.error === undefined) throw explainStorage(failure, setup.stateDir);
    },
    explain: (error) => explainStorage(error, setup.stateDir),
  };
}

/**
 * The run's ledger opened and locked (push-ledger.ts: a state directory's SQLite file, or a PostgreSQL database
 * through a working copy). A lost lock or lease (taken over after this process stalled) means another run may go on
 * with its accounts: `lockLost` aborts, and the run stops taking work (exit 3).
 */
async function openLockedLedger(
  options: PushCommandOptions,
  setup: PushSetup,
  signal: AbortSignal,
  closers: Closers<RunEnding>,
): Promise<{ runLedger: RunLedger; lockLost: AbortSignal }> {
  const runLedger = await openRunLedger(
    {
      stateDir: setup.stateDir,
      stopAt: setup.stopAt,
      ledgerUrl: setup.ledgerUrl,
      unreachableSeconds: options.ledgerTimeout ?? DEFAULT_UNREACHABLE_SECONDS,
      // What needs the whole ledger at once takes it alone (a shared ledger's runners lease accounts).
      alone:
        setup.selection !== undefined ||
        options.retryInvalid !== undefined ||
        (options.maxErrors !== undefined && 'percent' in options.maxErrors),
      retryErrored: options.retryErrored === true,
      signal,
    },
    (text) => tell(`warning: ${text}`),
  );
  closers.add(() => runLedger.close());
  const lockLost = new AbortController();
  const lockWatch = setInterval(() => runLedger.lockLost() && lockLost.abort(), 1000);
  closers.add(() => clearInterval(lockWatch));
  return { runLedger, lockLost: lockLost.signal };
}

/** The ledger's counts and, for an exception that ended the run, why (for `status`: never a secret). */
function failedCounts(ledger: Ledger, error: unknown): Record<string, unknown> {
  return {
    ...ledger.read.counts(),
    ...(error instanceof MigrateError ? { fatal: { code: error.code, detail: error.message } } : {}),
  };
}

function exitCodeOf(error: unknown): number {
  return error instanceof MigrateError ? error.exitCode : ExitCode.fatal;
}

/** The error itself, or the tool's error naming it when it is a failure of the ledger's storage. */
const explainStorage = (error: unknown, stateDir: string): unknown => storageError(error, stateDir) ?? error;

const tell = (line: string): void => void process.stderr.write(`migrate: ${visibleText(line)}\n`);

function openMonitoring(
  options: PushCommandOptions,
  { stateDir, label, ledger }: RunLedger,
  progress: ProgressReporter,
): OpenedMetrics | undefined {
  if (options.metricsFile === undefined) return undefined;
  return openMetrics({
    file: options.metricsFile,
    intervalSeconds: options.metricsInterval,
    stateDir,
    label,
    ledger,
    tally: progress.tally,
    previousRun: lastEndedPush(ledger),
    warn: (text) => tell(`warning: ${text}`),
  });
}

/**
 * The export's size (a byte scan of the accounts file) lets progress say how much is read and extrapolate the work.
 * Counted beside the push once staging has started, so that it does not delay the first request.
 */
function sizeOnceStaging(setup: PushSetup, progress: ProgressReporter, signal: AbortSignal): EventSink {
  return onFirst('staging', () =>
    estimateExportAccounts(setup.exportFiles.files, signal).then((accounts) => {
      progress.tally.exportAccounts = accounts;
    }),
  );
}

/** A status word the service gave that the tool does not know (once per word): said as a warning, escaped. */
const statusWords: EventSink = {
  emit: (event) => {
    if (event.type !== 'status_word') return;
    tell(
      `warning: ${event.endpoint} answered the status ${bodyExcerpt(event.word)}, a word the spec does not give: ` +
        'read as "not finished", the account is asked again (said once per word)',
    );
  },
};

/** A sink that calls `then` once, at the first event of that type. */
function onFirst(type: EngineEvent['type'], then: () => Promise<void>): EventSink {
  let seen = false;
  return {
    emit: (event) => {
      if (seen || event.type !== type) return;
      seen = true;
      void then();
    },
  };
}

/** The id the next run will get: snapshots are named by it. */
function nextRunId(ledger: Ledger): number {
  return (ledger.read.runs(1)[0]?.id ?? 0) + 1;
}

/** A closing step on a damaged ledger fails too: the error already raised is the one to report. */
function quietly(step: () => void): void {
  try {
    step();
  } catch (error) {
    if (!isLedgerDamage(error)) throw error;
  }
}

/** The options recorded with the run: never a secret (file paths only), sets as lists. */
function runOptions(options: PushCommandOptions): Record<string, unknown> {
  const { apiKeyFile, tokenFile, only, ledger, ...rest } = options;
  return {
    ...rest,
    // The PostgreSQL ledger's URL, never its password.
    ledger: ledger === undefined ? undefined : redactUrl(ledger),
    // The export directory's real path: `migrate report` never writes into it (report/out-dir.ts).
    exportDir: realpathSync(options.dir),
    apiKeyFile: apiKeyFile === undefined ? undefined : '(given)',
    tokenFile: tokenFile === undefined ? undefined : '(given)',
    only: only === undefined ? undefined : [...only],
  };
}

/** --log-file: the NDJSON sink of src/report/ndjson-log.ts (0600, appended); an unwritable path is exit 2. */
function openLog(path: string, runId: number, ledger: Ledger): NdjsonLogSink {
  return createNdjsonLogSink(path, { runId, accountNumberOf: (id) => ledger.accountById(id)?.externalAccountNumber });
}

function closeLog(log: NdjsonLogSink, end: { outcome: string; exitCode: number }): void {
  log.close(end);
  if (log.failure) tell(logFailedText(log.failure));
}
