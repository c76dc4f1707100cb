import cliProgress from 'cli-progress';
import type { EngineEvent, EventSink } from '../../engine/index.js';
import { RUN_DEFAULTS } from '../../defaults.js';
import { visibleText } from '../../errors.js';
import { formatDuration } from './duration.js';
import { PROGRESS_STEPS, ProgressTally, STEP_LABELS, type Count, type ProgressView } from './progress-tally.js';
import { monotonicNow } from '../../clock.js';

export interface ProgressReporter extends EventSink {
  /** Stops the bars or the timer; prints nothing more. */
  stop(): void;
  readonly tally: ProgressTally;
}

export interface ProgressOptions {
  /** Where progress goes (stderr: stdout is kept for --json). */
  stream: Pick<NodeJS.WriteStream, 'write'> & { isTTY?: boolean };
  /** Seconds between plain lines when the stream is not a terminal (--progress-interval). */
  intervalSeconds?: number;
  /** --quiet: no progress at all (the summary is printed by the command). */
  quiet?: boolean;
  /** Whether the run waits for processing (false with --no-wait): what its rate counts. */
  wait?: boolean;
  /** Clock and timer (tests drive both; no test waits on the wall clock). */
  now?: () => number;
  every?: (tick: () => void, ms: number) => { stop: () => void };
}

const realEvery = (tick: () => void, ms: number): { stop: () => void } => {
  const timer = setInterval(tick, ms);
  timer.unref();
  return { stop: () => clearInterval(timer) };
};

/**
 * Progress of a push: on a terminal, one bar per step with the run's rate and ETA; otherwise one
 * short plain line per interval. Totals say "so far" while they only grow, "~" while they
 * extrapolate the unread export; a rate or ETA that cannot be computed is left out.
 */
export function createProgressReporter(options: ProgressOptions): ProgressReporter {
  const now = options.now ?? monotonicNow;
  const tally = new ProgressTally({ now, wait: options.wait ?? true });
  if (options.quiet) return { tally, emit: (event) => tally.emit(event), stop: () => undefined };
  const every = options.every ?? realEvery;
  return options.stream.isTTY
    ? barsReporter(tally, options.stream as NodeJS.WriteStream, every)
    : linesReporter(tally, options.stream, options.intervalSeconds ?? RUN_DEFAULTS.progressIntervalSeconds, every);
}

const format = (n: number): string => Math.round(n).toLocaleString('en-GB');

/** `1,200/5,000`, `1,200/~5,000` (extrapolated), `1,200/1,300 so far` (the export is still being read). */
export function countText(count: Count): string {
  if (count.soFar) return `${format(count.done)}/${format(count.total)} so far`;
  return `${format(count.done)}/${count.estimated ? '~' : ''}${format(count.total)}`;
}

/** `12.3 accounts/s, ETA 4m10s`; the rate or ETA alone when the other is unknown; '' when neither is. */
export function rateText(view: ProgressView, unit: string): string {
  const parts: string[] = [];
  if (view.ratePerSecond !== undefined) parts.push(`${view.ratePerSecond.toFixed(1)} ${unit}/s`);
  const eta = view.etaSeconds === undefined ? undefined : formatDuration(view.etaSeconds);
  if (eta !== undefined) parts.push(`ETA ${view.accounts.estimated ? '~' : ''}${eta}`);
  return parts.join(', ');
}

/** `24% of ~5,000 accounts` while the export's size is known, else `1,200 accounts so far`. */
function readingText(reading: NonNullable<ProgressView['reading']>): string {
  const { read, of } = reading;
  if (of === undefined || of === 0) return `${format(read)} accounts so far`;
  return `${readShare(read, of)}% of ~${format(of)} accounts`;
}

/** Below 100 until the read has ended: the size is an estimate. */
const readShare = (read: number, of: number): number => Math.min(99, Math.floor((read / of) * 100));

/**
 * One short line (about 110 characters, 150 at millions of accounts): elapsed, how much of the export is read, accounts
 * and records, the rate and ETA when they can be computed, problems. While the export's size is
 * unknown the totals are marked "so far" once, for both.
 */
export function progressLine(view: ProgressView, wait: boolean): string {
  const elapsed = formatDuration(view.elapsedSeconds) ?? '0s';
  let head = `[${elapsed}] `;
  if (view.sorting) head += `sorting ${view.sorting.join(', ')} before sending; `;
  else if (view.reading?.of) head += `export ${readShare(view.reading.read, view.reading.of)}% read; `;
  else if (view.reading) head += 'reading the export; so far: ';
  const bare = { ...view.accounts, soFar: false };
  const counts = [`accounts ${wait ? 'processed' : 'created'} ${countText(bare)}`];
  if (view.records.total > 0) counts.push(`records ${countText({ ...view.records, soFar: false })}`);
  const rate = rateText(view, wait ? 'accounts' : 'creates');
  return `${head}${counts.join(', ')}${rate ? `; ${rate}` : ''}; ${view.problems} problems${unansweredText(view)}`;
}

/** `, 8 requests unanswered for over a minute`, or '' when none is. */
function unansweredText(view: ProgressView): string {
  if (view.unanswered === 0) return '';
  return `, ${format(view.unanswered)} request${view.unanswered === 1 ? '' : 's'} unanswered for over a minute`;
}

function linesReporter(
  tally: ProgressTally,
  stream: ProgressOptions['stream'],
  intervalSeconds: number,
  every: NonNullable<ProgressOptions['every']>,
): ProgressReporter {
  const timer = every(
    () => stream.write(`migrate: ${progressLine(tally.view(), tally.wait)}\n`),
    intervalSeconds * 1000,
  );
  return {
    tally,
    emit: (event) => {
      tally.emit(event);
      const notice = noticeOf(event);
      if (notice !== undefined) stream.write(`migrate: ${notice}\n`);
    },
    stop: () => timer.stop(),
  };
}

/** The rare lines printed when they happen: staged, sorting files, stopping early. */
function noticeOf(event: EngineEvent): string | undefined {
  if (event.type === 'staged')
    return `staged ${event.accounts} accounts (${event.invalid} invalid), ${event.orphans} accounts with records only`;
  if (event.type === 'sorting') return sortingLine(event);
  if (event.type === 'stopping' && event.reason !== 'finished') return stoppingLine(event);
  return undefined;
}

/** `stopping (fatal): ...`, the detail (it may quote the service) with its control characters shown. */
function stoppingLine(event: Extract<EngineEvent, { type: 'stopping' }>): string {
  return `stopping (${event.reason})${event.detail ? `: ${visibleText(event.detail)}` : ''}`;
}

const GAUGE = 24;

/** A bar drawn here (cli-progress only places the lines): empty dots while a total only grows. */
function gauge(count: Count): string {
  if (count.soFar || count.total === 0) return '·'.repeat(GAUGE);
  const filled = Math.min(GAUGE, Math.round((count.done / count.total) * GAUGE));
  return '█'.repeat(filled) + '░'.repeat(GAUGE - filled);
}

function barsReporter(
  tally: ProgressTally,
  stream: NodeJS.WriteStream,
  every: NonNullable<ProgressOptions['every']>,
): ProgressReporter {
  const multibar = new cliProgress.MultiBar(
    { stream, format: ' {label} |{gauge}| {count} {extra}', hideCursor: true, clearOnComplete: false, fps: 5 },
    cliProgress.Presets.shades_classic,
  );
  const bars = new Map<string, cliProgress.SingleBar>();
  const show = (key: string, payload: Record<string, string>): void => {
    const bar = bars.get(key) ?? multibar.create(1, 0, payload);
    bars.set(key, bar);
    bar.update(0, payload);
  };
  const refresh = (): void => {
    const view = tally.view();
    const lead = tally.wait ? 'processed' : 'created';
    const label = 'export read'.padEnd(14);
    if (view.reading || view.sorting)
      show('export', {
        label,
        gauge: gauge({ done: view.reading?.read ?? 0, total: view.reading?.of ?? 0, estimated: true, soFar: false }),
        count: view.sorting ? `sorting ${view.sorting.join(', ')}` : view.reading ? readingText(view.reading) : '',
        extra: '',
      });
    else if (tally.staging !== undefined) {
      // The whole export is read: drawn whole (not the last frame of its reading, left on the screen as it was
      // drawn), and drawn even where the read ended before the first frame.
      const read = tally.staging.accounts;
      const count = `${format(read)} account${read === 1 ? '' : 's'}`;
      show('export', { label, gauge: gauge({ done: 1, total: 1, estimated: false, soFar: false }), count, extra: '' });
    }
    for (const step of PROGRESS_STEPS) {
      const count = view.steps[step];
      if (count.total === 0 && count.done === 0) continue;
      const extra = step === lead ? rateText(view, tally.wait ? 'accounts' : 'creates') + unansweredText(view) : '';
      show(step, { label: STEP_LABELS[step].padEnd(14), gauge: gauge(count), count: countText(count), extra });
    }
  };
  const timer = every(refresh, 200);
  let stopped = false;
  return {
    tally,
    emit: (event: EngineEvent) => {
      tally.emit(event);
      if (event.type === 'sorting') multibar.log(`${sortingLine(event)}\n`);
      if (event.type === 'stopping' && event.reason !== 'finished') multibar.log(`${stoppingLine(event)}\n`);
    },
    stop: () => {
      // Idempotent: the command stops it before printing the summary and again when closing.
      if (stopped) return;
      stopped = true;
      timer.stop();
      refresh();
      multibar.stop();
    },
  };
}

function sortingLine(event: Extract<EngineEvent, { type: 'sorting' }>): string {
  const files = event.files.map(({ file, line, reason }) =>
    line !== undefined ? `${file} (out of order at line ${line})` : `${file} (${reason ?? 'order not proven'})`,
  );
  return `sorting ${files.join(', ')} by external account number; nothing is sent before every file is in order`;
}
