import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { createImportServiceClient } from '../../src/api/index.js';
import { keepHeapNearLiveData } from '../../src/cli/heap.js';
import { loadMigrateConfig } from '../../src/config/index.js';
import { DEFAULT_ENGINE_SETTINGS, runPush, type EngineEvent } from '../../src/engine/index.js';
import { Ledger } from '../../src/ledger/index.js';
import { openExport } from '../../src/intake/index.js';
import type { ExportAccount, ExportEntry } from '../../src/mapping/types.js';

// `npm run bench:push [-- throughput|memory [accounts]]`
// throughput: the sandbox (own process) answers in 20 ms; push at concurrency 8, 32 and 128.
//   Each account has one note, so the fewest requests the engine makes for it is 4: create, one
//   v2 status check, one v1 status for its platform account number (v2 gives only the internal
//   platform_identifier), notes; the bound is concurrency / (latency x 4). One imported-accounts
//   list call can stand in for many status checks, so fewer may be sent. Printed: accounts/s, its
//   share of the bound (limit: >= 0.8 at concurrency 32), requests per account actually sent.
// memory: N accounts (default 1,000,000) without latency; peak RSS of the pushing process.

const ROOT = join(import.meta.dirname, '..', '..');
const MIN_REQUESTS_PER_ACCOUNT = 4;

async function startServer(
  latencyMs: number,
  processingMs: number,
): Promise<{ url: string; apiKey: string; child: ChildProcess }> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', join(ROOT, 'test/bench/push-sandbox-server.ts'), String(latencyMs), String(processingMs)],
    { stdio: ['pipe', 'pipe', 'inherit'] },
  );
  const line = await new Promise<string>((resolve) => createInterface({ input: child.stdout }).once('line', resolve));
  return { ...(JSON.parse(line) as { url: string; apiKey: string }), child };
}

/** One valid account of the sample export, as a template: its payload with another number. */
async function template(): Promise<ExportAccount> {
  const config = await loadMigrateConfig({ cwd: ROOT, env: {} });
  const reader = await openExport(join(ROOT, 'fixtures/sample'), config);
  try {
    for await (const entry of reader.entries())
      if (entry.kind === 'account' && entry.account.issues.length === 0) return entry.account;
  } finally {
    await reader.close();
  }
  throw new Error('no valid account in fixtures/sample');
}

async function* accounts(base: ExportAccount, count: number, prefix: string): AsyncGenerator<ExportEntry> {
  for (let n = 0; n < count; n += 1) {
    const number = `${prefix}-${n}`;
    const note = {
      value: { body: `Migrated account ${number}`, created_at: '2026-01-01T09:00:00Z' },
      origin: { file: 'notes.csv', line: n + 2 },
      issues: [],
    };
    yield {
      kind: 'account',
      account: {
        ...base,
        externalAccountNumber: number,
        payload: { ...base.payload, external_account_number: number },
        notes: [note],
        transactions: [],
        statements: [],
        paymentInstructions: [],
      },
    };
  }
}

async function run(
  server: { url: string; apiKey: string },
  base: ExportAccount,
  count: number,
  concurrency: number,
  prefix: string,
  sampleMemory: boolean,
) {
  const dir = mkdtempSync(join(tmpdir(), 'bench-push-'));
  const ledger = Ledger.open(dir);
  ledger.startRun('bench', { concurrency });
  const client = createImportServiceClient({
    baseUrl: server.url,
    credentials: { apiKey: server.apiKey },
    concurrency,
  });
  let startedAt = 0;
  let done = 0;
  let peakRss = process.memoryUsage().rss;
  /** Accounts done when the peak was sampled; -1: while staging. */
  let peakAt = -1;
  const samples: Array<[number, number]> = [];
  const sampler = setInterval(() => {
    const rss = process.memoryUsage().rss;
    if (rss > peakRss) [peakRss, peakAt] = [rss, startedAt > 0 ? done : -1];
    if (sampleMemory) samples.push([done, rss]);
    if (process.env['BENCH_TIMELINE'] && startedAt > 0)
      process.stderr.write(
        `${((performance.now() - startedAt) / 1000).toFixed(1)}s done ${done} inflight ${client.stats().inFlight} queued ${client.stats().queued} limit ${client.stats().concurrencyLimit}\n`,
      );
  }, 250);
  const sink = {
    emit: (event: EngineEvent) => {
      if (event.type === 'plan') startedAt = performance.now();
      if (event.type === 'account' && event.to === 'done') done += 1;
      if (event.type === 'staging' && sampleMemory && event.accounts % 100_000 === 0)
        console.log(`  staged ${event.accounts}, rss ${(process.memoryUsage().rss / 2 ** 20).toFixed(0)} MiB`);
    },
  };
  const settings = { ...DEFAULT_ENGINE_SETTINGS, concurrency };
  const result = await runPush({ ledger, client, settings, sink, entries: accounts(base, count, prefix) });
  const seconds = (performance.now() - startedAt) / 1000;
  clearInterval(sampler);
  const requests = client.stats().requests;
  await client.close();
  ledger.close();
  rmSync(dir, { recursive: true, force: true });
  return { result, seconds, done, requests, peakRss, peakAt, samples };
}

/** Requests/s the bare client gets from this sandbox at this concurrency (v2 status GETs): the machine's own ceiling. */
async function bareCeiling(server: { url: string; apiKey: string }, concurrency: number): Promise<number> {
  const client = createImportServiceClient({
    baseUrl: server.url,
    credentials: { apiKey: server.apiKey },
    concurrency,
  });
  await client.getImportStatus('ACME', 'warm-up');
  const start = performance.now();
  let sent = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() - start < 3000) {
        await client.getImportStatus('ACME', `none-${sent}`);
        sent += 1;
      }
    }),
  );
  await client.close();
  return sent / ((performance.now() - start) / 1000);
}

async function throughput(count?: number): Promise<void> {
  const latencyMs = 20;
  const server = await startServer(latencyMs, 100);
  const base = await template();
  console.log(
    `push throughput, sandbox latency ${latencyMs} ms, one note per account (min ${MIN_REQUESTS_PER_ACCOUNT} requests/account)`,
  );
  for (const concurrency of process.env['BENCH_CONCURRENCY']
    ? [Number(process.env['BENCH_CONCURRENCY'])]
    : [8, 32, 128]) {
    const bound = concurrency / ((latencyMs / 1000) * MIN_REQUESTS_PER_ACCOUNT);
    const n = count ?? Math.ceil(bound * 8);
    const ceiling = await bareCeiling(server, concurrency);
    const r = await run(server, base, n, concurrency, `C${concurrency}`, false);
    const rate = r.done / r.seconds;
    const requestRate = r.requests / r.seconds;
    console.log(
      `  concurrency ${String(concurrency).padStart(3)}: ${n} accounts in ${r.seconds.toFixed(1)} s = ${rate.toFixed(0)} accounts/s; ` +
        `bound ${bound.toFixed(0)}/s; share ${(rate / bound).toFixed(2)} (limit >= 0.8 at 32, goal 0.9); ` +
        `${(r.requests / n).toFixed(2)} requests/account sent; ${requestRate.toFixed(0)} requests/s = ${(requestRate / ceiling).toFixed(2)} of the bare client's ${ceiling.toFixed(0)} requests/s here ` +
        `(share of the bound: ${(ceiling / (concurrency / (latencyMs / 1000))).toFixed(2)}); ${r.result.reason}, exit ${r.result.exitCode}`,
    );
  }
  server.child.stdin?.end();
}

async function memory(count: number): Promise<void> {
  // As bin/migrate.js does.
  keepHeapNearLiveData();
  const server = await startServer(0, 0);
  const base = await template();
  console.log(`push memory: ${count} accounts, sandbox without latency, concurrency 32`);
  const r = await run(server, base, count, 32, 'M', true);
  const step = Math.max(1, Math.floor(r.samples.length / 10));
  for (let i = 0; i < r.samples.length; i += step) {
    const [done, rss] = r.samples[i] ?? [0, 0];
    console.log(`  ${String(done).padStart(8)} done: rss ${(rss / 2 ** 20).toFixed(0)} MiB`);
  }
  console.log(
    `  ${r.done} accounts done in ${r.seconds.toFixed(0)} s (${(r.done / r.seconds).toFixed(0)}/s); peak RSS ${(r.peakRss / 2 ** 20).toFixed(0)} MiB (${r.peakAt < 0 ? 'while staging' : `at ${r.peakAt} accounts done`}); ${r.result.reason}, exit ${r.result.exitCode}`,
  );
  server.child.stdin?.end();
}

const [mode = 'throughput', size] = process.argv.slice(2);
if (mode === 'memory') await memory(Number(size ?? 1_000_000));
else await throughput(size === undefined ? undefined : Number(size));
