import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.js';
import { startTestCluster, type TestCluster } from '../pg/cluster.js';
import { onSnapshot } from '../pg/ledger-dir.js';
import { writeE2eExport } from './export.js';
import { expectExactState, ROOT, type RunResult } from './helpers.js';

// The PostgreSQL ledger going away mid-run (docs/postgres.md "The database going away"): a runner takes no new work
// while it is away and goes on when it is back, ending exact; one that stays away past --ledger-timeout ends the run
// with exit 3 and a message, and the next push reconciles what was in flight.

let root: string;
let cluster: TestCluster;
beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'outage-pg-'));
  cluster = await startTestCluster();
});
afterAll(async () => {
  await cluster?.close();
  rmSync(root, { recursive: true, force: true });
});

interface Runner {
  /** Resolves when stderr has shown `pattern`. */
  said(pattern: RegExp): Promise<void>;
  done: Promise<RunResult>;
}

/** `migrate push` on the ledger, watched: the test acts on what the runner says, never after a delay. */
function runner(sandbox: RunningSandbox, dir: string, url: string, extra: string[] = []): Runner {
  // The URL in the environment: one with a password is refused on the command line (argv is seen by every user).
  const args = [join(ROOT, 'bin', 'migrate.js'), 'push', dir, '--base-url', sandbox.url, ...extra];
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: { ...process.env, MIGRATE_API_KEY: sandbox.apiKey, MIGRATE_LEDGER_URL: url, NO_COLOR: '1' },
  });
  let stdout = '';
  let stderr = '';
  const waiting: Array<[RegExp, () => void]> = [];
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
    for (const [pattern, resolve] of waiting) if (pattern.test(stderr)) resolve();
  });
  const done = new Promise<RunResult>((resolve) =>
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr })),
  );
  return {
    said: (pattern) =>
      new Promise((resolve, reject) => {
        if (pattern.test(stderr)) resolve();
        else waiting.push([pattern, resolve]);
        void done.then(() => reject(new Error(`the runner ended without saying ${pattern}:\n${stderr}`)));
      }),
    done,
  };
}

it('the database restarted mid-run: two runners wait for it, go on, and the state ends exact', async () => {
  const sandbox = await startSandbox({ processingMs: 80, latencyMs: 15, seed: 13, flakyAttempts: 1 });
  try {
    const data = writeE2eExport(join(root, 'restart'), 40, 'RST');
    const url = await cluster.newDatabase();
    const runners = [1, 2].map(() => runner(sandbox, data.dir, url, ['--concurrency', '2']));
    // Once accounts are being created, the database goes away until a runner has noticed.
    await new Promise<void>((resolve) => {
      const check = setInterval(() => {
        if (sandbox.inspect.accounts('ACME').length < 5) return;
        clearInterval(check);
        resolve();
      }, 5);
    });
    await cluster.stop();
    await Promise.race(runners.map((one) => one.said(/the PostgreSQL ledger is unreachable; no new work/)));
    const createdWhileAway = sandbox.inspect.accounts('ACME').length;
    await cluster.start();
    const results = await Promise.all(runners.map((one) => one.done));
    for (const result of results) {
      expect(result.code, result.stderr).toBe(5); // invalid and ERRORED accounts
      expect(result.stderr).toContain('the PostgreSQL ledger is reachable again; the run goes on');
    }
    expect(createdWhileAway).toBeLessThan(40);
    await onSnapshot(url, (dir) => expectExactState(sandbox, data, dir, expect));
  } finally {
    await sandbox.close();
  }
});

it('a database that stays away past --ledger-timeout ends the run with exit 3; the next push ends exact', async () => {
  const sandbox = await startSandbox({ processingMs: 80, latencyMs: 15, seed: 19, flakyAttempts: 1 });
  try {
    const data = writeE2eExport(join(root, 'away'), 30, 'AWAY');
    const url = (await cluster.newDatabase()).replace('postgres@', 'postgres:pw-never-shown@');
    const first = runner(sandbox, data.dir, url, ['--concurrency', '2', '--ledger-timeout', '1']);
    await new Promise<void>((resolve) => {
      const check = setInterval(() => {
        if (sandbox.inspect.accounts('ACME').length < 3) return;
        clearInterval(check);
        resolve();
      }, 5);
    });
    await cluster.stop();
    const stopped = await first.done;
    await cluster.start();
    expect(stopped.code, stopped.stderr).toBe(3);
    expect(stopped.stderr).toMatch(/the PostgreSQL ledger postgresql:\/\/postgres:\*\*\*@.* was unreachable for 1 s/);
    expect(stopped.stderr).not.toContain('pw-never-shown');
    expect(stopped.stderr).not.toMatch(/\n\s+at /); // no stack trace
    const again = await runner(sandbox, data.dir, url, ['--concurrency', '2']).done;
    expect(again.code, again.stderr).toBe(5);
    await onSnapshot(url, (dir) => expectExactState(sandbox, data, dir, expect));
  } finally {
    await sandbox.close();
  }
});
