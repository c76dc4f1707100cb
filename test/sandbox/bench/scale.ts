// Benchmark of the sandbox itself (not a test): `npx tsx test/sandbox/bench/scale.ts [accounts] [httpAccounts]`.
// 1. Memory per account: `accounts` processes scheduled straight into the store (no HTTP), heap after GC.
// 2. Throughput over HTTP: the built binary (`npm run build` first) in its own process, `httpAccounts` creates at
//    concurrency 64 without latency, then 128 concurrent requests at 20 ms latency against the bound
//    concurrency / latency. Figures are printed as ratios to a stated limit, never asserted.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Pool } from 'undici';
import { ProcessStore } from '../../../src/sandbox/store.js';

const root = fileURLToPath(new URL('../../..', import.meta.url));
const accounts = Number(process.argv[2] ?? 1_000_000);
const httpAccounts = Number(process.argv[3] ?? 20_000);

function heapMb(): number {
  (globalThis as { gc?: () => void }).gc?.();
  return process.memoryUsage().heapUsed / 1e6;
}

function memoryPerAccount(): void {
  const before = heapMb();
  const store = new ProcessStore(
    { ACME: 'Ongoing' },
    { seed: 1, processingMs: 0, processingSpreadMs: 0, erroredShare: 0.01, retainPayloads: false },
  );
  const started = performance.now();
  for (let i = 0; i < accounts; i++) {
    const record = store.schedule('ACME', `EXT-${i}`, undefined, Date.now());
    store.postImport(record);
  }
  const seconds = (performance.now() - started) / 1000;
  const bytes = ((heapMb() - before) * 1e6) / accounts;
  console.log(
    `store: ${accounts} accounts (with post-import data allocated) in ${seconds.toFixed(1)} s; ${bytes.toFixed(0)} bytes/account on the heap (limit 1000: ratio ${(bytes / 1000).toFixed(2)})`,
  );
  if (store.size !== accounts) throw new Error('lost accounts');
}

async function startBinary(args: string[]): Promise<{ url: string; pid: number; stop: () => void }> {
  const child = spawn(
    'node',
    [
      'bin/migrate.js',
      'sandbox',
      '--port',
      '0',
      '--processing-ms',
      '0',
      '--no-retain-payloads',
      '--no-request-log',
      ...args,
    ],
    { cwd: root },
  );
  return new Promise((resolve, reject) => {
    child.on('exit', (code) => reject(new Error(`sandbox exited ${code}`)));
    child.stdout.on('data', (chunk: Buffer) => {
      const url = /listening on (\S+)/.exec(chunk.toString())?.[1];
      if (url) resolve({ url, pid: child.pid ?? 0, stop: () => child.kill('SIGKILL') });
    });
  });
}

async function token(pool: Pool): Promise<string> {
  const answer = await pool.request({
    method: 'POST',
    path: '/v1/graphql/',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query: 'mutation { obtainKrakenToken(input: {APIKey: "sandbox-api-key"}) { token } }' }),
  });
  return ((await answer.body.json()) as { data: { obtainKrakenToken: { token: string } } }).data.obtainKrakenToken
    .token;
}

async function drive(
  pool: Pool,
  count: number,
  concurrency: number,
  request: (i: number) => Promise<void>,
): Promise<number> {
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) await request(next++);
    }),
  );
  return count / ((performance.now() - started) / 1000);
}

async function throughput(): Promise<void> {
  const plain = await startBinary([]);
  const pool = new Pool(plain.url, { connections: 64 });
  const auth = await token(pool);
  const rate = await drive(pool, httpAccounts, 64, async (i) => {
    const answer = await pool.request({
      method: 'POST',
      path: '/v2/data-import/accounts/',
      headers: { 'content-type': 'application/json', authorization: auth },
      body: JSON.stringify({
        payload: {
          import_supplier: 'ACME',
          external_account_number: `H-${i}`,
          account_type: 'DOMESTIC',
          customers: [{ family_name: 'Doe', mobile: '+447911123456' }],
        },
      }),
    });
    if (answer.statusCode !== 201) throw new Error(`create ${i}: ${answer.statusCode}`);
    await answer.body.dump();
  });
  const rss = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${plain.pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;
  console.log(
    `http: ${httpAccounts} creates at concurrency 64, no latency: ${rate.toFixed(0)} creates/s; sandbox RSS ${rss.toFixed(0)} MB`,
  );
  await pool.close();
  plain.stop();

  const slow = await startBinary(['--latency-ms', '20']);
  const slowPool = new Pool(slow.url, { connections: 128 });
  const slowAuth = await token(slowPool);
  const requests = 128 * 40;
  const achieved = await drive(slowPool, requests, 128, async (i) => {
    const answer = await slowPool.request({
      method: 'GET',
      path: `/v2/data-import/accounts/ACME/S-${i}/`,
      headers: { authorization: slowAuth },
    });
    await answer.body.dump();
  });
  const bound = 128 / 0.02;
  console.log(
    `http: 128 concurrent at 20 ms latency: ${achieved.toFixed(0)} requests/s of the bound ${bound} (ratio ${(achieved / bound).toFixed(2)}, limit 1.00)`,
  );
  await slowPool.close();
  slow.stop();
}

memoryPerAccount();
await throughput();
