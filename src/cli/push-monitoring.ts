import { existsSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { UsageError } from '../errors.js';
import type { Ledger } from '../ledger/index.js';
import { ledgerCountsReader } from '../report/ledger-counts-thread.js';
import { PushMetrics, type RunFacts } from '../report/metrics.js';
import { refuseForeignTarget, refuseInsideExport } from '../report/output-file.js';
import type { ProgressTally } from '../report/progress-tally.js';
import { monotonicNow } from '../clock.js';

// push's --metrics-file wiring: checked before anything is written, opened once the ledger is,
// written at the start, every --metrics-interval seconds and at the end (docs/monitoring.md).

/**
 * --metrics-file's directory must exist (checked before the state directory is created). A name
 * not ending in .prom is allowed but said: node_exporter's textfile collector reads only *.prom.
 */
export function checkMetricsFile(path: string, exportDir: string, warn: (text: string) => void): void {
  refuseInsideExport('--metrics-file', path, path, [exportDir]);
  const dir = dirname(resolve(path));
  if (!existsSync(dir) || !statSync(dir).isDirectory())
    throw new UsageError(`--metrics-file ${path}: the directory ${dir} does not exist.`, 'metrics_file_unwritable');
  if (!path.endsWith('.prom'))
    warn(`--metrics-file ${path}: node_exporter's textfile collector reads only files ending in .prom`);
  refuseForeignTarget('--metrics-file', path);
}

/** The last push run that ended before this one, as the metrics show it. */
export function lastEndedPush(ledger: Ledger): RunFacts | undefined {
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
export function openMetrics(input: {
  file: string;
  intervalSeconds: number;
  stateDir: string;
  /** How the metrics' state_dir label names the ledger (default: stateDir). */
  label?: string;
  ledger: Ledger;
  tally: ProgressTally;
  previousRun: RunFacts | undefined;
  warn: (text: string) => void;
}): OpenedMetrics {
  const counts = ledgerCountsReader(input.stateDir, () => input.ledger.read.counts());
  const metrics = new PushMetrics({
    file: resolve(input.file),
    ledgerLabel: input.label ?? input.stateDir,
    counts: () => counts.read(),
    previousRun: input.previousRun,
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
      if (failure) input.warn(`--metrics-file: writing stopped (${failure.code ?? failure.message}); the run went on`);
    },
  };
}
