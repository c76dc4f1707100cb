import { AuthenticationError, type ServiceClient } from '../../api/index.js';
import { checkRunService, moveText, serviceIdentity } from '../../config/ledger-service.js';
import { keptDialect, type ServiceConfig } from '../../config/service.js';
import { teeSink, type EngineEvent, type EventSink } from '../../engine/index.js';
import type { ExportInOrder } from '../../intake/export-in-order.js';
import { ExitCode, FatalError, MigrateError, visibleText } from '../../errors.js';
import { storageError } from '../../ledger/index.js';
import { openRunLedger, recordFailedRun, type RunLedger } from '../../ledger/run-ledger.js';
import type { NdjsonLogSink } from './ndjson-log.js';
import type { ProgressReporter } from './progress.js';
import { releasedText, restagedText } from './push-messages.js';
import { endLog, openDisplay, openLog, runRate, sizeOnceStaging, statusWords } from './push-sinks.js';
import { Closers } from './closers.js';
import { openService } from '../common/open-service.js';
import { stampRunId } from '../../output/stamped-output.js';
import { openExportForRun, type ExportPlace } from './open-export.js';
import { stopPointsOf, type StopPoint } from './stop-points.js';
import type { PushConfig } from './resolve.js';

// A push run's resources as one disposable (`await using run = await openPushRun(...)`): the ledger and its lock, the
// client, the run's record, the progress display, the metrics file, the log. Disposal closes them in the reverse order
// of opening (closers.ts), the first failure winning unless the run already failed; an exception is a failed run.

/** How the run ended, set by the command before disposal. */
export interface RunEnding {
  exitCode: number;
  /** The exception that ended it, if one did. */
  error?: unknown;
  /** The engine's outcome, recorded with the run (the service too, once it has answered). */
  outcome?: { reason: string; exitCode: number; counts: Record<string, unknown>; answered: boolean };
}

/** The run: the ledger's side (RunLedger's members), the client, the sinks; disposed as one. */
export interface PushRun
  extends AsyncDisposable, Readonly<Pick<RunLedger, 'stateDir' | 'label' | 'ledger' | 'shared' | 'lockLost'>> {
  readonly client: ServiceClient;
  readonly service: ServiceConfig;
  readonly progress: ProgressReporter;
  /** Every engine event goes here: progress, the log, the export's sizing, warnings. */
  readonly sink: EventSink;
  readonly log: NdjsonLogSink | undefined;
  /** Aborted by a stop signal or a lost lock: the engine and the client stop. */
  readonly signal: AbortSignal;
  /** The start-up test hook (stop-points.ts): a no-op unless the configuration names a point. */
  readonly stopAt: (point: StopPoint) => void;
  /** The export, opened (every file proven in order or sorted first) before the run was recorded. */
  readonly reader: ExportInOrder;
  ending: RunEnding;
}

const tell = (line: string): void => void process.stderr.write(`migrate: ${visibleText(line)}\n`);

type Loaded = { service: ServiceConfig | undefined; signal: AbortSignal };

/** Opens the run (the service settings loaded already, undefined with --sandbox); what opened is closed on failure. */
export async function openPushRun(config: PushConfig, loaded: Loaded): Promise<PushRun> {
  const closers = new Closers<RunEnding>();
  try {
    return await openResources(config, loaded, closers);
  } catch (error) {
    const explained = explain(error, config.ledger.stateDir);
    const exitCode = explained instanceof MigrateError ? explained.exitCode : ExitCode.fatal;
    await closers.close({ exitCode, error: explained }, () => undefined);
    throw explained;
  }
}

/**
 * The token first, before anything is staged: credentials the service refuses are one fatal line naming where they
 * came from, not an authentication error per account staged. Any other failure of the token request is left to the
 * run, whose first call meets it and stops as it does for every call.
 */
async function authenticated(client: ServiceClient, credentialSource: string): Promise<void> {
  try {
    await client.authenticate();
  } catch (error) {
    if (error instanceof AuthenticationError)
      throw new FatalError(
        `authentication_failed: ${error.message} (the credentials came from ${credentialSource}); give the key ` +
          'the platform issued for this service, then push again. Nothing was staged or sent.',
        'authentication_failed',
        error,
      );
  }
}

/** A failure of the ledger's storage as the tool's error naming the state directory; any other error as it is. */
const explain = (error: unknown, stateDir: string): unknown => storageError(error, stateDir) ?? error;

/**
 * The export, opened before anything is written: a shape.sql error or a refused file is exit 2 with no run recorded
 * (README "Exit codes"). What it tells while it opens goes to the display at once, and to the log once it is open.
 */
async function openExportFirst(
  config: PushConfig,
  at: Omit<ExportPlace, 'sink'> & { progress: ProgressReporter },
): Promise<{
  reader: ExportInOrder;
  close: () => Promise<void>;
  withLog: (log: NdjsonLogSink | undefined) => EventSink;
}> {
  const sizing = new AbortController();
  const sinks = [at.progress, sizeOnceStaging(config.exportFiles.files, at.progress.tally, sizing.signal), statusWords];
  const told: EngineEvent[] = [];
  let sink = teeSink(...sinks, { emit: (event) => told.push(event) });
  const reader = await openExportForRun(config, { ...at, sink: { emit: (event) => sink.emit(event) } }).catch(
    (error: unknown) => {
      sizing.abort();
      throw error;
    },
  );
  return {
    reader,
    close: async () => {
      sizing.abort();
      await reader.close();
    },
    withLog: (log) => {
      sink = teeSink(...sinks, ...(log ? [log] : []));
      if (log) for (const event of told.splice(0)) log.emit(event);
      return sink;
    },
  };
}

/** What the run's start changed: the ledger moved to another service, accounts staged again or released. */
function tellStart(config: PushConfig, { ledger, forgotten }: RunLedger, moving: string | undefined): void {
  if (moving !== undefined) tell(moving);
  for (const restaged of [...forgotten, ...ledger.forgetRefusedSuppliers()]) tell(restagedText(restaged));
  if (config.retryInvalid !== undefined)
    tell(releasedText(config.retryInvalid, ledger.releaseInvalid(config.retryInvalid)));
}

async function openResources(config: PushConfig, loaded: Loaded, closers: Closers<RunEnding>): Promise<PushRun> {
  const { ledger: where } = config;
  const stopAt = stopPointsOf(config.stopPoint);
  const runLedger = await openRunLedger({ ...where, stopAt, signal: loaded.signal }, (text) =>
    tell(`warning: ${text}`),
  );
  // Until the run is recorded, a failure leaves nothing behind: a state directory this run made is removed again.
  const recording: { runId?: number } = {};
  closers.add(() => runLedger.close({ neverStarted: recording.runId === undefined }));
  const { ledger, stateDir, label } = runLedger;
  // Read under the lock: the dialect the configuration chose must be the ledger's (a PostgreSQL ledger's is known
  // only now), and so must the service.
  const recordedDialect = ledger.read.dialect();
  const dialect = keptDialect(
    config.service.asked,
    recordedDialect === undefined ? undefined : { dialect: recordedDialect, ledgerLabel: label, moving: where.moving },
  );
  const current = serviceIdentity({
    ...{ sandbox: config.service.sandbox !== undefined, baseUrl: loaded.service?.baseUrl, dialect },
    importSupplier: config.mapping.importSupplier,
  });
  const recorded = ledger.read.service();
  const toRecord = checkRunService({ ledgerLabel: label, recorded, current, moving: where.moving });
  const { progress, monitoring } = openDisplay({ ...config.outputs, wait: config.engine.wait, ...runLedger });
  closers.add(() => progress.stop());
  if (monitoring) closers.add((ending) => monitoring.finish(ending.exitCode));
  // The run's stop ends the client's waits too (a pause the service asked for, a resend's backoff) and cuts off its
  // reads in flight; writes in flight get the engine's grace, then disposal cuts them off.
  const signal = AbortSignal.any([loaded.signal, runLedger.lockLost]);
  const service = await openService({
    ...{ flags: config.service.flags, sandbox: config.service.sandbox, file: config.mapping, dialect },
    // Loaded once before the ledger was opened; again only when the ledger's own dialect turned out to differ.
    config: loaded.service?.dialect === dialect ? loaded.service : undefined,
    client: {
      ...config.service.client,
      timeouts: { firstAnswerMs: config.service.firstAnswerMs },
      signal,
      ...(monitoring ? { onEvent: (event) => monitoring.metrics.onClientEvent(event) } : {}),
    },
  });
  closers.add(() => service.close());
  await authenticated(service.client, service.config.credentialSource);
  progress.tally.unanswered = () => service.client.stats().unanswered;
  const opened = await openExportFirst(config, { stateDir, dialect: service.config.dialect, signal, stopAt, progress });
  closers.add(() => opened.close());
  // A consistent copy as the run starts (docs/ledger-recovery.md); reading every page also finds a damaged file now.
  runLedger.snapshot((ledger.read.runs(1)[0]?.id ?? 0) + 1);
  stopAt('snapshot-taken');
  if (recordedDialect === undefined) ledger.recordDialect(service.config.dialect);
  const runId = ledger.startRun('push', { ...config.recordedOptions });
  recording.runId = runId;
  stampRunId(runId);
  stopAt('run-started');
  tellStart(config, runLedger, where.moving ? moveText(label, recorded, current) : undefined);
  closers.add(({ exitCode, error, outcome }) => {
    if (outcome === undefined) return recordFailedRun(ledger, runId, exitCode, error);
    const counts = { ...outcome.counts, accountsPerSecond: runRate(progress.tally) };
    ledger.finishRun(runId, outcome.reason, outcome.exitCode, counts);
    // Recorded once the service has answered for a run (a first run against a mistyped URL records nothing).
    if (outcome.answered && toRecord)
      ledger.recordService(toRecord.service, toRecord.moved && { ...toRecord.moved, runId });
  });
  const log = openLog(config.outputs, { runId, ledger, serviceUrl: service.config.baseUrl });
  if (log) closers.add(({ exitCode }) => endLog(log, { outcome: 'failed', exitCode }));
  const sink = opened.withLog(log);
  const run: PushRun = {
    ...{ stateDir, label, ledger, shared: runLedger.shared, lockLost: runLedger.lockLost },
    ...{ client: service.client, service: service.config },
    ...{ progress, sink, log, signal, stopAt, reader: opened.reader },
    ending: { exitCode: ExitCode.fatal },
    [Symbol.asyncDispose]: async () => {
      const failure = await closers.close(run.ending, (error) => {
        if (!storageError(error, stateDir)) tell(`while closing: ${String(error)}`);
      });
      if (failure !== undefined && run.ending.error === undefined) throw explain(failure, stateDir);
    },
  };
  return run;
}
