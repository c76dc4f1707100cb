import cliProgress from 'cli-progress';
import type { EngineEvent, EventSink } from '../engine/index.js';
import { PROGRESS_STEPS, ProgressTally, STEP_LABELS, type ProgressStep } from './progress-tally.js';

export interface ProgressReporter extends EventSink {
  /** Stops the bars or the timer; prints nothing more. */
  stop(): void;
}

export interface ProgressOptions {
  /** Where progress goes (stderr: stdout is kept for --json). */
  stream: NodeJS.WriteStream;
  /** Seconds between plain lines when the stream is not a terminal. */
  intervalSeconds?: number;
  /** No progress at all (e.g. --json with stderr redirected is still fine; this is for quiet use). */
  silent?: boolean;
}

/**
 * Progress of a push: on a terminal, one cli-progress bar per step with its rate and ETA;
 * otherwise (cron, CI, a log file) a plain line every few seconds.
 */
export function createProgressReporter(options: ProgressOptions): ProgressReporter & { tally: ProgressTally } {
  const tally = new ProgressTally();
  if (options.silent) return { tally, emit: (event) => tally.emit(event), stop: () => undefined };
  return options.stream.isTTY
    ? barsReporter(tally, options.stream)
    : linesReporter(tally, options.stream, options.intervalSeconds ?? 5);
}

function linesReporter(
  tally: ProgressTally,
  stream: NodeJS.WriteStream,
  intervalSeconds: number,
): ProgressReporter & { tally: ProgressTally } {
  const timer = setInterval(() => stream.write(`migrate: ${tally.line()}\n`), intervalSeconds * 1000);
  timer.unref();
  return {
    tally,
    emit: (event) => {
      tally.emit(event);
      if (event.type === 'staged')
        stream.write(
          `migrate: staged ${event.accounts} accounts (${event.invalid} invalid), ${event.orphans} accounts with ` +
            `records only\n`,
        );
      if (event.type === 'sorting') stream.write(`migrate: ${sortingLine(event)}\n`);
      if (event.type === 'stopping' && event.reason !== 'finished')
        stream.write(`migrate: stopping (${event.reason})${event.detail ? `: ${event.detail}` : ''}\n`);
    },
    stop: () => clearInterval(timer),
  };
}

function barsReporter(tally: ProgressTally, stream: NodeJS.WriteStream): ProgressReporter & { tally: ProgressTally } {
  const multibar = new cliProgress.MultiBar(
    {
      stream,
      format: ' {label} |{bar}| {value}/{total} {rate}/s ETA {eta_formatted}',
      hideCursor: true,
      clearOnComplete: false,
      etaBuffer: 50,
      fps: 5,
    },
    cliProgress.Presets.shades_classic,
  );
  const bars = new Map<ProgressStep, cliProgress.SingleBar>();
  const refresh = (): void => {
    const seconds = Math.max(0.001, (Date.now() - tally.startedAt) / 1000);
    for (const step of PROGRESS_STEPS) {
      if (tally.totals[step] === 0 && tally.done[step] === 0) continue;
      let bar = bars.get(step);
      if (bar === undefined) {
        bar = multibar.create(tally.totals[step], 0, { label: STEP_LABELS[step].padEnd(14), rate: '0' });
        bars.set(step, bar);
      }
      bar.setTotal(Math.max(tally.totals[step], tally.done[step]));
      bar.update(tally.done[step], { rate: (tally.done[step] / seconds).toFixed(1) });
    }
  };
  const timer = setInterval(refresh, 200);
  timer.unref();
  let stopped = false;
  return {
    tally,
    emit: (event: EngineEvent) => {
      tally.emit(event);
      if (event.type === 'sorting') multibar.log(`${sortingLine(event)}\n`);
      if (event.type === 'stopping' && event.reason !== 'finished')
        multibar.log(`stopping (${event.reason})${event.detail ? `: ${event.detail}` : ''}\n`);
    },
    stop: () => {
      // Idempotent: the command stops it before printing the summary and again when closing.
      if (stopped) return;
      stopped = true;
      clearInterval(timer);
      refresh();
      multibar.stop();
    },
  };
}

function sortingLine(event: Extract<EngineEvent, { type: 'sorting' }>): string {
  const files = event.files.map(({ file, line, reason }) =>
    line !== undefined ? `${file} (out of order at line ${line})` : `${file} (${reason ?? 'order not proven'})`,
  );
  return `sorting ${files.join(', ')} by external account number on disk; nothing is sent before every file is in order`;
}
