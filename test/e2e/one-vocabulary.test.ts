import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.js';
import { writeOpsExport } from '../commands/report/ops-export.js';
import { runMigrate } from './run-push.js';
import type { RunResult } from './helpers.js';

// One vocabulary in push's summary and status: records behind invalid or ERRORED accounts wait for those accounts
// (never "a later run sends them"), and ERRORED accounts point to a check and --retry-errored. The real binary
// pushes an export with planted data errors and two accounts the sandbox ends ERRORED, each with three records.

let dir: string;
let sandbox: RunningSandbox;
let pushed: RunResult;
let status: RunResult;
let shortStatus: RunResult;

describe('push summary and status say the same of records behind accounts a person must act on', () => {
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'one-vocabulary-'));
    sandbox = await startSandbox({ processingMs: 20 });
    const ops = writeOpsExport(dir);
    const state = join(dir, 'state');
    const env = { MIGRATE_API_KEY: sandbox.apiKey };
    pushed = await runMigrate(['push', ops.dir, '--base-url', sandbox.url, '--state', state], env);
    status = await runMigrate(['status', 'ACME', '--base-url', sandbox.url, '--state', state], env);
    shortStatus = await runMigrate(
      ['status', 'ACME', '--base-url', sandbox.url, '--state', state, '--max-rows', '2'],
      env,
    );
  }, 120_000);

  afterAll(async () => {
    await sandbox?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("the push summary says the ERRORED accounts' records wait for them, with the check and --retry-errored", () => {
    expect(pushed.code, pushed.stderr).toBe(5);
    expect(pushed.stdout).toContain(
      '2 accounts ERRORED on the platform (6 records wait for them; check them, then push with --retry-errored; ' +
        'fix-data.csv)',
    );
    expect(pushed.stdout).toMatch(/4 accounts need data fixes \(\d+ records wait for them; fix-data\.csv\)/);
    // Nothing else is pending: no record is left to "a later run".
    expect(pushed.stdout).not.toContain('not sent yet');
    expect(pushed.stdout).not.toContain('later run');
  });

  it('status counts the same records waiting for the same accounts', () => {
    expect(status.code, status.stderr).toBe(5);
    expect(status.stdout).toContain('2 accounts ERRORED on the platform (6 records wait for them)');
    const summaryWaiting = /4 accounts need data fixes \((\d+) records wait for them;/.exec(pushed.stdout)?.[1];
    expect(status.stdout).toContain(`(${summaryWaiting} records wait for them)`);
  });

  it('status lists what needs a person first: the refused payment instruction before the records that wait', () => {
    expect(shortStatus.code, shortStatus.stderr).toBe(5);
    const text = shortStatus.stdout;
    const needing = text.indexOf('records that need a person');
    const waiting = text.indexOf('records waiting');
    expect(needing, text).toBeGreaterThan(-1);
    expect(waiting).toBeGreaterThan(needing);
    const listed = text.slice(needing, waiting);
    expect(listed).toMatch(/OPS-0005\s+payment_instruction\s+failed: refused by the service/);
    expect(text.slice(waiting)).toMatch(/waiting: account ERRORED|held back: account invalid/);
  });
});
