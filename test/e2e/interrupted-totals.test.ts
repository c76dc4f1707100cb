import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.js';
import { writeE2eExport } from './export.js';
import { pushStoppedWhileReading } from './stopped-push.js';

// Numbers after a stop: a push interrupted while it reads the export says how many of the export's accounts it never
// read (from the accounts file's size), not only the few it read and did not send. The signal goes the moment the
// NDJSON log shows 1,000 accounts staged (stopped-push.ts: an event, never a sleep).

const ACCOUNTS = 6000;

let root: string;
let sandbox: RunningSandbox;

describe('a push interrupted while reading the export', () => {
  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'interrupted-totals-'));
    sandbox = await startSandbox({ processingMs: 20 });
  });

  afterAll(async () => {
    await sandbox?.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('says how many accounts of the export were never read', async () => {
    const data = writeE2eExport(root, ACCOUNTS, 'INT');
    const run = await pushStoppedWhileReading({
      exportDir: data.dir,
      stateDir: join(root, 'state'),
      log: join(root, 'push.ndjson'),
      sandbox,
      staged: 1000,
    });
    expect(run.code, run.stderr).toBe(130);
    const never = /about ([\d,]+) accounts never read \(the run stopped while reading the export/.exec(run.stdout);
    expect(never, run.stdout).not.toBeNull();
    const unread = Number(never![1]!.replace(/,/g, ''));
    expect(unread).toBeGreaterThan(0);
    expect(unread).toBeLessThan(ACCOUNTS);
    expect(run.stdout).toMatch(/push stopped: interrupted; left: .*about [\d,]+ accounts never read/);
  }, 120_000);
});
