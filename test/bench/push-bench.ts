import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface, type Interface } from 'node:readline';
import type { InspectedAccount } from '../../src/sandbox/inspected.js';
import { differences, exportInMemory, type ExpectedExport } from '../e2e/oracle.js';
import { cpuMicrosAt, eventAt, measuredPush } from './measured-push.js';
import { writePushExport, type ExportOrder, type GeneratedExport } from './push-export.js';

// `npm run bench:push [-- throughput|first|postgres [ACCOUNTS]]` (builds dist/ first; `postgres`: push-postgres.ts). What a user waits
// for: the real binary (`node bin/migrate.js push DIR --base-url URL --concurrency N`, the API key
// in MIGRATE_API_KEY) timed as a child process from spawn to exit, against the sandbox in its own
// process. Each figure is the median of BENCH_RUNS runs (default 3), each on a fresh sandbox and
// ledger; the load average is printed beside it (the machine is shared).
//  throughput: an export with every record kind (push-export.ts), scattered (every file in an order of
//    its own, as legacy exports are) and sorted (BENCH_ORDER=scattered or sorted for one), sandbox
//    answering in 20 ms and processing each account in 40-250 ms (a seeded time per account, as the
//    service's queue does), concurrency 8, 32, 128 (BENCH_CONCURRENCY=N for
//    one). Every run is checked: exit 0, and what the sandbox holds is exactly the export read whole in
//    memory (every payload and record; test/e2e/oracle.ts), else the run says NOT EXACT. Printed: share
//    of the bound concurrency / (0.020 s x fewest requests per account allowed by the spec, counted
//    from the export) end to end; requests per account sent against that minimum; seconds to the
//    first request; seconds proving the files' order (the key scans) and from the proof to the first
//    account staged (sorting the files found out of order, for a scattered export); client CPU per request.
//  first: a sorted export (BENCH_ORDER=scattered for the other) of ACCOUNTS (default 200,000) accounts
//    of the same shape (every record kind, seven files to prove), sandbox answering at once, concurrency 32, interrupted (SIGINT) BENCH_STOP_AFTER
//    seconds (default 3) after its first request: seconds to the first request, where they went
//    (start-up, proof, sorting and the first accounts staged), and the child's peak RSS.

const ROOT = join(import.meta.dirname, '..', '..');
const LATENCY_MS = 20;
/** The binary timed: BENCH_BIN=<another checkout>/bin/migrate.js compares two builds, run in turn, on one machine. */
const MIGRATE_BIN = process.env['BENCH_BIN'] ?? join(ROOT, 'bin/migrate.js');
/** The service's processing time per account: from 40 to 250 ms, seeded per account (BENCH_PROCESSING=100: a fixed time). */
const PROCESSING = process.env['BENCH_PROCESSING'] ?? '40-250';
const RUNS = Number(process.env['BENCH_RUNS'] ?? 3);
/** Runs at most this size are compared with the export read whole in memory (the sandbox keeps every payload). */
const CHECKED_UP_TO = 50_000;

interface Server {
  url: string;
  apiKey: string;
  child: ChildProcess;
  lines: Interface;
}

interface ServerStats {
  requests: number;
  firstAt: number | null;
  byEndpoint: Record<string, number>;
  timeline: Array<Record<string, number>>;
  cpuMicros: number;
}

async function nextLine(lines: Interface): Promise<string> {
  return new Promise<string>((resolve) => lines.once('line', resolve));
}

async function startServer(latencyMs: number, processing: string, retain: boolean): Promise<Server> {
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      join(ROOT, 'test/bench/push-sandbox-server.ts'),
      String(latencyMs),
      processing,
      retain ? 'retain' : 'lean',
    ],
    { stdio: ['pipe', 'pipe', 'inherit'] },
  );
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  const line = await nextLine(lines);
  return { ...(JSON.parse(line) as { url: string; apiKey: string }), child, lines };
}

async function statsOf(server: Server): Promise<ServerStats> {
  const answer = nextLine(server.lines);
  server.child.stdin?.write('stats\n');
  return JSON.parse(await answer) as ServerStats;
}

async function stopServer(server: Server): Promise<void> {
  const exited = new Promise((resolve) => server.child.once('exit', resolve));
  server.child.stdin?.end();
  await exited;
}

/** A token for the sandbox's inspection endpoint (the same mutation migrate makes). */
async function tokenOf(server: Server): Promise<string> {
  const response = await fetch(`${server.url}/v1/graphql/`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      query: 'mutation Obtain($input: ObtainJSONWebTokenInput!) { obtainKrakenToken(input: $input) { token } }',
      variables: { input: { APIKey: server.apiKey } },
    }),
  });
  return ((await response.json()) as { data: { obtainKrakenToken: { token: string } } }).data.obtainKrakenToken.token;
}

/** Whether the sandbox holds exactly the export: the differences, none when exact (test/e2e/oracle.ts). */
async function exactness(server: Server, expected: ExpectedExport): Promise<string[]> {
  const response = await fetch(`${server.url}/_sandbox/accounts/ACME/`, {
    headers: { authorization: await tokenOf(server) },
  });
  return differences((await response.json()) as InspectedAccount[], expected);
}

interface PushFigures {
  seconds: number;
  exitCode: number | null;
  requests: number;
  firstRequestSeconds: number;
  /** From spawn to the log's first line: the process's start-up and the service's configuration. */
  startSeconds: number;
  /** The key scans proving each CSV file's order (the log's `order` event). */
  proofSeconds: number;
  /** From the proof to the first accounts staged: sorting the files found out of order, then the first batch. */
  toFirstStagedSeconds: number;
  cpuMicros: number;
  /** The child's CPU time from spawn to the service's first request (sampled every 10 ms). */
  cpuToFirstMicros: number;
  /** The sandbox process's CPU time during the push (is the stand-in of the service the limit?). */
  serverCpuMicros: number;
  maxRssMb: number;
  byEndpoint: Record<string, number>;
  timeline: Array<Record<string, number>>;
}
/** Runs `migrate push` as a child process from spawn to exit (measured-push.ts), with the sandbox's own figures. */
async function pushChild(server: Server, dir: string, concurrency: number, stopAfterMs?: number): Promise<PushFigures> {
  const serverCpuBefore = (await statsOf(server)).cpuMicros;
  const run = await measuredPush({
    bin: MIGRATE_BIN,
    args: [dir, '--base-url', server.url, '--concurrency', String(concurrency)],
    apiKey: server.apiKey,
    ...(stopAfterMs === undefined
      ? {}
      : { stopAfter: { ms: stopAfterMs, firstAt: async () => (await statsOf(server)).firstAt } }),
  });
  const stats = await statsOf(server);
  if (run.exitCode !== 0 && stopAfterMs === undefined)
    process.stderr.write(`  push exited ${run.exitCode}: ${run.stderr}\n`);
  const { startedAt, events } = run;
  const proofMs = events.find((event) => event.event === 'order')?.ms ?? NaN;
  return {
    seconds: (run.endedAt - startedAt) / 1000,
    exitCode: run.exitCode,
    requests: stats.requests,
    firstRequestSeconds: stats.firstAt === null ? NaN : (stats.firstAt - startedAt) / 1000,
    startSeconds: (eventAt(events, 'log_opened') - startedAt) / 1000,
    proofSeconds: proofMs / 1000,
    toFirstStagedSeconds: (eventAt(events, 'staging') - eventAt(events, 'order')) / 1000,
    cpuMicros: run.usage.user + run.usage.system,
    cpuToFirstMicros: cpuMicrosAt(run.usage, stats.firstAt ?? NaN),
    serverCpuMicros: stats.cpuMicros - serverCpuBefore,
    maxRssMb: run.usage.maxRssKb / 1024,
    byEndpoint: stats.byEndpoint,
    timeline: stats.timeline,
  };
}

/** BENCH_TIMELINE=1: requests per 500 ms after the first, by endpoint, one line each. */
function printTimeline(timeline: Array<Record<string, number>>): void {
  timeline.forEach((bucket, index) => {
    const total = Object.values(bucket).reduce((sum, n) => sum + n, 0);
    const parts = Object.entries(bucket).map(([key, n]) => `${key} ${n}`);
    console.log(`      ${(index / 2).toFixed(1).padStart(5)} s ${String(total).padStart(5)}  ${parts.join(', ')}`);
  });
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[middle] ?? NaN) : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2;
}

const load = (): string => `load ${loadavg()[0]?.toFixed(2) ?? '?'}`;
const orders = (fallback: ExportOrder[]): ExportOrder[] =>
  process.env['BENCH_ORDER'] ? [process.env['BENCH_ORDER'] as ExportOrder] : fallback;

async function withExport<T>(
  count: number,
  order: ExportOrder,
  use: (dir: string, generated: GeneratedExport) => Promise<T>,
): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-push-export-'));
  try {
    return await use(dir, await writePushExport(dir, count, order));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function throughput(count?: number): Promise<void> {
  const levels = process.env['BENCH_CONCURRENCY'] ? [Number(process.env['BENCH_CONCURRENCY'])] : [8, 32, 128];
  console.log(
    `push end to end (real binary, spawn to exit), sandbox latency ${LATENCY_MS} ms, processing ${PROCESSING} ms per account; median of ${RUNS}`,
  );
  for (const concurrency of levels)
    for (const order of orders(['scattered', 'sorted'])) {
      // About 8 s of work at the bound (4.2 requests per account on this export), at least 1,000 accounts.
      const accounts = count ?? Math.max(1000, Math.round((concurrency / (LATENCY_MS / 1000) / 4.2) * 8));
      await withExport(accounts, order, async (dir, generated) => {
        const checked = accounts <= CHECKED_UP_TO;
        const expected = checked ? await exportInMemory(dir, { MIGRATE_SUPPLIER: 'ACME' }) : undefined;
        const minimum = generated.minimumRequests / accounts;
        const bound = concurrency / ((LATENCY_MS / 1000) * minimum);
        const runs: Array<PushFigures & { share: number }> = [];
        for (let run = 0; run < RUNS; run += 1) {
          const server = await startServer(LATENCY_MS, PROCESSING, checked);
          const figures = await pushChild(server, dir, concurrency);
          const wrong = expected === undefined ? undefined : await exactness(server, expected);
          await stopServer(server);
          const share = accounts / figures.seconds / bound;
          runs.push({ ...figures, share });
          const verdict =
            wrong === undefined ? 'not compared' : wrong.length === 0 ? 'exact' : `NOT EXACT: ${wrong.slice(0, 3)}`;
          console.log(
            `    run ${run + 1}: ${figures.seconds.toFixed(1)} s, share ${share.toFixed(2)}, ` +
              `${(figures.requests / accounts).toFixed(2)} requests/account, first request ${figures.firstRequestSeconds.toFixed(2)} s ` +
              `(order proven in ${figures.proofSeconds.toFixed(2)} s, first accounts staged ${figures.toFirstStagedSeconds.toFixed(2)} s later), ` +
              `${(figures.cpuMicros / figures.requests).toFixed(0)} µs CPU/request (sandbox ${(figures.serverCpuMicros / figures.requests).toFixed(0)}), ` +
              `exit ${figures.exitCode}, ${verdict}; ${load()}`,
          );
          if (process.env['BENCH_ENDPOINTS']) console.log(`      ${JSON.stringify(figures.byEndpoint)}`);
          if (process.env['BENCH_TIMELINE']) printTimeline(figures.timeline);
        }
        const of = (pick: (run: PushFigures & { share: number }) => number): number => median(runs.map(pick));
        console.log(
          `  concurrency ${String(concurrency).padStart(3)}, ${order}: ${accounts} accounts, bound ${bound.toFixed(0)} accounts/s; ` +
            `share ${of((r) => r.share).toFixed(2)} (goal 0.9, limit 0.75 at 32); ` +
            `${of((r) => r.requests / accounts).toFixed(2)} requests/account sent, minimum ${minimum.toFixed(2)}; ` +
            `first request after ${of((r) => r.firstRequestSeconds).toFixed(2)} s ` +
            `(proof ${of((r) => r.proofSeconds).toFixed(2)} s, then ${of((r) => r.toFirstStagedSeconds).toFixed(2)} s to the first accounts staged); ` +
            `${of((r) => r.cpuMicros / r.requests).toFixed(0)} µs CPU/request`,
        );
      });
    }
}

async function first(count = 200_000): Promise<void> {
  const concurrency = 32;
  const stopAfter = Number(process.env['BENCH_STOP_AFTER'] ?? 3) * 1000;
  for (const order of orders(['sorted'])) {
    console.log(
      `first request and memory: ${order} export of ${count} accounts (every record kind), sandbox answering at once, ` +
        `concurrency ${concurrency}, stopped ${stopAfter / 1000} s after the first request; no earlier run or validate`,
    );
    await withExport(count, order, async (dir) => {
      for (let run = 0; run < RUNS; run += 1) {
        const server = await startServer(0, '0', false);
        const figures = await pushChild(server, dir, concurrency, stopAfter);
        await stopServer(server);
        const staged = figures.startSeconds + figures.proofSeconds + figures.toFirstStagedSeconds;
        console.log(
          `    run ${run + 1}: first request after ${figures.firstRequestSeconds.toFixed(2)} s (goal 1 s at 200,000 sorted, 10 s at 1,000,000 scattered): ` +
            `start-up ${figures.startSeconds.toFixed(2)} s, order proven in ${figures.proofSeconds.toFixed(2)} s, ` +
            `first accounts staged ${figures.toFirstStagedSeconds.toFixed(2)} s later, first request ` +
            `${(figures.firstRequestSeconds - staged).toFixed(2)} s after that; ` +
            `child CPU to the first request ${(figures.cpuToFirstMicros / 1e6).toFixed(2)} s; peak RSS ${figures.maxRssMb.toFixed(0)} MB; ` +
            `${figures.requests} requests in ${figures.seconds.toFixed(0)} s, exit ${figures.exitCode}; ${load()}`,
        );
      }
    });
  }
}

const [mode = 'throughput', size] = process.argv.slice(2);
const accounts = size === undefined ? undefined : Number(size);
if (mode === 'first') await first(accounts);
else if (mode === 'postgres') await (await import('./push-postgres.js')).postgresBench(accounts);
else await throughput(accounts);
