import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// One `migrate push` as a child process, measured from spawn to exit (the benches of the push and of the shaping
// stage): its CPU time and peak RSS come from cpu-hook.mjs, its phases from its NDJSON log; optionally stopped
// (SIGINT) a while after the service saw its first request.

const CPU_HOOK = join(import.meta.dirname, 'cpu-hook.mjs');

export interface LogEvent {
  time: string;
  event: string;
  ms?: number;
}

export interface MeasuredPush {
  exitCode: number | null;
  /** Epoch ms of the spawn and of the exit. */
  startedAt: number;
  endedAt: number;
  /** The first 4,000 characters of its stderr. */
  stderr: string;
  /** Its CPU time in µs at exit, its peak RSS, and [epoch ms, CPU µs so far] every 10 ms (cpu-hook.mjs). */
  usage: { user: number; system: number; maxRssKb: number; samples: Array<[number, number]> };
  /** Its log's events, in order. */
  events: LogEvent[];
}

export interface MeasuredPushOptions {
  bin: string;
  /** After `push`: the export directory, --base-url and any other flag (the state, log and --json are added). */
  args: string[];
  apiKey: string;
  /** Stop it `ms` after the service's first request (epoch ms, null before it), asked every 250 ms. */
  stopAfter?: { ms: number; firstAt: () => Promise<number | null> };
}

export async function measuredPush(options: MeasuredPushOptions): Promise<MeasuredPush> {
  const state = mkdtempSync(join(tmpdir(), 'bench-push-state-'));
  const usageFile = join(state, 'usage.json');
  const logFile = join(state, 'push.ndjson');
  const startedAt = Date.now();
  const args = ['--import', CPU_HOOK, options.bin, 'push', ...options.args, '--state', state, '--log-file', logFile];
  const child = spawn(process.execPath, [...args, '--json'], {
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { ...process.env, MIGRATE_API_KEY: options.apiKey, BENCH_USAGE_FILE: usageFile },
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    if (stderr.length < 4000) stderr += chunk.toString();
  });
  const stopper = stopAfterFirst(options.stopAfter, () => child.kill('SIGINT'));
  const exitCode = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  const endedAt = Date.now();
  clearInterval(stopper);
  try {
    const usage = JSON.parse(readFileSync(usageFile, 'utf8')) as MeasuredPush['usage'];
    const events = readFileSync(logFile, 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as LogEvent);
    return { exitCode, startedAt, endedAt, stderr, usage, events };
  } finally {
    rmSync(state, { recursive: true, force: true });
  }
}

/** One question at a time: a busy sandbox answers late, and every waiting listener would take the same line. */
function stopAfterFirst(stop: MeasuredPushOptions['stopAfter'], kill: () => void): NodeJS.Timeout | undefined {
  if (stop === undefined) return undefined;
  let asking = false;
  const timer = setInterval(() => {
    if (asking) return;
    asking = true;
    void stop.firstAt().then((at) => {
      asking = false;
      // Once: a second SIGINT stops the push at once, before it writes its usage.
      if (at !== null && Date.now() - at > stop.ms) {
        clearInterval(timer);
        kill();
      }
    });
  }, 250);
  return timer;
}

/** The child's CPU time in µs by epoch ms `at` (its last sample at or before then; NaN when `at` is). */
export function cpuMicrosAt(usage: MeasuredPush['usage'], at: number): number {
  if (Number.isNaN(at)) return NaN;
  let micros = 0;
  for (const [time, cpu] of usage.samples) {
    if (time > at) break;
    micros = cpu;
  }
  return micros;
}

/** Epoch ms of the first event of that name in the log (NaN when there is none). */
export function eventAt(events: LogEvent[], name: string): number {
  return Date.parse(events.find((event) => event.event === name)?.time ?? '');
}
