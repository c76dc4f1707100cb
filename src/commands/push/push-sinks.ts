import { existsSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { bodyExcerpt } from '../../api/index.js';
import type { EngineEvent, EventSink } from '../../engine/index.js';
import { UsageError, visibleText } from '../../errors.js';
import type { Ledger } from '../../ledger/index.js';
import { estimateExportAccounts } from '../common/export-size.js';
import { runOriginJson, type RunOrigin } from '../common/run-origin.js';
import { ledgerCountsReader } from './ledger-counts-thread.js';
import { PushMetrics, type RunFacts } from './metrics.js';
import { createNdjsonLogSink, type NdjsonLogSink } from './ndjson-log.js';
import { refuseForeignTarget, refuseInsideExport, refuseUnsafeOutput } from '../../output/output-file.js';
import { createProgressReporter, type ProgressReporter } from './progress.js';
import type { ProgressTally } from './progress-tally.js';
import { logFailedText } from './push-messages.js';
import type { ExportFile } from '../../sources/index.js';
import { monotonicNow } from '../../clock.js';

// What a push run says besides its summary: the NDJSON log (--log-file), the metrics file (--metrics-file, written at
// the start, every --metrics-interval seconds and at the end; docs/monitoring.md), the warnings the engine's events
// call for, and the export's size for the progress display. Their files are checked before anything is written.

const warn = (text: string): void => void process.stderr.write(`migrate: warning: ${visibleText(text)}\n`);

/** --log-file's directory must exist, outside the export: checked before the state directory is created. */
export function checkLogFile(path: string, exportDir: string): void {
  refuseUnsafeOutput('--log-file', path, [exportDir]);
  const dir = dirname(resolve(path));
  if (!existsSync(dir) || !statSync(dir).isDirectory())
    throw new UsageError(`--log-file ${path}: the directory ${dir} does not exist.`, 'log_file_unwritable');
}

/**
 * --metrics-file's directory must exist (checked before the state directory is created). A name
 * not ending in .prom is allowed but said: node_exporter's textfile collector reads only *.prom.
 */
export function checkMetricsFile(path: string, exportDir: string): void {
  refuseInsideExport('--metrics-file', path, path, [exportDir]);
  const dir = dirname(resolve(path));
  if (!existsSync(dir) || !statSync(dir).isDirectory())
    throw new UsageError(`--metrics-file ${path}: the directory ${dir} does not exist.`, 'metrics_file_unwritable');
  if (!path.endsWith('.prom'))
    warn(`--metrics-file ${path}: node_exporter's textfile collector reads only files ending in .prom`);
  refuseForeignTarget('--metrics-file', path);
}

/** The last push run that ended before this one, as the metrics show it. */
function lastEndedPush(ledger: Ledger): RunFacts | undefined {
  const run = ledger.read.runs(50).find((row) => row.command === 'push' && row.endedAt !== null);
  if (run === undefined || run.endedAt === null) return undefined;
  const rate = run.counts?.['accountsPerSecond'];
  return {
    startedAt: Date.parse(run.startedAt),
    endedAt: Date.parse(run.endedAt),
    exitCode: run.exitCode ?? undefined,
    accountsPerSecond: typeof rate === 'number' ? rate : undefined,
  };
}

/** Accounts the run settled per second since it started. */
export function runRate(tally: ProgressTally, now = monotonicNow()): number {
  return tally.settled / Math.max(0.001, (now - tally.startedAt) / 1000);
}

export interface OpenedMetrics {
  metrics: PushMetrics;
  /** The last write, with the run's exit code; stops the timer. Says on stderr if writing failed. */
  finish: (exitCode: number) => Promise<void>;
}

/** Creates the metrics of this run, writes the file once and every `intervalSeconds`. */
function openMetrics(input: {
  file: string;
  intervalSeconds: number;
  stateDir: string;
  /** How the metrics' state_dir label names the ledger. */
  label: string;
  ledger: Ledger;
  tally: ProgressTally;
}): OpenedMetrics {
  const counts = ledgerCountsReader(input.stateDir, () => input.ledger.read.counts());
  const metrics = new PushMetrics({
    file: resolve(input.file),
    ledgerLabel: input.label,
    counts: () => counts.read(),
    previousRun: lastEndedPush(input.ledger),
    runStartedAt: input.tally.startedAt,
    rate: () => runRate(input.tally),
  });
  void metrics.write();
  const timer = setInterval(() => void metrics.write(), input.intervalSeconds * 1000);
  timer.unref();
  return {
    metrics,
    finish: async (exitCode) => {
      clearInterval(timer);
      await metrics.write({ exitCode });
      await counts.close();
      const failure: NodeJS.ErrnoException | undefined = metrics.failure;
      if (failure) warn(`--metrics-file: writing stopped (${failure.code ?? failure.message}); the run went on`);
    },
  };
}

/** The progress display and the metrics file (--metrics-file), opened once the ledger is. */
export function openDisplay(input: {
  wait: boolean;
  quiet: boolean;
  progressInterval: number | undefined;
  metricsFile: string | undefined;
  metricsInterval: number;
  stateDir: string;
  label: string;
  ledger: Ledger;
}): { progress: ProgressReporter; monitoring: OpenedMetrics | undefined } {
  const progress = createProgressReporter({
    ...{ stream: process.stderr, wait: input.wait, quiet: input.quiet },
    ...(input.progressInterval === undefined ? {} : { intervalSeconds: input.progressInterval }),
  });
  if (input.metricsFile === undefined) return { progress, monitoring: undefined };
  const { stateDir, label, ledger } = input;
  const monitoring = openMetrics({
    ...{ file: input.metricsFile, intervalSeconds: input.metricsInterval, stateDir, label, ledger },
    tally: progress.tally,
  });
  return { progress, monitoring };
}

/**
 * --log-file, if given: the NDJSON sink of ndjson-log.ts (0600, appended), its first line naming the run configuration
 * and the service's URL; an unwritable path is exit 2.
 */
export function openLog(
  outputs: { logFile: string | undefined; origin: RunOrigin | undefined },
  run: { runId: number; ledger: Ledger; serviceUrl: string },
): NdjsonLogSink | undefined {
  if (outputs.logFile === undefined) return undefined;
  const { runId, ledger } = run;
  return createNdjsonLogSink(outputs.logFile, {
    ...{ runId, origin: runOriginJson(outputs.origin, run.serviceUrl) },
    accountNumberOf: (id) => ledger.accountById(id)?.externalAccountNumber,
  });
}

/** The log's last line (how the run ended); a failure to write it is said. */
export function endLog(log: NdjsonLogSink, end: { outcome: string; exitCode: number }): void {
  log.close(end);
  if (log.failure) process.stderr.write(`migrate: ${visibleText(logFailedText(log.failure))}\n`);
}

/** A status word the service gave that the tool does not know (once per word): said as a warning, escaped. */
export const statusWords: EventSink = {
  emit: (event) => {
    if (event.type !== 'status_word') return;
    warn(
      `${event.endpoint} answered the status ${bodyExcerpt(event.word)}, a word the spec does not give: ` +
        'read as "not finished", the account is asked again (said once per word)',
    );
  },
};

/**
 * The export's size (a byte scan of the accounts file) lets progress say how much is read and extrapolate the work.
 * Counted beside the push once staging has started, so that it does not delay the first request.
 */
export function sizeOnceStaging(files: readonly ExportFile[], tally: ProgressTally, signal: AbortSignal): EventSink {
  return onFirst('staging', () =>
    estimateExportAccounts(files, signal).then((accounts) => {
      tally.exportAccounts = accounts;
    }),
  );
}

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
