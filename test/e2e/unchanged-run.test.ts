import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.js';
import { writeOpsExport, type OpsExport } from '../commands/report/ops-export.js';
import { runMigrate } from './run-push.js';

// Cron: a push that changed no account's and no record's state prints one line saying so, with what is left and the
// next step, not the whole summary again. The real binary against the sandbox, run as cron runs it (no terminal).

let dir: string;
let sandbox: RunningSandbox;
let ops: OpsExport;

describe('a push that changed nothing in the ledger', () => {
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'unchanged-run-'));
    sandbox = await startSandbox({ processingMs: 20 });
    ops = writeOpsExport(dir);
  }, 60_000);

  afterAll(async () => {
    await sandbox?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('prints one line with what is left and the next step; a run that changed something prints the summary', async () => {
    const state = join(dir, 'state');
    const env = { MIGRATE_API_KEY: sandbox.apiKey };
    const args = ['push', ops.dir, '--base-url', sandbox.url, '--state', state];
    const first = await runMigrate(args, env);
    expect(first.code, first.stderr).toBe(5);
    expect(first.stdout).toContain('most frequent errors');
    const again = await runMigrate(args, env);
    expect(again.code, again.stderr).toBe(5);
    const lines = again.stdout.split('\n').filter((line) => line.trim() !== '');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^push changed nothing in the ledger; left: 4 accounts need data fixes/);
    expect(lines[0]).toContain('2 accounts ERRORED on the platform');
    // The hint names the run's supplier and state directory.
    expect(lines[0]).toContain(
      `next: migrate status ACME --state ${state} (what needs a person first), migrate report --state ${state} --out DIR`,
    );
    // --json is a document: always whole.
    const json = await runMigrate([...args, '--json'], env);
    expect(JSON.parse(json.stdout)).toHaveProperty('accounts');
  });
});
