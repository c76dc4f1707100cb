import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface, type Interface } from 'node:readline';
import type { InspectedAccount } from '../../src/sandbox/inspected.js';
import { differences, exportInMemory, type ExpectedExport } from '../e2e/oracle.js';
import { startTestCluster, type TestCluster } from '../pg/cluster.js';
import { writePushExport } from './push-export.js';

// `npm run bench:push -- postgres [ACCOUNTS]`: the PostgreSQL ledger's pace, the real binary timed from spawn to
// exit against the sandbox in its own process, with a throwaway PostgreSQL cluster (test/pg/cluster.ts) on this
// machine. Median of BENCH_RUNS (default 3) runs, each on a fresh sandbox and ledger, every run compared with the
// export read whole in memory (exact, else NOT EXACT).
//  1. One runner, SQLite (--state) against PostgreSQL (--ledger): ACCOUNTS (default 2,000) sorted accounts with every
//     record kind, sandbox answering in 20 ms and processing in 100 ms, concurrency 8; the ratio of accounts/s
//     (limit 0.8).
//  2. One runner against three on one PostgreSQL ledger, the service answering in a fixed 100 ms (the service, not
//     this machine's two cores, is the ceiling, as with the real platform), concurrency 8 each: the ratio of
//     accounts/s (limit 2.5).

const ROOT = join(import.meta.dirname, '..', '..');
const RUNS = Number(process.env['BENCH_RUNS'] ?? 3);

interface Server {
  url: string;
  apiKey: string;
  child: ChildProcess;
  lines: Interface;
}

async function startServer(latencyMs: number, processingMs: number): Promise<Server> {
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      join(ROOT, 'test/bench/push-sandbox-server.ts'),
      String(latencyMs),
      String(processingMs),
      'retain',
    ],
    { stdio: ['pipe', 'pipe', 'inherit'] },
  );
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  const line = await new Promise<string>((resolve) => lines.once('line', resolve));
  return { ...(JSON.parse(line) as { url: string; apiKey: string }), child, lines };
}

async function stopServer(server: Server): Promise<void> {
  const exited = new Promise((resolve) => server.child.once('exit', resolve));
  server.child.stdin?.end();
  await exited;
}

async function exactness(server: Server, expected: ExpectedExport): Promise<string> {
  const token = await fetch(`${server.url}/v1/graphql/`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      query: 'mutation Obtain($input: ObtainJSONWebTokenInput!) { obtainKrakenToken(input: $input) { token } }',
      variables: { input: { APIKey: server.apiKey } },
    }),
  });
  const { data } = (await token.json()) as { data: { obtainKrakenToken: { token: string } } };
  const response = await fetch(`${server.url}/_sandbox/accounts/ACME/`, {
    headers: { authorization: data.obtainKrakenToken.token },
  });
  const wrong = differences((await response.json()) as InspectedAccount[], expected);
  return wrong.length === 0 ? 'exact' : `NOT EXACT: ${wrong.slice(0, 3).join('; ')}`;
}

/** `migrate push` as a child process; resolves with its exit code. */
function pushChild(server: Server, dir: string, ledger: string[], concurrency: number): Promise<number | null> {
  const child = spawn(
    process.execPath,
    [
      join(ROOT, 'bin/migrate.js'),
      'push',
      dir,
      '--base-url',
      server.url,
      '--concurrency',
      String(concurrency),
      ...ledger,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, MIGRATE_API_KEY: server.apiKey } },
  );
  let output = '';
  const keep = (chunk: Buffer): void => void (output = (output + chunk.toString()).slice(-3000));
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  return new Promise((resolve) =>
    child.once('close', (code) => {
      if (code !== 0) process.stderr.write(`  push exited ${code}; its last output:\n${output}\n`);
      resolve(code);
    }),
  );
}

interface Setup {
  dir: string;
  accounts: number;
  expected: ExpectedExport;
  cluster: TestCluster;
}

/** Seconds from spawning `runners` pushes on one ledger to the last one's exit, and whether the result is exact. */
async function timed(
  setup: Setup,
  service: { latencyMs: number; processingMs: number },
  runners: number,
  store: 'sqlite' | 'postgres',
): Promise<{ seconds: number; verdict: string }> {
  const server = await startServer(service.latencyMs, service.processingMs);
  const state = mkdtempSync(join(tmpdir(), 'bench-pg-state-'));
  const ledger = store === 'sqlite' ? ['--state', state] : ['--ledger', await setup.cluster.newDatabase()];
  try {
    const startedAt = Date.now();
    const codes = await Promise.all(Array.from({ length: runners }, () => pushChild(server, setup.dir, ledger, 8)));
    const seconds = (Date.now() - startedAt) / 1000;
    const verdict = codes.every((code) => code === 0)
      ? await exactness(server, setup.expected)
      : `exit ${codes.join(', ')}`;
    return { seconds, verdict };
  } finally {
    await stopServer(server);
    rmSync(state, { recursive: true, force: true });
  }
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? NaN;
}

const load = (): string => `load ${loadavg()[0]?.toFixed(2) ?? '?'}`;

/** Accounts per second of RUNS runs (median), each run printed. */
async function pace(
  setup: Setup,
  label: string,
  run: () => Promise<{ seconds: number; verdict: string }>,
): Promise<number> {
  const rates: number[] = [];
  for (let index = 0; index < RUNS; index += 1) {
    const { seconds, verdict } = await run();
    rates.push(setup.accounts / seconds);
    console.log(
      `    ${label} run ${index + 1}: ${seconds.toFixed(1)} s, ${(setup.accounts / seconds).toFixed(1)} accounts/s, ${verdict}; ${load()}`,
    );
  }
  return median(rates);
}

export async function postgresBench(count = 2_000): Promise<void> {
  const cluster = await startTestCluster();
  const dir = mkdtempSync(join(tmpdir(), 'bench-pg-export-'));
  try {
    await writePushExport(dir, count, 'sorted');
    const setup = { dir, accounts: count, expected: await exportInMemory(dir, { MIGRATE_SUPPLIER: 'ACME' }), cluster };
    console.log(
      `one runner, ${count} sorted accounts, sandbox 20 ms / processing 100 ms, concurrency 8; median of ${RUNS}`,
    );
    const fast = { latencyMs: 20, processingMs: 100 };
    const sqlite = await pace(setup, 'SQLite    ', () => timed(setup, fast, 1, 'sqlite'));
    const postgres = await pace(setup, 'PostgreSQL', () => timed(setup, fast, 1, 'postgres'));
    console.log(`  PostgreSQL / SQLite: ${(postgres / sqlite).toFixed(2)} (limit 0.8)`);
    console.log(
      `three runners against one, sandbox a fixed 100 ms / processing 100 ms, concurrency 8 each; median of ${RUNS}`,
    );
    const fixed = { latencyMs: 100, processingMs: 100 };
    const one = await pace(setup, '1 runner  ', () => timed(setup, fixed, 1, 'postgres'));
    const three = await pace(setup, '3 runners ', () => timed(setup, fixed, 3, 'postgres'));
    console.log(`  three / one: ${(three / one).toFixed(2)} (limit 2.5)`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
    await cluster.close();
  }
}
