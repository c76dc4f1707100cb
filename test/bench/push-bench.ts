import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface, type Interface } from 'node:readline';
import PQueue from 'p-queue';
import { Pool } from 'undici';
import { writePushExport, type ExportShape, type GeneratedExport } from './push-export.js';

// `npm run bench:push [-- throughput|cpu|first [ACCOUNTS]]` (builds dist/ first). What a user waits
// for: the real binary (`node bin/migrate.js push DIR --base-url URL --concurrency N`, the API key
// in MIGRATE_API_KEY) timed as a child process from spawn to exit, against the sandbox in its own
// process. Each figure is the median of BENCH_RUNS runs (default 3), each on a fresh sandbox and
// ledger; the load average is printed beside it (the machine is shared).
//  throughput: an export with every record kind (push-export.ts), sandbox answering in 20 ms and
//    processing in 100 ms, concurrency 8, 32, 128 (BENCH_CONCURRENCY=N for one). Printed: share of
//    the bound concurrency / (0.020 s x fewest requests per account allowed by the spec, counted
//    from the export) end to end; requests per account sent (the sandbox's count) against that
//    minimum; seconds to the first request; client CPU per request (the child's own CPU time); after
//    each run, bare undici's CPU per request on the same sandbox (the machine's speed at the time).
//  cpu: the same export against a sandbox answering at once, concurrency 32: the child's CPU per
//    request once the export is staged (the requests before share the process with staging) beside
//    bare undici requests (Pool.request through p-queue, same concurrency, same sandbox) made by
//    this process in the same run: GETs of an account's status (the limit's baseline), and the very
//    requests migrate sent once the export was staged, sent again (request-recorder.mjs records them;
//    the sandbox then answers that the accounts and records exist): what those requests cost
//    without migrate.
//  first: a sorted export of ACCOUNTS (default 1,000,000) accounts with one note each, sandbox
//    answering at once, concurrency 32: seconds to the first request and the child's peak RSS.
//    BENCH_STOP_AFTER=S interrupts the push (SIGINT, a clean stop) S seconds after its first request.

const ROOT = join(import.meta.dirname, '..', '..');
const LATENCY_MS = 20;
const RUNS = Number(process.env['BENCH_RUNS'] ?? 3);

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

async function startServer(latencyMs: number, processingMs: number): Promise<Server> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', join(ROOT, 'test/bench/push-sandbox-server.ts'), String(latencyMs), String(processingMs)],
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

async function requestsSince(server: Server, from: number): Promise<number> {
  const answer = nextLine(server.lines);
  server.child.stdin?.write(`since ${from}\n`);
  return (JSON.parse(await answer) as { requests: number }).requests;
}

async function stopServer(server: Server): Promise<void> {
  const exited = new Promise((resolve) => server.child.once('exit', resolve));
  server.child.stdin?.end();
  await exited;
}

interface PushFigures {
  seconds: number;
  exitCode: number | null;
  requests: number;
  firstRequestSeconds: number;
  cpuMicros: number;
  /** CPU time from the first request to exit (start-up left out; staging overlaps sending). */
  sendingCpuMicros: number;
  /**
   * After the export was staged (the `staged` line on stderr): CPU time to exit and requests sent; with
   * `recordRequests`, also the CPU time to the last request (what follows it is the run's ending: its summary, the
   * ledger's checkpoint and close, once per run whatever its size).
   */
  afterStaging: { cpuMicros: number; requests: number; toLastRequestMicros?: number } | undefined;
  /** The sandbox process's CPU time during the push (is the stand-in of the service the limit?). */
  serverCpuMicros: number;
  maxRssMb: number;
  byEndpoint: Record<string, number>;
  timeline: Array<Record<string, number>>;
  /** With `recordRequests`: the requests migrate made once the export was staged (request-recorder.mjs). */
  recordedAfterStaging: RecordedRequest[];
}

/** A request as request-recorder.mjs wrote it: epoch ms, method, path with query, body (null: none). */
type RecordedRequest = [number, string, string, string | null];

/** Runs `migrate push` as a child process from spawn to exit; its CPU time and peak RSS come from cpu-hook.mjs. */
async function pushChild(
  server: Server,
  dir: string,
  concurrency: number,
  options: { stopAfterMs?: number; recordRequests?: boolean } = {},
): Promise<PushFigures> {
  const { stopAfterMs } = options;
  const state = mkdtempSync(join(tmpdir(), 'bench-push-state-'));
  const usageFile = join(state, 'usage.json');
  const requestsFile = join(state, 'requests.json');
  const serverCpuBefore = (await statsOf(server)).cpuMicros;
  const startedAt = Date.now();
  const child = spawn(
    process.execPath,
    [
      '--import',
      join(ROOT, 'test/bench/cpu-hook.mjs'),
      ...(options.recordRequests ? ['--import', join(ROOT, 'test/bench/request-recorder.mjs')] : []),
      join(ROOT, 'bin/migrate.js'),
      'push',
      dir,
      '--base-url',
      server.url,
      '--concurrency',
      String(concurrency),
      '--state',
      state,
      '--json',
    ],
    {
      stdio: ['ignore', 'ignore', 'pipe'],
      env: {
        ...process.env,
        MIGRATE_API_KEY: server.apiKey,
        BENCH_USAGE_FILE: usageFile,
        ...(options.recordRequests ? { BENCH_REQUESTS_FILE: requestsFile } : {}),
      },
    },
  );
  let stderr = '';
  let stagedAt: number | undefined;
  child.stderr?.on('data', (chunk: Buffer) => {
    const text = chunk.toString();
    if (stagedAt === undefined && /migrate: staged \d+ accounts/.test(text)) stagedAt = Date.now();
    if (stderr.length < 4000) stderr += text;
  });
  let stopper: NodeJS.Timeout | undefined;
  if (stopAfterMs !== undefined) {
    // One question at a time: a busy sandbox answers late, and every waiting listener would take the same line.
    let asking = false;
    stopper = setInterval(() => {
      if (asking) return;
      asking = true;
      void statsOf(server).then((stats) => {
        asking = false;
        if (stats.firstAt !== null && Date.now() - stats.firstAt > stopAfterMs) {
          clearInterval(stopper);
          child.kill('SIGINT');
        }
      });
    }, 250);
  }
  const exitCode = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  const seconds = (Date.now() - startedAt) / 1000;
  clearInterval(stopper);
  const stats = await statsOf(server);
  const usage = JSON.parse(readFileSync(usageFile, 'utf8')) as {
    user: number;
    system: number;
    maxRssKb: number;
    samples: Array<[number, number]>;
  };
  // The last sample taken before a moment: the CPU spent until then.
  const cpuAt = (moment: number | null): number =>
    usage.samples.filter(([at]) => moment !== null && at <= moment).at(-1)?.[1] ?? 0;
  const before = cpuAt(stats.firstAt);
  const recorded = options.recordRequests
    ? (JSON.parse(readFileSync(requestsFile, 'utf8')) as RecordedRequest[]).filter(
        ([at]) => stagedAt === undefined || at >= stagedAt,
      )
    : [];
  const lastRequestAt = recorded.at(-1)?.[0];
  const afterStaging =
    stagedAt === undefined
      ? undefined
      : {
          cpuMicros: usage.user + usage.system - cpuAt(stagedAt),
          requests: await requestsSince(server, stagedAt),
          ...(lastRequestAt === undefined ? {} : { toLastRequestMicros: cpuAt(lastRequestAt) - cpuAt(stagedAt) }),
        };
  rmSync(state, { recursive: true, force: true });
  if (exitCode !== 0 && stopAfterMs === undefined) process.stderr.write(`  push exited ${exitCode}: ${stderr}\n`);
  return {
    seconds,
    exitCode,
    requests: stats.requests,
    firstRequestSeconds: stats.firstAt === null ? NaN : (stats.firstAt - startedAt) / 1000,
    cpuMicros: usage.user + usage.system,
    sendingCpuMicros: usage.user + usage.system - before,
    afterStaging,
    serverCpuMicros: stats.cpuMicros - serverCpuBefore,
    maxRssMb: usage.maxRssKb / 1024,
    byEndpoint: stats.byEndpoint,
    timeline: stats.timeline,
    recordedAfterStaging: recorded,
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

async function withExport<T>(
  count: number,
  shape: ExportShape,
  use: (dir: string, generated: GeneratedExport) => Promise<T>,
): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-push-export-'));
  try {
    return await use(dir, await writePushExport(dir, count, shape));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function throughput(count?: number): Promise<void> {
  const levels = process.env['BENCH_CONCURRENCY'] ? [Number(process.env['BENCH_CONCURRENCY'])] : [8, 32, 128];
  console.log(
    `push end to end (real binary, spawn to exit), sandbox latency ${LATENCY_MS} ms, processing 100 ms; median of ${RUNS}`,
  );
  for (const concurrency of levels) {
    // About 8 s of work at the bound (4.2 requests per account on this export), at least 1,000 accounts.
    const accounts = count ?? Math.max(1000, Math.round((concurrency / (LATENCY_MS / 1000) / 4.2) * 8));
    await withExport(accounts, 'full', async (dir, generated) => {
      const minimum = generated.minimumRequests / accounts;
      const bound = concurrency / ((LATENCY_MS / 1000) * minimum);
      const runs: Array<PushFigures & { share: number; load: string; speed: number }> = [];
      for (let run = 0; run < RUNS; run += 1) {
        const server = await startServer(LATENCY_MS, 100);
        const figures = await pushChild(server, dir, concurrency);
        const speed = await machineSpeed(server);
        await stopServer(server);
        const share = accounts / figures.seconds / bound;
        runs.push({ ...figures, share, load: load(), speed });
        console.log(
          `    run ${run + 1}: ${figures.seconds.toFixed(1)} s, share ${share.toFixed(2)}, ${(figures.requests / accounts).toFixed(2)} requests/account, first request ${figures.firstRequestSeconds.toFixed(2)} s, ${(figures.cpuMicros / figures.requests).toFixed(0)} µs CPU/request (${(figures.sendingCpuMicros / figures.requests).toFixed(0)} from the first request on; sandbox ${(figures.serverCpuMicros / figures.requests).toFixed(0)}), exit ${figures.exitCode}, ${runs.at(-1)?.load}; bare undici ${speed.toFixed(0)} µs CPU/request`,
        );
        if (process.env['BENCH_ENDPOINTS']) console.log(`      ${JSON.stringify(figures.byEndpoint)}`);
        if (process.env['BENCH_TIMELINE']) printTimeline(figures.timeline);
      }
      console.log(
        `  concurrency ${String(concurrency).padStart(3)}: ${accounts} accounts, bound ${bound.toFixed(0)} accounts/s; ` +
          `share ${median(runs.map((r) => r.share)).toFixed(2)} (limit >= 0.8 at 32, goal 0.9); ` +
          `${median(runs.map((r) => r.requests / accounts)).toFixed(2)} requests/account sent, minimum ${minimum.toFixed(2)}; ` +
          `first request after ${median(runs.map((r) => r.firstRequestSeconds)).toFixed(2)} s; ` +
          `${median(runs.map((r) => r.cpuMicros / r.requests)).toFixed(0)} µs CPU/request; ${runs.map((r) => r.load).join(', ')}; ` +
          `bare undici ${median(runs.map((r) => r.speed)).toFixed(0)} µs CPU/request`,
      );
    });
  }
}

/** A token for bare requests to the sandbox (the same mutation migrate makes). */
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

/**
 * Bare undici requests (Pool.request, the answer read as text) through p-queue at this concurrency, from this
 * process: CPU µs per request of `measured`, sent after `warmUp`.
 */
async function bareCpu(
  server: Server,
  concurrency: number,
  warmUp: RecordedRequest[],
  measured: RecordedRequest[],
): Promise<number> {
  const pool = new Pool(server.url, { connections: concurrency });
  const token = await tokenOf(server);
  const queue = new PQueue({ concurrency });
  const send = async ([, method, path, body]: RecordedRequest): Promise<string> => {
    const answer = await pool.request({
      path,
      method: method as 'GET' | 'POST',
      headers: body === null ? { authorization: token } : { authorization: token, 'content-type': 'application/json' },
      body,
    });
    return answer.body.text();
  };
  await Promise.all(warmUp.map((request) => queue.add(() => send(request))));
  const cpu = process.cpuUsage();
  await Promise.all(measured.map((request) => queue.add(() => send(request))));
  const used = process.cpuUsage(cpu);
  await pool.close();
  return (used.user + used.system) / measured.length;
}

/**
 * The machine's speed just after a throughput run: bare undici's CPU per request (GETs at concurrency 32 against the same
 * sandbox). The shared machine has run at half its usual speed for hours while its load average stayed low, and the
 * share follows its speed: this figure says which machine a share was measured on.
 */
async function machineSpeed(server: Server): Promise<number> {
  return bareCpu(server, 32, bareGets(300, -300), bareGets(2000, 0));
}

/** GETs of one account's v2 status (an account the sandbox does not have: a small 404): the limit's baseline. */
const bareGets = (count: number, from: number): RecordedRequest[] =>
  Array.from({ length: count }, (_, index) => [0, 'GET', `/v2/data-import/accounts/ACME/BARE-${from + index}/`, null]);

async function cpu(count = 3000): Promise<void> {
  const concurrency = 32;
  console.log(`CPU per request at zero latency, concurrency ${concurrency}, ${count} accounts; median of ${RUNS}`);
  await withExport(count, 'full', async (dir) => {
    const ratios: number[] = [];
    const sendingRatios: number[] = [];
    const sameRatios: number[] = [];
    for (let run = 0; run < RUNS; run += 1) {
      const server = await startServer(0, 0);
      const figures = await pushChild(server, dir, concurrency, { recordRequests: true });
      const bare = await bareCpu(server, concurrency, bareGets(500, -500), bareGets(figures.requests, 0));
      // The requests migrate sent once the export was staged, sent again as they were (the sandbox now answers that
      // the accounts and records exist): what those requests cost undici without migrate.
      const replayed = figures.recordedAfterStaging;
      const same = await bareCpu(server, concurrency, replayed.slice(0, 500), replayed);
      await stopServer(server);
      const whole = figures.cpuMicros / figures.requests;
      const after = figures.afterStaging;
      // Sending alone: from the moment the export is staged (staging runs beside the first requests) to exit.
      const client = after === undefined || after.requests === 0 ? NaN : after.cpuMicros / after.requests;
      // The same without the run's ending, which comes once per run (sampled every 10 ms: the last sample before the
      // last request).
      const sending = (after?.toLastRequestMicros ?? NaN) / (after?.requests ?? NaN);
      const ending = ((after?.cpuMicros ?? NaN) - (after?.toLastRequestMicros ?? NaN)) / 1000;
      ratios.push(client / bare);
      sendingRatios.push(sending / bare);
      sameRatios.push(sending / same);
      console.log(
        `    run ${run + 1}: migrate push ${client.toFixed(0)} µs CPU/request once the export is staged (${after?.requests ?? 0} requests; ${sending.toFixed(0)} µs to its last request, then ${ending.toFixed(0)} ms to exit), ${(figures.sendingCpuMicros / figures.requests).toFixed(0)} µs from its first request (staging beside), ${whole.toFixed(0)} µs for the whole process (${figures.requests} requests, ${figures.seconds.toFixed(1)} s); bare undici + p-queue ${bare.toFixed(0)} µs: ratio ${(client / bare).toFixed(2)} (limit <= 2), ${(sending / bare).toFixed(2)} to the last request; the same ${replayed.length} requests sent by bare undici ${same.toFixed(0)} µs: ratio ${(sending / same).toFixed(2)} to the last request; ${load()}`,
      );
    }
    console.log(
      `  median ratio ${median(ratios).toFixed(2)} (limit <= 2); to the last request ${median(sendingRatios).toFixed(2)}; to the same requests sent by bare undici, to the last request ${median(sameRatios).toFixed(2)}`,
    );
  });
}

async function first(count = 1_000_000): Promise<void> {
  const concurrency = 32;
  const stopAfter = process.env['BENCH_STOP_AFTER'] ? Number(process.env['BENCH_STOP_AFTER']) * 1000 : undefined;
  console.log(
    `first request and memory: sorted export of ${count} accounts (one note each), sandbox answering at once, concurrency ${concurrency}${stopAfter === undefined ? '' : `, stopped ${stopAfter / 1000} s after the first request`}`,
  );
  await withExport(count, 'lean', async (dir) => {
    for (let run = 0; run < RUNS; run += 1) {
      const server = await startServer(0, 0);
      const figures = await pushChild(server, dir, concurrency, { stopAfterMs: stopAfter });
      await stopServer(server);
      console.log(
        `    run ${run + 1}: first request after ${figures.firstRequestSeconds.toFixed(2)} s (limit <= 2); peak RSS ${figures.maxRssMb.toFixed(0)} MB (limit < 300); ${figures.requests} requests in ${figures.seconds.toFixed(0)} s, exit ${figures.exitCode}; ${load()}`,
      );
    }
  });
}

const [mode = 'throughput', size] = process.argv.slice(2);
const accounts = size === undefined ? undefined : Number(size);
if (mode === 'cpu') await cpu(accounts);
else if (mode === 'first') await first(accounts);
else await throughput(accounts);
