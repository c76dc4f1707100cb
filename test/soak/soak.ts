import { spawn, execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { SandboxOptions } from '../../src/sandbox/index.js';
import { writeE2eExport } from '../e2e/export.js';
import { exportInMemory } from '../e2e/oracle.js';
import { compare, unknownPaymentAccounts } from './compare.js';
import { startSandboxProcess } from './sandbox-child.js';

// `npm run soak` (docs/soak.md): the real binary as a child process against the sandbox in its
// own process, over loopback HTTP, through a matrix of faults. Each cell pushes a generated
// export (every record kind) until the run ends cleanly, then compares the sandbox's final state
// exactly with the export's expected outcome and checks that unknown-outcome.csv is empty.

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const BIN = path.join(ROOT, 'bin', 'migrate.js');
const ACCOUNTS = Number(process.env['SOAK_ACCOUNTS'] ?? 120);
const MAX_RUNS = 12;

/** A TCP proxy in front of the sandbox that can refuse every connection for a while (an outage). */
async function startProxy(target: number): Promise<{ port: number; outage(ms: number): Promise<void>; close(): void }> {
  const sockets = new Set<net.Socket>();
  const make = (): net.Server =>
    net.createServer((client) => {
      const upstream = net.connect(target, '127.0.0.1');
      for (const socket of [client, upstream]) {
        sockets.add(socket);
        socket.on('close', () => sockets.delete(socket));
        socket.on('error', () => undefined);
      }
      client.pipe(upstream).pipe(client);
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
  let server = make();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  return {
    port,
    outage: async (ms) => {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const socket of sockets) socket.destroy();
      });
      await new Promise((resolve) => setTimeout(resolve, ms));
      server = make();
      await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    },
    close: () => {
      server.close();
      for (const socket of sockets) socket.destroy();
    },
  };
}

interface PushRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stderr: string;
}

function push(
  port: number,
  apiKey: string,
  exportDir: string,
  stateDir: string,
  killAfterMs?: number,
): Promise<PushRun> {
  const args = [BIN, 'push', exportDir, '--state', stateDir, '--base-url', `http://127.0.0.1:${port}`];
  const child = spawn(process.execPath, [...args, '--wait-timeout', '60', '--json'], {
    env: { ...process.env, MIGRATE_API_KEY: apiKey, NO_COLOR: '1' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const timer = killAfterMs === undefined ? undefined : setTimeout(() => child.kill('SIGKILL'), killAfterMs);
  return new Promise((resolve) =>
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stderr });
    }),
  );
}

/** Data rows of `migrate report`'s unknown-outcome.csv. */
function unknownOutcomeRows(stateDir: string, work: string): number {
  const out = path.join(work, 'report');
  execFileSync(process.execPath, [BIN, 'report', '--state', stateDir, '--out', out], { stdio: 'ignore' });
  return readFileSync(path.join(out, 'unknown-outcome.csv'), 'utf8').trim().split('\n').length - 1;
}

interface Cell {
  name: string;
  sandbox: Partial<SandboxOptions>;
  /** Prepares the state directory (or says why the cell cannot run here). */
  state?: (work: string) => { dir: string; cleanup(): void } | string;
  /** Drives the first runs (faults beyond the sandbox's own); the soak then runs push until it ends cleanly. */
  disturb?: (context: CellContext) => Promise<void>;
}

interface CellContext {
  port: number;
  apiKey: string;
  exportDir: string;
  stateDir: string;
  proxy: { outage(ms: number): Promise<void> };
  runs: PushRun[];
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

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

const CELLS: Cell[] = [
  { name: 'harsh faults (500, 429, resets, lost answers, 20 s tokens)', sandbox: HARSH },
  {
    name: 'harsh faults + 4 SIGKILLs',
    sandbox: HARSH,
    disturb: async (context) => {
      for (let kill = 0; kill < 4; kill += 1)
        context.runs.push(
          await push(context.port, context.apiKey, context.exportDir, context.stateDir, 1500 + kill * 700),
        );
    },
  },
  {
    name: 'service unreachable for 30 s mid-run',
    sandbox: {},
    disturb: async (context) => {
      const run = push(context.port, context.apiKey, context.exportDir, context.stateDir);
      await sleep(1500);
      await context.proxy.outage(30_000);
      context.runs.push(await run);
    },
  },
  { name: 'tokens expiring every 3 s', sandbox: { tokenTtlSeconds: 3 } },
  {
    name: 'state directory disk full mid-run',
    sandbox: {},
    state: tmpfsState,
    disturb: async (context) => {
      // The disk is filled up to 1 MB before the run: the ledger outgrows it during the run
      // (filling it after a delay raced a run that had already finished).
      const filler = path.join(path.dirname(context.stateDir), 'filler');
      execFileSync('dd', ['if=/dev/zero', `of=${filler}`, 'bs=64k', 'count=240'], { stdio: 'ignore' });
      const run = await push(context.port, context.apiKey, context.exportDir, context.stateDir);
      context.runs.push(run);
      rmSync(filler, { force: true });
      if (run.code !== 3 || !/cannot be written \(the disk is full/.test(run.stderr))
        throw new Error(`the disk did not fill during the run (exit ${run.code ?? run.signal})`);
    },
  },
];

/** A state directory on a 16 MB tmpfs (root only), so that the disk can be filled. */
function tmpfsState(work: string): { dir: string; cleanup(): void } | string {
  const mount = path.join(work, 'tmpfs');
  mkdirSync(mount);
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=16m', 'tmpfs', mount], { stdio: 'ignore' });
  } catch {
    return 'skipped: mounting a small tmpfs needs root';
  }
  return { dir: path.join(mount, 'state'), cleanup: () => execFileSync('umount', [mount], { stdio: 'ignore' }) };
}

async function runCell(
  cell: Cell,
  index: number,
): Promise<{ line: string; pass: boolean; exact: boolean; unknown: number }> {
  const started = Date.now();
  const work = mkdtempSync(path.join(os.tmpdir(), 'migrate-soak-'));
  const data = writeE2eExport(work, ACCOUNTS, `SOAK${index}`);
  const expected = await exportInMemory(data.dir, { MIGRATE_SUPPLIER: 'ACME' });
  const state = cell.state ? cell.state(work) : { dir: path.join(work, 'state'), cleanup: () => undefined };
  if (typeof state === 'string') {
    rmSync(work, { recursive: true, force: true });
    return { line: `${cell.name}: ${state}`, pass: true, exact: true, unknown: 0 };
  }
  const sandbox = await startSandboxProcess({ processingMs: 200, seed: 11 + index, ...cell.sandbox });
  const proxy = await startProxy(sandbox.port);
  const context: CellContext = {
    port: proxy.port,
    apiKey: sandbox.apiKey,
    exportDir: data.dir,
    stateDir: state.dir,
    proxy,
    runs: [],
  };
  let problems: string[] = ['never ended cleanly'];
  let unknown = new Set<string>();
  try {
    await cell.disturb?.(context);
    while (context.runs.length < MAX_RUNS) {
      const run = await push(context.port, context.apiKey, data.dir, state.dir);
      context.runs.push(run);
      if (![0, 1, 5].includes(run.code ?? -1)) continue; // finished what it could (README "Exit codes")
      unknown = unknownPaymentAccounts(state.dir);
      problems = compare(data, expected, await sandbox.dump(), unknown);
      if (problems.length === 0) break;
    }
    const rows = unknownOutcomeRows(state.dir, work);
    const codes = context.runs.map((run) => run.code ?? run.signal).join(',');
    const seconds = ((Date.now() - started) / 1000).toFixed(1);
    const other = rows - unknown.size;
    if (other > 0) problems.push(`unknown-outcome.csv has ${other} row(s) besides payment instructions`);
    const finding = unknown.size > 0 ? `; FINDING: ${unknown.size} payment instruction(s) unknown` : '';
    const verdict =
      problems.length === 0 ? 'exact' : `NOT EXACT (${problems.length}: ${problems.slice(0, 3).join('; ')})`;
    const fatal = context.runs
      .map((run) => /migrate: (?!warning)(.*)$/m.exec(run.stderr)?.[1])
      .find((line) => line?.includes('internal error'));
    if (fatal) problems.push(fatal);
    // unknown-outcome.csv must be empty: unknown payment instructions are reported as what they are.
    return {
      line: `${cell.name}: ${fatal ? `FAIL (${fatal})` : verdict} in ${seconds} s, ${context.runs.length} runs (exit ${codes}), unknown-outcome.csv ${rows} row(s)${finding}`,
      pass: problems.length === 0 && rows === 0,
      exact: problems.length === 0,
      unknown: unknown.size,
    };
  } finally {
    proxy.close();
    await sandbox.close();
    try {
      state.cleanup();
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  }
}

async function main(): Promise<void> {
  const started = Date.now();
  let passed = 0;
  let exact = 0;
  let unknown = 0;
  for (const [index, cell] of CELLS.entries()) {
    const result = await runCell(cell, index);
    process.stdout.write(`${result.line}\n`);
    if (result.pass) passed += 1;
    if (result.exact) exact += 1;
    unknown += result.unknown;
  }
  const seconds = ((Date.now() - started) / 1000).toFixed(0);
  process.stdout.write(
    `total: ${passed}/${CELLS.length} cells clean, ${exact}/${CELLS.length} exact, ${ACCOUNTS} accounts each, ${unknown} unknown payment instruction(s), ${seconds} s\n`,
  );
  process.exitCode = passed === CELLS.length ? 0 : 1;
}

// `npm run soak -- postgres`: the cells of the shared PostgreSQL ledger (soak-postgres.ts).
if (process.argv[2] === 'postgres') await (await import('./soak-postgres.js')).soakPostgres();
else await main();
