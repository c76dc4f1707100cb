import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.js';
import { startTestCluster, type TestCluster } from '../pg/cluster.js';
import { onSnapshot } from '../pg/ledger-dir.js';
import { writeE2eExport } from './export.js';
import { expectExactState, push } from './helpers.js';

// Several `migrate push` processes on one PostgreSQL ledger and one export (docs/postgres.md "Several runners"): they share
// the accounts through leases, and the service sees each create and each record exactly as often as one runner alone
// sends it.

let root: string;
let cluster: TestCluster;
beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'runners-pg-'));
  cluster = await startTestCluster();
});
afterAll(async () => {
  await cluster?.close();
  rmSync(root, { recursive: true, force: true });
});

/** POST requests per endpoint: the creates and every kind of record (the token mutation left out). */
function postsByPath(sandbox: RunningSandbox): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const entry of sandbox.inspect.requests())
    if (entry.method === 'POST' && !entry.path.includes('graphql')) counts[entry.path] = (counts[entry.path] ?? 0) + 1;
  return counts;
}

async function accountsPerRun(url: string): Promise<number[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const rows = await client.query<{ n: string }>('SELECT COUNT(*) AS n FROM accounts GROUP BY last_run_id');
    return rows.rows.map((row) => Number(row.n)).sort((a, b) => a - b);
  } finally {
    await client.end();
  }
}

const SERVICE = { processingMs: 60, latencyMs: 8, seed: 5, flakyAttempts: 1 } as const;

it('two runners started at the same moment share the work and never send the same create or record', async () => {
  const data = writeE2eExport(join(root, 'two'), 60, 'TWO', 'spec', { clean: true });
  // One runner alone on a state directory: what the service must see, request for request.
  const alone = await startSandbox(SERVICE);
  const together = await startSandbox(SERVICE);
  try {
    const single = await push(alone, data.dir, join(root, 'two', 'state'), ['--concurrency', '2']);
    expect(single.code, single.stderr).toBe(0);
    const url = await cluster.newDatabase();
    const runners = await Promise.all(
      [1, 2].map((n) =>
        push(together, data.dir, join(root, 'two', `unused-${n}`), ['--ledger', url, '--concurrency', '2']),
      ),
    );
    for (const runner of runners) expect(runner.code, runner.stderr).toBe(0);
    expect(postsByPath(together)).toEqual(postsByPath(alone));
    const creates = postsByPath(together)['/v2/data-import/accounts/'];
    expect(creates).toBe(60);
    await onSnapshot(url, (dir) => expectExactState(together, data, dir, expect));
    // Both took part: the accounts each run touched last.
    const split = await accountsPerRun(url);
    expect(split).toHaveLength(2);
    expect(Math.min(...split)).toBeGreaterThan(5);
  } finally {
    await Promise.all([alone.close(), together.close()]);
  }
});

it('three runners, one SIGKILLed mid-run: the others take its accounts over and the state ends exact', async () => {
  const sandbox = await startSandbox({ ...SERVICE, dropRate: 0.03, ambiguousRate: 0.03, retryAfterSeconds: 0 });
  try {
    const data = writeE2eExport(join(root, 'three'), 60, 'THREE');
    const url = await cluster.newDatabase();
    const state = (n: number): string => join(root, 'three', `unused-${n}`);
    const args = ['--ledger', url, '--concurrency', '2'];
    const [killed, ...others] = await Promise.all([
      push(sandbox, data.dir, state(1), args, { afterMs: 200, signal: 'SIGKILL', afterOutput: /staged|accounts/ }),
      push(sandbox, data.dir, state(2), args),
      push(sandbox, data.dir, state(3), args),
    ]);
    expect(killed?.signal, killed?.stderr).toBe('SIGKILL');
    for (const runner of others) expect(runner.code, runner.stderr).toBe(5); // invalid and ERRORED accounts
    await onSnapshot(url, (dir) => expectExactState(sandbox, data, dir, expect));
  } finally {
    await sandbox.close();
  }
});

it("runners of two cohorts (two schemas of one database) at once never touch each other's rows", async () => {
  const sandbox = await startSandbox({ processingMs: 30, latencyMs: 5, seed: 9 });
  try {
    const base = await cluster.newDatabase();
    const client = new pg.Client({ connectionString: base });
    await client.connect();
    await client.query('CREATE SCHEMA cohort_a; CREATE SCHEMA cohort_b');
    await client.end();
    const cohorts = ['a', 'b'].map((name) => ({
      url: `${base}${base.includes('?') ? '&' : '?'}options=${encodeURIComponent(`-c search_path=cohort_${name}`)}`,
      data: writeE2eExport(join(root, `cohort-${name}`), 12, `CO${name.toUpperCase()}`, 'spec', { clean: true }),
    }));
    const runs = await Promise.all(
      cohorts.flatMap(({ url, data }) =>
        [1, 2].map((n) => push(sandbox, data.dir, join(root, `unused-${n}`), ['--ledger', url])),
      ),
    );
    for (const run of runs) expect(run.code, run.stderr).toBe(0);
    for (const [index, { url }] of cohorts.entries()) {
      const reader = new pg.Client({ connectionString: url });
      await reader.connect();
      const numbers = (await reader.query<{ n: string }>('SELECT external_account_number AS n FROM accounts')).rows;
      await reader.end();
      expect(numbers).toHaveLength(12);
      expect(numbers.every((row) => row.n.startsWith(index === 0 ? 'COA' : 'COB'))).toBe(true);
    }
  } finally {
    await sandbox.close();
  }
});
