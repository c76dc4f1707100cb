import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, watch, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.js';
import { writeE2eExport, type E2eExport } from './export.js';
import { expectExactState, push, ROOT } from './helpers.js';

// Signals at every phase of a push (README "Exit codes": SIGINT/SIGTERM, in-flight requests get 10 s): each try
// starts a push with an NDJSON log, sends the signal the moment the log shows the phase (never after a sleep), and
// requires the process to be gone within the grace period with exit 130, then a rerun to end exact on the sandbox.
// One test file per phase (test/e2e/signals-*.test.ts), 12 tries each, SIGTERM, SIGINT and SIGHUP (a closed ssh
// session, handled as SIGTERM) in turn.

/**
 * Tries per phase: the signal takes turns by the try's index modulo 3 and a phase's trigger by the index modulo 4
 * (`reading`, the sending phase's), so 12 tries run every combination once, each signal with each trigger at least
 * twice; a 13th try would be the first again, with the same signal, trigger and export.
 */
const TRIES = 12;
/** Taken in turn by the tries. */
const SIGNALS: readonly NodeJS.Signals[] = ['SIGTERM', 'SIGINT', 'SIGHUP'];

const BIN = join(ROOT, 'bin', 'migrate.js');
/** docs/commands.md: in-flight requests get 10 s; a second's start-up and closing on a loaded machine beside it. */
export const GRACE_MS = 11_000;

export type LogLine = Record<string, unknown>;

export interface Interrupted {
  code: number | null;
  signal: NodeJS.Signals | null;
  stderr: string;
  /** Whether it was still running when the grace period ended (it is then killed). */
  hung: boolean;
  /** The log line the signal was sent on. */
  at: LogLine | undefined;
}

/**
 * `migrate push` with `--log-file`; `signal` is sent once `when` holds for a line of the log (watched as it is written),
 * and the process must end within GRACE_MS of it.
 */
export function pushInterrupted(
  sandbox: RunningSandbox,
  input: { exportDir: string; state: string; log: string; signal: NodeJS.Signals; when: (line: LogLine) => boolean },
): Promise<Interrupted> {
  writeFileSync(input.log, '', { mode: 0o600 });
  const args = [BIN, 'push', input.exportDir, '--base-url', sandbox.url, '--state', input.state];
  const child = spawn(process.execPath, [...args, '--log-file', input.log, '--quiet'], {
    env: { ...process.env, MIGRATE_API_KEY: sandbox.apiKey, NO_COLOR: '1' },
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  child.stdout.resume();
  let at: LogLine | undefined;
  let hung = false;
  let deadline: NodeJS.Timeout | undefined;
  let read = 0;
  const look = (): void => {
    if (at !== undefined) return;
    // Whole lines not looked at yet: `when` sees each line once.
    const lines = readFileSync(input.log, 'utf8').split('\n').slice(0, -1);
    at = lines
      .slice(read)
      .map((line) => JSON.parse(line) as LogLine)
      .find(input.when);
    read = lines.length;
    if (at === undefined) return;
    child.kill(input.signal);
    deadline = setTimeout(() => {
      hung = true;
      child.kill('SIGKILL');
    }, GRACE_MS);
  };
  const watcher = watch(input.log, look);
  return new Promise((resolve) => {
    child.on('close', (code, signal) => {
      watcher.close();
      clearTimeout(deadline);
      resolve({ code, signal, stderr, hung, at });
    });
  });
}

export interface Phase {
  /** What the export's prefix of account numbers starts with (unique per phase: the sandbox is the file's own). */
  prefix: string;
  /** When the signal goes, given the try's index (several triggers of one phase take turns). */
  when: (index: number) => (line: LogLine) => boolean;
  shape?: (data: E2eExport) => void;
  accounts?: number;
  /** The sandbox's processing time (default 20 ms). */
  processingMs?: number;
}

/** The phase's 20 tries, against a sandbox of its own, a few at a time. */
export function describePhase(title: string, phase: Phase): void {
  let root: string;
  let sandbox: RunningSandbox;
  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'signals-'));
    sandbox = await startSandbox({ processingMs: phase.processingMs ?? 20 });
  });
  afterAll(async () => {
    await sandbox.close();
    rmSync(root, { recursive: true, force: true });
  });
  describe(`a signal while ${title}`, () => {
    it.concurrent.each(Array.from({ length: TRIES }, (_, index) => index))(
      'try %i: exits within the grace period; the rerun is exact',
      async (index) => {
        await tryPhase(
          sandbox,
          join(root, `try-${index}`),
          {
            prefix: `${phase.prefix}${index}`,
            signal: SIGNALS[index % SIGNALS.length] ?? 'SIGTERM',
            when: phase.when(index),
            ...(phase.shape ? { shape: phase.shape } : {}),
            ...(phase.accounts === undefined ? {} : { accounts: phase.accounts }),
          },
          expect,
        );
      },
    );
  });
}

/** Holds at the `count`th log line for which `match` holds. */
export function nth(count: number, match: (line: LogLine) => boolean): (line: LogLine) => boolean {
  let seen = 0;
  return (line) => match(line) && (seen += 1) === count;
}

/** The first export file starting to be read, or (odd pairs of tries) the notes file. */
export function reading(index: number): (line: LogLine) => boolean {
  return (line) => line['event'] === 'reading' && (index % 4 < 2 || String(line['file']).startsWith('notes'));
}

/** The notes and transactions in reverse order: both are sorted on disk before anything is sent. */
export function outOfOrder(data: E2eExport): void {
  for (const name of ['notes.csv', 'transactions.csv']) {
    const [header, ...rows] = readFileSync(join(data.dir, name), 'utf8').trimEnd().split('\n');
    writeFileSync(join(data.dir, name), `${[header, ...rows.reverse()].join('\n')}\n`);
  }
}

/** One try: a fresh export and state directory, the push interrupted at the phase, then the rerun, exact. */
async function tryPhase(
  sandbox: RunningSandbox,
  dir: string,
  options: {
    prefix: string;
    signal: NodeJS.Signals;
    when: (line: LogLine) => boolean;
    accounts?: number;
    /** Changes the export before the push (another format for the notes, rows out of order). */
    shape?: (data: E2eExport) => void;
  },
  expectOf: typeof expect,
): Promise<Interrupted> {
  const data = writeE2eExport(dir, options.accounts ?? 6, options.prefix, 'spec', { clean: true });
  options.shape?.(data);
  const state = join(dir, 'state');
  const interrupted = await pushInterrupted(sandbox, {
    exportDir: data.dir,
    state,
    log: join(dir, 'push.ndjson'),
    signal: options.signal,
    when: options.when,
  });
  expectOf(interrupted.at, `no log line for the phase: ${interrupted.stderr}`).toBeDefined();
  expectOf(interrupted.hung, `still running ${GRACE_MS} ms after ${options.signal}: ${interrupted.stderr}`).toBe(false);
  expectOf(interrupted.code, interrupted.stderr).toBe(130);
  const rerun = await push(sandbox, data.dir, state);
  expectOf(rerun.code, rerun.stderr).toBe(0);
  await expectExactState(sandbox, data, state, expectOf);
  return interrupted;
}

/** The notes file as a JSON array (`json`) or one object per line (`ndjson`), with the same notes. */
export function notesAs(format: 'json' | 'ndjson'): (data: E2eExport) => void {
  return (data) => {
    const [header, ...rows] = readFileSync(join(data.dir, 'notes.csv'), 'utf8').trimEnd().split('\n');
    const columns = (header ?? '').split(',');
    const records = rows.map((row) => Object.fromEntries(row.split(',').map((cell, index) => [columns[index], cell])));
    // Blank space between records (JSON allows it): the file takes a while to read, the records are the same.
    const padding = ' '.repeat(64 * 1024);
    const text =
      format === 'json'
        ? `[${records.map((record) => `${padding}${JSON.stringify(record)}`).join(',\n')}]\n`
        : records.map((record) => `${JSON.stringify(record)}\n${'\n'.repeat(64 * 1024)}`).join('');
    writeFileSync(join(data.dir, `notes.${format}`), text);
    rmSync(join(data.dir, 'notes.csv'));
  };
}
