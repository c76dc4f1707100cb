import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.js';
import { writeE2eExport } from './export.js';
import { ROOT } from './helpers.js';
import { pushStoppedWhileReading } from './stopped-push.js';

// `status` after two pushes stopped while reading the export (SIGINT once the log shows 1,000, then 2,000 accounts
// staged): it counts the whole export, the accounts no push has read among them, and never says the next push only
// creates what the ledger holds.

const BIN = join(ROOT, 'bin', 'migrate.js');
const ACCOUNTS = 4000;

let root: string;
let sandbox: RunningSandbox;
let state: string;

function status(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [BIN, 'status', 'ACME', '--base-url', sandbox.url, '--state', state, ...args], {
    env: { ...process.env, MIGRATE_API_KEY: sandbox.apiKey, NO_COLOR: '1' },
  });
  let [stdout, stderr] = ['', ''];
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
}

const escaped = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

interface StatusJson {
  counts: { ledger: Record<string, number> };
  export: { dir: string; accounts: number; never_read: number } | null;
  next_steps: string[];
}

describe('status after pushes stopped while reading the export', () => {
  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'status-never-read-'));
    state = join(root, 'state');
    sandbox = await startSandbox({ processingMs: 20 });
    const data = writeE2eExport(root, ACCOUNTS, 'NR');
    for (const staged of [1000, 2000]) {
      const log = join(root, `push-${staged}.ndjson`);
      const run = await pushStoppedWhileReading({ exportDir: data.dir, stateDir: state, log, sandbox, staged });
      expect(run.code, run.stderr).toBe(130);
    }
  }, 180_000);

  afterAll(async () => {
    await sandbox?.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('--json: the export counted whole, the accounts never read beside the ledger', async () => {
    const run = await status(['--json']);
    expect(run.code, run.stderr).toBe(5);
    const json = JSON.parse(run.stdout) as StatusJson;
    const held = Object.values(json.counts.ledger).reduce((total, n) => total + n, 0);
    expect(held).toBeLessThan(ACCOUNTS);
    expect(json.export).toMatchObject({ dir: join(root, 'export'), accounts: ACCOUNTS, never_read: ACCOUNTS - held });
    expect(json.next_steps.join('\n')).toContain(
      `reads about ${(ACCOUNTS - held).toLocaleString('en-GB')} accounts never read`,
    );
  });

  it('text: says about how many were never read, and the next push reads them first', async () => {
    const run = await status([]);
    expect(run.code, run.stderr).toBe(5);
    const never = /export: about ([\d,]+) accounts never read of about ([\d,]+) in /.exec(run.stdout);
    expect(never, run.stdout).not.toBeNull();
    const unread = Number(never![1]!.replace(/,/g, ''));
    expect(unread).toBeGreaterThan(0);
    expect(never![2]).toBe(ACCOUNTS.toLocaleString('en-GB'));
    expect(run.stdout).toMatch(
      new RegExp(
        // The hint names the last push's export directory and this state directory, as they would be typed.
        `next migrate push ${escaped(join(root, 'export'))} --state ${escaped(state)} reads about ${never![1]} ` +
          'accounts never read(, creates|, checks|$)',
        'm',
      ),
    );
  });
});
