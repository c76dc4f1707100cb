import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openLedgerReader } from '../../src/ledger/index.js';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.js';
import { DIALECTS } from '../../src/schema/index.js';
import { writeE2eExport } from './export.js';
import {
  expectExactState,
  ledgerItems,
  maxRestInFlight,
  push,
  SAMPLE_PERIOD_FLAGS,
  writesReceived,
} from './helpers.js';

// `migrate push` end to end: the real binary as a child process against the sandbox over real
// HTTP, asserting the sandbox's exact final state.

let root: string;
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'push-e2e-'));
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** Accounts whose payment instruction the ledger left `unknown` (none: a resend settles every lost answer). */
function noUnknownInstruction(state: string, numbers: string[]): string[] {
  return numbers.filter(
    (number) =>
      ledgerItems(state, 'ACME', number).find((item) => item.kind === 'payment_instruction')?.state === 'unknown',
  );
}

function workspace(name: string): { dir: string; state: string } {
  const dir = join(root, name);
  return { dir, state: join(dir, 'state') };
}

// Every test runs in both dialects (docs/real-platform.md): the spec's wire format, and the real
// platform's against the sandbox speaking it (task_params, money as strings, meter points).
describe.each(DIALECTS)('migrate push (%s dialect)', (dialect) => {
  const on = ['--dialect', dialect];
  let sandbox: RunningSandbox | undefined;
  afterAll(async () => sandbox?.close());

  it('lands every valid account exactly once through 500s, 429s, dropped and ambiguous connections and short tokens; a rerun sends no POST', async () => {
    sandbox = await startSandbox({
      dialect,
      processingMs: 150,
      failRate: 0.06,
      rateLimitRate: 0.01,
      retryAfterSeconds: 0,
      dropRate: 0.04,
      ambiguousRate: 0.04,
      tokenTtlSeconds: 2,
      latencyMs: 2,
      seed: 7,
      flakyAttempts: 1,
    });
    const { dir, state } = workspace(`faults-${dialect}`);
    const data = writeE2eExport(dir, 40, 'E2E', dialect);
    const first = await push(sandbox, data.dir, state, [...on, '--concurrency', '4']);
    expect(first.code, first.stderr).toBe(5); // invalid and ERRORED accounts, a refused payment instruction
    expect(first.stdout).toMatch(/held back: invalid \(fix the export\)\s+4/);
    expect(maxRestInFlight(sandbox)).toBeLessThanOrEqual(4);
    expect(maxRestInFlight(sandbox)).toBeGreaterThan(1);
    await expectExactState(sandbox, data, state, expect);
    for (const number of data.failingPaymentInstructions) {
      // Refused by the vendor (400); one whose answer was lost is resent and refused then.
      expect(ledgerItems(state, 'ACME', number).find((item) => item.kind === 'payment_instruction')?.state).toBe(
        'failed',
      );
    }
    expect(noUnknownInstruction(state, [...data.paymentInstructions.keys()])).toEqual([]);

    sandbox.control.setFaults({ failRate: 0, rateLimitRate: 0, dropRate: 0, ambiguousRate: 0 });
    sandbox.inspect.resetLog();
    const rerun = await push(sandbox, data.dir, state, [...on, '--concurrency', '4', '--json']);
    expect(rerun.code, rerun.stderr).toBe(5);
    expect(writesReceived(sandbox)).toBe(0);
    const summary = JSON.parse(rerun.stdout) as { accounts: Record<string, number> };
    expect(summary.accounts).toMatchObject({
      done: data.valid.length,
      invalid: data.invalid.length,
      errored: data.errored.length,
    });
    await expectExactState(sandbox, data, state, expect);
  });

  it('survives SIGKILL at random moments: after several crashes a run completes and the state is exact', async () => {
    const sandbox = await startSandbox({ dialect, processingMs: 100, latencyMs: 15, seed: 11 });
    try {
      const { dir, state } = workspace(`crash-${dialect}`);
      const data = writeE2eExport(dir, 40, 'CRASH', dialect);
      let seed = 1;
      for (let attempt = 0; attempt < 4; attempt += 1) {
        seed = (seed * 48271) % 2147483647;
        const result = await push(sandbox, data.dir, state, [...on, '--concurrency', '3'], {
          afterMs: 400 + (seed % 900),
          signal: 'SIGKILL',
        });
        expect(result.signal === 'SIGKILL' || result.code === 5, result.stderr).toBe(true);
      }
      const final = await push(sandbox, data.dir, state, [...on, '--concurrency', '3']);
      expect(final.code, final.stderr).toBe(5);
      await expectExactState(sandbox, data, state, expect);
      expect(noUnknownInstruction(state, [...data.paymentInstructions.keys()])).toEqual([]);
    } finally {
      await sandbox.close();
    }
  });

  it('SIGTERM stops taking work and exits 130 with a consistent ledger; the next run finishes', async () => {
    const sandbox = await startSandbox({ dialect, processingMs: 100, latencyMs: 20, seed: 5 });
    try {
      const { dir, state } = workspace(`term-${dialect}`);
      const data = writeE2eExport(dir, 30, 'TERM', dialect);
      const before = sandbox.inspect.requestCount();
      // In the middle of the run: once it has made ten requests (of some hundred).
      const stopped = await push(sandbox, data.dir, state, [...on, '--concurrency', '2'], {
        afterMs: 0,
        signal: 'SIGTERM',
        when: () => sandbox.inspect.requestCount() > before + 10,
      });
      expect(stopped.code, stopped.stderr).toBe(130);
      const reader = openLedgerReader(state);
      expect(reader.read.runs(1)[0]).toMatchObject({ status: 'interrupted', exitCode: 130 });
      reader.close();
      const final = await push(sandbox, data.dir, state, [...on, '--concurrency', '4']);
      expect(final.code, final.stderr).toBe(5);
      await expectExactState(sandbox, data, state, expect);
    } finally {
      await sandbox.close();
    }
  });

  it('a second run on the same state directory exits 4 at once and changes nothing', async () => {
    // The service's time stands still until the second run has ended, so the first cannot finish before it (its
    // accounts stay in processing); the second starts once the first has sent a request, so holds the lock.
    let frozen = true;
    const start = Date.now();
    let firstRequest: () => void = () => undefined;
    const requested = new Promise<void>((resolve) => (firstRequest = resolve));
    const sandbox = await startSandbox(
      { dialect, processingMs: 200, latencyMs: 30, seed: 3, log: () => firstRequest() },
      { clock: () => (frozen ? start : Date.now() + 1_000) },
    );
    try {
      const { dir, state } = workspace(`lock-${dialect}`);
      const data = writeE2eExport(dir, 20, 'LOCK', dialect);
      let firstEnded = false;
      const firstRun = push(sandbox, data.dir, state, [...on, '--concurrency', '2']).then((result) => {
        firstEnded = true;
        return result;
      });
      await requested;
      const second = await push(sandbox, data.dir, state, [...on, '--concurrency', '2']);
      expect(second.code).toBe(4);
      expect(firstEnded, 'the second run ends while the first still runs: it does not wait for the lock').toBe(false);
      expect(second.stderr).toMatch(/another migrate run \(pid \d+\) holds the state directory/);
      frozen = false;
      const first = await firstRun;
      expect(first.code, first.stderr).toBe(5);
      const reader = openLedgerReader(state);
      expect(reader.read.runs()).toHaveLength(1);
      reader.close();
      await expectExactState(sandbox, data, state, expect);
    } finally {
      await sandbox.close();
    }
  });

  it('stops with exit 3 when the supplier is paused or the API key is refused, sending no account', async () => {
    const sandbox = await startSandbox({ dialect, processingMs: 50, seed: 2 });
    try {
      const { dir, state } = workspace(`fatal-${dialect}`);
      const data = writeE2eExport(dir, 10, 'FATAL', dialect);
      sandbox.control.setSupplierStatus('ACME', 'Paused');
      const paused = await push(sandbox, data.dir, state, [...on, '--concurrency', '2']);
      expect(paused.code, paused.stderr).toBe(3);
      expect(paused.stderr).toMatch(/not accepting migrations/);
      expect(sandbox.inspect.accountCount()).toBe(0);
      sandbox.control.setSupplierStatus('ACME', 'Ongoing');
      const refused = await push({ ...sandbox, apiKey: 'wrong-key' }, data.dir, state, [...on, '--concurrency', '2']);
      expect(refused.code, refused.stderr).toBe(3);
      expect(refused.stderr).toMatch(/authentication failed/);
      // Where the key came from, so the operator knows which one to mend.
      expect(refused.stderr).toContain('(the credentials came from MIGRATE_API_KEY)');
      expect(refused.stderr + refused.stdout).not.toContain('wrong-key');
      expect(sandbox.inspect.accountCount()).toBe(0);
      // One refused token request is the whole story: asked before anything is staged, said once, no summary of
      // accounts each failing on it.
      expect(refused.stdout).toBe('');
      expect(refused.stderr.match(/authentication failed/g)).toHaveLength(1);
      expect(refused.stderr).toContain('Nothing was staged or sent.');
      expect(refused.stderr).not.toMatch(/staged \d+ account/);
    } finally {
      await sandbox.close();
    }
  });

  it('--rate caps the requests started per second', async () => {
    const sandbox = await startSandbox({ dialect, processingMs: 20, seed: 4 });
    try {
      const { dir, state } = workspace(`rate-${dialect}`);
      const data = writeE2eExport(dir, 12, 'RATE', dialect);
      const result = await push(sandbox, data.dir, state, [...on, '--concurrency', '8', '--rate', '10', '--json']);
      expect(result.code, result.stderr).toBe(5);
      const requests = sandbox.inspect.requests().filter((entry) => !entry.path.includes('graphql')).length;
      expect(requests).toBeGreaterThan(40);
      // The client starts a request at most every 100 ms (the cap's exact spacing is tested on a virtual clock in
      // test/api): the run, by its own clock, lasts at least that long. Uncapped, it takes about a second here.
      const { duration_seconds: durationSeconds } = JSON.parse(result.stdout) as { duration_seconds: number };
      expect(durationSeconds).toBeGreaterThanOrEqual((requests - 1) / 10);
      await expectExactState(sandbox, data, state, expect);
    } finally {
      await sandbox.close();
    }
  });

  it('--sandbox pushes the fixture of its dialect to the built-in sandbox and exits 0', async () => {
    const { state } = workspace(`demo-${dialect}`);
    // The sample's transactions are dated in its own month (the kraken fixture's go to historical statements).
    const fixture =
      dialect === 'spec'
        ? { dir: 'fixtures/sample', accounts: 50, period: SAMPLE_PERIOD_FLAGS }
        : { dir: 'fixtures/kraken', accounts: 3, period: [] };
    const result = await push({ url: 'http://127.0.0.1:1', apiKey: 'unused' } as RunningSandbox, fixture.dir, state, [
      '--sandbox',
      ...fixture.period,
      ...on,
    ]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/push finished: everything done \(every account and record settled\)/);
    expect(result.stdout).toMatch(new RegExp(`done\\s+${fixture.accounts}`));
  });
});

describe('the dialect of a state directory', () => {
  it('is chosen once: switching it exits 2 with a clear message and sends nothing; a rerun without --dialect keeps it', async () => {
    const sandbox = await startSandbox({ dialect: 'kraken', processingMs: 20, seed: 9 });
    try {
      const { dir, state } = workspace('switch');
      const data = writeE2eExport(dir, 6, 'SWITCH', 'kraken');
      const first = await push(sandbox, data.dir, state, ['--dialect', 'kraken']);
      expect(first.code, first.stderr).toBe(5);
      sandbox.inspect.resetLog();
      const switched = await push(sandbox, data.dir, state, ['--dialect', 'spec']);
      expect(switched.code).toBe(2);
      expect(switched.stderr).toMatch(
        /--dialect asks for the spec dialect, but the state directory .* was pushed in the kraken dialect; a state directory keeps one dialect/,
      );
      expect(switched.stderr).not.toMatch(/\n\s+at /); // no stack trace
      expect(sandbox.inspect.requests()).toHaveLength(0);
      const reader = openLedgerReader(state);
      expect(reader.read.runs()).toHaveLength(1);
      reader.close();
      const rerun = await push(sandbox, data.dir, state, []);
      expect(rerun.code, rerun.stderr).toBe(5);
      expect(writesReceived(sandbox)).toBe(0);
      await expectExactState(sandbox, data, state, expect);
    } finally {
      await sandbox.close();
    }
  });
});
