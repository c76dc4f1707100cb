import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { SandboxOptions } from '../../src/sandbox/index.js';
import { writeE2eExport } from '../e2e/export.js';
import { exportInMemory } from '../e2e/oracle.js';
import { startTestCluster, type TestCluster } from '../pg/cluster.js';
import { onSnapshot } from '../pg/ledger-dir.js';
import { compare, unknownPaymentAccounts } from './compare.js';
import { startSandboxProcess, type SandboxProcess } from './sandbox-child.js';

// `npm run soak -- postgres` (docs/soak.md "The shared ledger"): the cells of a PostgreSQL ledger shared by three
// runners, on a throwaway cluster (test/pg/cluster.ts), each ending with the exact comparison of soak.ts.

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const BIN = path.join(ROOT, 'bin', 'migrate.js');
const ACCOUNTS = Number(process.env['SOAK_ACCOUNTS'] ?? 120);
const RUNNERS = 3;
const MAX_RUNS = 12;

interface Run {
  code: number | null;
  signal: NodeJS.Signals | null;
  stderr: string;
}

interface Runner {
  child: ChildProcess;
  done: Promise<Run>;
}

function runner(sandbox: SandboxProcess, exportDir: string, url: string): Runner {
  const args = [BIN, 'push', exportDir, '--ledger', url, '--base-url', sandbox.url, '--concurrency', '3'];
  const child = spawn(process.execPath, [...args, '--wait-timeout', '60', '--json'], {
    env: { ...process.env, MIGRATE_API_KEY: sandbox.apiKey, NO_COLOR: '1' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return {
    child,
    done: new Promise((resolve) => child.on('close', (code, signal) => resolve({ code, signal, stderr }))),
  };
}

/** A deterministic sequence in [0, 1) (Park-Miller), so that a cell's kills can be replayed from its seed. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 48271) % 2147483647;
    return state / 2147483647;
  };
}

const HARSH: Partial<SandboxOptions> = {
  failRate: 0.05,
  rateLimitRate: 0.03,
  retryAfterSeconds: 1,
  dropRate: 0.03,
  ambiguousRate: 0.03,
  faultTokenIssue: true,
  tokenTtlSeconds: 20,
};

interface Context {
  sandbox: SandboxProcess;
  cluster: TestCluster;
  exportDir: string;
  url: string;
  runs: Run[];
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Three runners; every 0.7-1.5 s a random one is SIGKILLed and a new one started in its place (as a Job does), 5 times. */
async function killRandomRunners(context: Context, seed: number): Promise<void> {
  const next = random(seed);
  const live = Array.from({ length: RUNNERS }, () => runner(context.sandbox, context.exportDir, context.url));
  for (let kill = 0; kill < 5; kill += 1) {
    await sleep(700 + next() * 800);
    const index = Math.floor(next() * live.length);
    const victim = live[index];
    if (victim === undefined) continue;
    victim.child.kill('SIGKILL');
    context.runs.push(await victim.done);
    live[index] = runner(context.sandbox, context.exportDir, context.url);
  }
  context.runs.push(...(await Promise.all(live.map((one) => one.done))));
}

/** Three runners; 1.5 s in, the database is stopped for 5 s (a restart), then started again. */
async function restartDatabase(context: Context): Promise<void> {
  const live = Array.from({ length: RUNNERS }, () => runner(context.sandbox, context.exportDir, context.url));
  await sleep(1500);
  await context.cluster.stop();
  await sleep(5000);
  await context.cluster.start();
  context.runs.push(...(await Promise.all(live.map((one) => one.done))));
}

const CELLS: Array<{
  name: string;
  sandbox: Partial<SandboxOptions>;
  disturb: (context: Context, seed: number) => Promise<void>;
}> = [
  {
    name: 'shared ledger: 3 runners, harsh faults, 5 SIGKILLs of random runners',
    sandbox: HARSH,
    disturb: killRandomRunners,
  },
  { name: 'shared ledger: 3 runners, the database restarted mid-run', sandbox: {}, disturb: restartDatabase },
];

async function runCell(cluster: TestCluster, index: number): Promise<{ line: string; pass: boolean }> {
  const cell = CELLS[index];
  if (cell === undefined) throw new Error(`no cell ${index}`);
  const started = Date.now();
  const work = mkdtempSync(path.join(os.tmpdir(), 'migrate-soak-pg-'));
  const data = writeE2eExport(work, ACCOUNTS, `PGSOAK${index}`);
  const expected = await exportInMemory(data.dir, { MIGRATE_SUPPLIER: 'ACME' });
  const sandbox = await startSandboxProcess({ processingMs: 200, seed: 31 + index, ...cell.sandbox });
  const context: Context = { sandbox, cluster, exportDir: data.dir, url: await cluster.newDatabase(), runs: [] };
  let problems: string[] = ['never ended cleanly'];
  let unknown = new Set<string>();
  try {
    await cell.disturb(context, 7 + index);
    // Then one runner until a run ends cleanly, as a Job's next pod or the next night's run would.
    while (context.runs.length < MAX_RUNS + RUNNERS * 3) {
      const run = await runner(sandbox, data.dir, context.url).done;
      context.runs.push(run);
      if (![0, 1, 5].includes(run.code ?? -1)) continue; // finished what it could (README "Exit codes")
      unknown = await onSnapshot(context.url, (dir) => unknownPaymentAccounts(dir));
      problems = compare(data, expected, await sandbox.dump(), unknown);
      if (problems.length === 0) break;
    }
    const rows = unknownOutcomeRows(context.url, work);
    const internal = context.runs.map((run) => /internal error.*$/m.exec(run.stderr)?.[0]).find(Boolean);
    if (internal) problems.push(internal);
    if (rows - unknown.size > 0) problems.push(`unknown-outcome.csv has ${rows - unknown.size} other row(s)`);
    const codes = context.runs.map((run) => run.code ?? run.signal).join(',');
    // Why a runner stopped (exit 3: the service failing 25 requests in a row under the faults, a lease taken over).
    const stops = context.runs
      .filter((run) => run.code === 3)
      .map((run) =>
        /^migrate: (?!warning)(.*)$/m.exec(run.stderr.split('\n').reverse().join('\n'))?.[1]?.slice(0, 160),
      );
    const verdict =
      problems.length === 0 ? 'exact' : `NOT EXACT (${problems.length}: ${problems.slice(0, 3).join('; ')})`;
    const seconds = ((Date.now() - started) / 1000).toFixed(1);
    return {
      line:
        `${cell.name}: ${verdict} in ${seconds} s, ${context.runs.length} runs (exit ${codes}), unknown-outcome.csv ` +
        `${rows} row(s)${stops.length > 0 ? `; exit 3: ${stops.join(' | ')}` : ''}`,
      pass: problems.length === 0 && rows === 0,
    };
  } finally {
    await sandbox.close();
    rmSync(work, { recursive: true, force: true });
  }
}

/** Data rows of `migrate report --ledger`'s unknown-outcome.csv. */
function unknownOutcomeRows(url: string, work: string): number {
  const out = path.join(work, 'report');
  execFileSync(process.execPath, [BIN, 'report', '--ledger', url, '--out', out], { stdio: 'ignore' });
  return readFileSync(path.join(out, 'unknown-outcome.csv'), 'utf8').trim().split('\n').length - 1;
}

export async function soakPostgres(): Promise<void> {
  const started = Date.now();
  const cluster = await startTestCluster();
  let passed = 0;
  try {
    for (const index of CELLS.keys()) {
      const result = await runCell(cluster, index);
      process.stdout.write(`${result.line}\n`);
      if (result.pass) passed += 1;
    }
  } finally {
    await cluster.close();
  }
  const seconds = ((Date.now() - started) / 1000).toFixed(0);
  process.stdout.write(`total: ${passed}/${CELLS.length} cells clean, ${ACCOUNTS} accounts each, ${seconds} s\n`);
  process.exitCode = passed === CELLS.length ? 0 : 1;
}
