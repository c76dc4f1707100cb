import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, statSync, readdirSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface, type Interface } from 'node:readline';
import { eventAt, measuredPush } from './measured-push.js';
import { writeLegacyExport } from './shape-export.js';

// npm run bench:shape [-- 1000000 250000]
// A legacy CIS export in the field's shape through the guide's SQL (shape-export.ts: 49 columns, one row per supply
// point, joint holders side by side, Excel notes, a pipe-delimited finance dump with four postings per account; the
// shape numbers supply points with a window, groups them into one row per account, totals the postings and joins).
// `migrate push` runs against the sandbox in its own process (no latency, answering at once) and is stopped 3 s after
// its first request, twice per size: with the default engine memory, and with --shape-memory 256MB (which must
// complete by spilling). Reported: seconds to the first request (goal 60 s, limit 120 s at 1,000,000 accounts on two
// cores), the push's CPU seconds, its peak RSS against 2 GB (default) and 1 GB (256MB), and the load average. Not
// asserted.

const ROOT = join(import.meta.dirname, '..', '..');
const FIRST_REQUEST_GOAL_S = 60;
const FIRST_REQUEST_LIMIT_S = 120;
const RUNS = [
  { name: 'default memory', args: [] as string[], rssLimitMb: 2048 },
  { name: '--shape-memory 256MB', args: ['--shape-memory', '256MB'], rssLimitMb: 1024 },
];
const STOP_AFTER_MS = 3000;

interface Server {
  url: string;
  apiKey: string;
  child: ChildProcess;
  lines: Interface;
}

const nextLine = (lines: Interface): Promise<string> => new Promise((resolve) => lines.once('line', resolve));

async function startServer(): Promise<Server> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', join(ROOT, 'test/bench/push-sandbox-server.ts'), '0', '0', 'lean'],
    { stdio: ['pipe', 'pipe', 'inherit'] },
  );
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  return { ...(JSON.parse(await nextLine(lines)) as { url: string; apiKey: string }), child, lines };
}

async function firstAt(server: Server): Promise<number | null> {
  const answer = nextLine(server.lines);
  server.child.stdin?.write('stats\n');
  return (JSON.parse(await answer) as { firstAt: number | null }).firstAt;
}

interface Figures {
  /** The push's own CPU time (user + system) until it was stopped: what a loaded machine does not inflate. */
  cpuSeconds: number;
  firstRequestSeconds: number;
  firstStagedSeconds: number;
  maxRssMb: number;
  exitCode: number | null;
}

async function pushOnce(server: Server, dir: string, extra: string[]): Promise<Figures> {
  const run = await measuredPush({
    bin: join(ROOT, 'bin/migrate.js'),
    args: [dir, '--base-url', server.url, ...extra],
    apiKey: server.apiKey,
    stopAfter: { ms: STOP_AFTER_MS, firstAt: () => firstAt(server) },
  });
  const first = await firstAt(server);
  if (first === null) process.stderr.write(`push sent nothing (exit ${run.exitCode}): ${run.stderr}\n`);
  return {
    firstRequestSeconds: first === null ? NaN : (first - run.startedAt) / 1000,
    firstStagedSeconds: (eventAt(run.events, 'staging') - run.startedAt) / 1000,
    maxRssMb: run.usage.maxRssKb / 1024,
    cpuSeconds: (run.usage.user + run.usage.system) / 1e6,
    exitCode: run.exitCode,
  };
}

const load = (): string => loadavg()[0]?.toFixed(1) ?? '?';

function report(run: (typeof RUNS)[number], figures: Figures, loadBefore: string): string {
  const first = figures.firstRequestSeconds;
  return (
    `  ${run.name}: first request after ${first.toFixed(1)} s (${(first / FIRST_REQUEST_GOAL_S).toFixed(2)} of the ` +
    `${FIRST_REQUEST_GOAL_S} s goal, ${(first / FIRST_REQUEST_LIMIT_S).toFixed(2)} of the ${FIRST_REQUEST_LIMIT_S} s ` +
    `limit); first accounts staged after ${figures.firstStagedSeconds.toFixed(1)} s (sources loaded, views shaped ` +
    `and sorted); push CPU ${figures.cpuSeconds.toFixed(1)} s (stopped ${STOP_AFTER_MS / 1000} s after its first ` +
    `request); peak RSS ${figures.maxRssMb.toFixed(0)} MB (${(figures.maxRssMb / run.rssLimitMb).toFixed(2)} of ` +
    `${run.rssLimitMb} MB); exit ${figures.exitCode}; load average ${loadBefore} before, ${load()} after, on ` +
    `${availableParallelism()} cores`
  );
}

const sizes = process.argv
  .slice(2)
  .map(Number)
  .filter((size) => size > 0);
for (const accounts of sizes.length > 0 ? sizes : [1_000_000]) {
  const dir = mkdtempSync(join(tmpdir(), 'bench-shape-'));
  try {
    const made = Date.now();
    await writeLegacyExport(dir, accounts);
    const megabytes = readdirSync(dir).reduce((sum, name) => sum + statSync(join(dir, name)).size, 0) / 2 ** 20;
    console.log(
      `legacy export of ${accounts.toLocaleString('en-GB')} accounts: ${megabytes.toFixed(0)} MB, written in ` +
        `${((Date.now() - made) / 1000).toFixed(1)} s`,
    );
    for (const run of RUNS) {
      const server = await startServer();
      try {
        const before = load();
        console.log(report(run, await pushOnce(server, dir, run.args), before));
      } finally {
        server.child.stdin?.end();
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
