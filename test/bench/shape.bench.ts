import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, statSync, readdirSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface, type Interface } from 'node:readline';
import { eventAt, measuredPush } from './measured-push.js';
import { writeLegacyExport } from './shape-export.js';

// npm run bench:shape [-- 1000000]
// A legacy CIS export through a shape file (docs/export-format.md "Shaping legacy files with SQL"): wide accounts one
// row per supply point, joint holders side by side, Excel notes, a pipe-delimited finance dump (shape-export.ts).
// `migrate push` runs against the sandbox in its own process (no latency, answering at once) and is stopped 3 s after
// its first request. Reported: seconds to the first request, where they went (loading the sources and sorting the
// views happen before the first account is staged), and the push's peak RSS, as ratios to the limits: RSS 512 MB;
// time against 10 s, the limit of a scattered 1,000,000-account export in the tool's own layout (the legacy export
// has no limit of its own). Not asserted.

const ROOT = join(import.meta.dirname, '..', '..');
const RSS_LIMIT_MB = 512;
const TIME_REFERENCE_S = 10;
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

async function pushOnce(server: Server, dir: string): Promise<Figures> {
  const run = await measuredPush({
    bin: join(ROOT, 'bin/migrate.js'),
    args: [dir, '--base-url', server.url],
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
    const server = await startServer();
    try {
      const figures = await pushOnce(server, dir);
      console.log(
        `  first request after ${figures.firstRequestSeconds.toFixed(2)} s ` +
          `(${(figures.firstRequestSeconds / TIME_REFERENCE_S).toFixed(2)} of the 10 s reference); first accounts ` +
          `staged after ${figures.firstStagedSeconds.toFixed(2)} s (sources loaded, shape run, views sorted); peak RSS ` +
          `${figures.maxRssMb.toFixed(0)} MB (${(figures.maxRssMb / RSS_LIMIT_MB).toFixed(2)} of the 512 MB limit); ` +
          `push CPU ${figures.cpuSeconds.toFixed(1)} s in all (stopped ${STOP_AFTER_MS / 1000} s after its first ` +
          `request); load average ${loadavg()[0]?.toFixed(1)} on ${availableParallelism()} cores`,
      );
    } finally {
      server.child.stdin?.end();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
