import { spawn } from 'node:child_process';
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { openLedgerReader } from '../../src/ledger/index.js';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.js';
import { ROOT, SAMPLE_OPEN_PERIOD, writesReceived, type RunResult } from './helpers.js';
import { runPush } from './run-push.js';

// Every schedule and duration of a push runs on a monotonic clock (docs/limits.md "Clocks"): the real binary, its wall
// clock stepped an hour back or two hours forward (an NTP step) once the sandbox has a create, by an injected clock
// (wall-clock-step.mjs; the machine's clock is never touched). Back, polls scheduled on the wall clock waited an hour and
// the summary said "(-3300.4s)"; forward, the run recorded 7,209 s and its pace with it.

const SAMPLE = join(ROOT, 'fixtures', 'sample');
const STEPPER = join(ROOT, 'test', 'e2e', 'wall-clock-step.mjs');
let root: string;
let sandbox: RunningSandbox | undefined;
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'wall-clock-'));
});
afterEach(async () => {
  await sandbox?.close();
  sandbox = undefined;
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

/**
 * push with the stepping wall clock loaded; SIGUSR2 steps it once the sandbox has a create. Killed after 90 s: the old
 * code stalled for an hour, and the test fails on its exit code rather than leave the child running.
 */
function pushStepped(service: RunningSandbox, state: string, stepMs: number): Promise<RunResult> {
  const args = [join(ROOT, 'bin', 'migrate.js'), 'push', SAMPLE, '--base-url', service.url, '--state', state];
  const child = spawn(process.execPath, [...args, '--concurrency', '4', '--wait-timeout', '60'], {
    cwd: ROOT,
    env: {
      ...process.env,
      MIGRATE_API_KEY: service.apiKey,
      NO_COLOR: '1',
      // After any clock the run itself is under (the stepper steps the wall clock it finds).
      NODE_OPTIONS: `${process.env['NODE_OPTIONS'] ?? ''} --import ${pathToFileURL(STEPPER).href}`.trim(),
      WALL_CLOCK_STEP_MS: String(stepMs),
    },
  });
  let [stdout, stderr] = ['', ''];
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const watch = setInterval(() => {
    if (writesReceived(service) === 0) return;
    clearInterval(watch);
    child.kill('SIGUSR2');
  }, 10);
  const bound = setTimeout(() => child.kill('SIGKILL'), 90_000);
  return new Promise((resolve) => {
    child.on('close', (code, signal) => {
      clearInterval(watch);
      clearTimeout(bound);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

describe('the wall clock stepped during a push', () => {
  it.each([
    ['back an hour', -3_600_000],
    ['forward two hours', 7_200_000],
  ])(
    '%s: every account is done, exit 0, and the run lasted what it lasted',
    { timeout: 120_000 },
    async (_name, stepMs) => {
      sandbox = await startSandbox({ processingMs: 300, openPeriodStart: SAMPLE_OPEN_PERIOD });
      const service = sandbox;
      const state = join(root, `step-${stepMs}`);
      const run = await pushStepped(service, state, stepMs);
      expect(run.code, run.stderr).toBe(0);
      const seconds = Number(/ \((-?[\d.]+)s[,)]/.exec(run.stdout)?.[1]);
      expect(seconds, run.stdout).toBeGreaterThan(0);
      expect(seconds, run.stdout).toBeLessThan(600);
      const reader = openLedgerReader(state);
      const counts = reader.read.counts().accounts;
      const rate = reader.read.runs(1)[0]?.counts?.['accountsPerSecond'];
      reader.close();
      expect(counts).toEqual({ done: 50 });
      expect(rate).toBeGreaterThan(50 / 600);
    },
  );
});

describe('the wall clock stepped between two runs', () => {
  it(
    'checks a run left due an hour ahead are due within the longest poll delay: the next run ends, exit 0',
    {
      timeout: 150_000,
    },
    async () => {
      sandbox = await startSandbox({ processingMs: 0, openPeriodStart: SAMPLE_OPEN_PERIOD });
      const state = join(root, 'between');
      const first = await runPush(sandbox.url, state, { MIGRATE_API_KEY: sandbox.apiKey }, [
        '--limit',
        '5',
        '--no-wait',
      ]);
      expect(first.code, first.stderr).toBe(0);
      // As a run whose wall clock was an hour ahead would have left them.
      const db = new Database(join(state, 'ledger.sqlite'));
      const moved = db
        .prepare(`UPDATE accounts SET next_check_at = next_check_at + 3600000 WHERE state = 'scheduled'`)
        .run().changes;
      db.close();
      expect(moved).toBe(5);
      const second = await runPush(
        sandbox.url,
        state,
        { MIGRATE_API_KEY: sandbox.apiKey },
        ['--limit', '5', '--wait-timeout', '60'],
        90_000,
      );
      expect(second.code, second.stderr).toBe(0);
      const reader = openLedgerReader(state);
      const counts = reader.read.counts().accounts;
      reader.close();
      expect(counts['done']).toBe(5);
    },
  );
});
