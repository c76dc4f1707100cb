import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, watch, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.js';
import { writeE2eExport } from './export.js';
import { ROOT } from './helpers.js';

// Numbers after a stop: a push interrupted while it reads the export says how many of the export's accounts it never
// read (from the accounts file's size), not only the few it read and did not send. The signal goes the moment the
// NDJSON log shows 1,000 accounts staged (an event, never a sleep).

const BIN = join(ROOT, 'bin', 'migrate.js');
const ACCOUNTS = 6000;

let root: string;
let sandbox: RunningSandbox;

function pushStoppedWhileReading(exportDir: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const log = join(root, 'push.ndjson');
  writeFileSync(log, '', { mode: 0o600 });
  const args = ['push', exportDir, '--base-url', sandbox.url, '--state', join(root, 'state'), '--log-file', log];
  const child = spawn(process.execPath, [BIN, ...args], {
    env: { ...process.env, MIGRATE_API_KEY: sandbox.apiKey, NO_COLOR: '1' },
  });
  let [stdout, stderr, sent] = ['', '', false];
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const watcher = watch(log, () => {
    if (sent || !stagedAtLeast(readFileSync(log, 'utf8'), 1000)) return;
    sent = true;
    child.kill('SIGINT');
  });
  return new Promise((resolve) =>
    child.on('close', (code) => {
      watcher.close();
      resolve({ code, stdout, stderr });
    }),
  );
}

/**
 * Whether the log shows `accounts` accounts staged: by then the byte count of the accounts file, started beside the
 * first staged batch, has long ended (it reads the file once, without parsing), as it has at an operator's Ctrl-C.
 */
function stagedAtLeast(log: string, accounts: number): boolean {
  return log
    .split('\n')
    .some(
      (line) => line.includes('"event":"staging"') && (JSON.parse(line) as { accounts: number }).accounts >= accounts,
    );
}

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
    const run = await pushStoppedWhileReading(data.dir);
    expect(run.code, run.stderr).toBe(130);
    const never = /about ([\d,]+) accounts never read \(the run stopped while reading the export/.exec(run.stdout);
    expect(never, run.stdout).not.toBeNull();
    const unread = Number(never![1]!.replace(/,/g, ''));
    expect(unread).toBeGreaterThan(0);
    expect(unread).toBeLessThan(ACCOUNTS);
    expect(run.stdout).toMatch(/push stopped: interrupted; left: .*about [\d,]+ accounts never read/);
  }, 120_000);
});
