import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.js';
import { writeE2eExport } from './export.js';
import { runMigrate } from './run-push.js';

// A create answered 201 whose import process never appears (a proxy or a queue lost it): after a bounded number of
// status checks finding no process, the create is sent again (docs/limits.md "A create whose import process never
// appears"). Through the real binary against a sandbox that loses creates after answering them.

let root: string;
let sandbox: RunningSandbox | undefined;
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'lost-create-'));
});
afterEach(async () => {
  await sandbox?.close();
  sandbox = undefined;
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

const CREATE_PATH = '/v2/data-import/accounts/';

function creates(running: RunningSandbox): { answered: number; lost: number } {
  const sent = running.inspect.requests().filter((entry) => entry.method === 'POST' && entry.path === CREATE_PATH);
  return {
    answered: sent.filter((entry) => entry.status === 201).length,
    lost: sent.filter((entry) => entry.fault === 'lost_create').length,
  };
}

function push(running: RunningSandbox, dir: string, state: string, extra: string[] = []) {
  return runMigrate(
    [
      'push',
      dir,
      '--base-url',
      running.url,
      '--state',
      state,
      '--lost-create-checks',
      '2',
      '--wait-timeout',
      '20',
    ].concat(extra),
    { MIGRATE_API_KEY: running.apiKey },
  );
}

describe('a create answered 201 whose import process never appears', () => {
  it('is sent again after the bounded checks: lost for some accounts once, every account ends created exactly once', async () => {
    sandbox = await startSandbox({ processingMs: 0, lostCreateShare: 0.5, lostCreateOnce: true });
    const data = writeE2eExport(join(root, 'once'), 12, 'ONCE', 'spec', { clean: true });
    const state = join(root, 'once-state');
    const log = join(root, 'once.ndjson');
    const run = await push(sandbox, data.dir, state, ['--log-file', log]);
    expect(run.code, run.stderr).toBe(0);
    const { answered, lost } = creates(sandbox);
    expect(lost).toBeGreaterThan(0);
    expect(lost).toBeLessThan(12);
    // Every account: one create that landed, plus one lost for the accounts that lost theirs.
    expect(answered).toBe(12 + lost);
    expect(sandbox.inspect.accountCount()).toBe(12);
    for (const number of data.valid) expect(sandbox.inspect.account('ACME', number)?.status).toBe('PROCESSED');
    const lostEvents = readFileSync(log, 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { step?: string; outcome?: string; code?: string })
      .filter((event) => event.code === 'import_process_lost' && event.step === 'poll' && event.outcome === 'staged');
    expect(lostEvents).toHaveLength(lost);
  });

  it('lost every time: sent again once per run, then left for the next run in retry.csv (exit 1); the next run lands it', async () => {
    sandbox = await startSandbox({ processingMs: 0, lostCreateShare: 1 });
    const data = writeE2eExport(join(root, 'always'), 3, 'ALWAYS', 'spec', { clean: true });
    const state = join(root, 'always-state');
    const run = await push(sandbox, data.dir, state);
    expect(run.code, run.stderr).toBe(1);
    expect(creates(sandbox)).toEqual({ answered: 6, lost: 6 });
    const out = join(root, 'always-report');
    const report = await runMigrate(['report', '--state', state, '--out', out]);
    expect(report.code, report.stderr).toBe(0);
    const retry = readFileSync(join(out, 'retry.csv'), 'utf8').trim().split('\n').slice(1);
    expect(retry).toHaveLength(3);
    for (const line of retry) {
      expect(line).toContain('import_process_lost');
      expect(line).toContain('no import process');
    }

    sandbox.control.setFaults({ lostCreateShare: 0 });
    const rerun = await push(sandbox, data.dir, state);
    expect(rerun.code, rerun.stderr).toBe(0);
    expect(creates(sandbox)).toEqual({ answered: 9, lost: 6 });
    expect(sandbox.inspect.accountCount()).toBe(3);
  });
});
