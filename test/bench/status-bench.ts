import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { Ledger } from '../../src/ledger/index.js';

// `migrate status <supplier>` at scale: a ledger of N done accounts and a sandbox (its own process) holding the same N
// imported accounts, then the real binary run as a child process, which reads both v1 lists whole (they have no
// pagination, docs/service.md "Status and list endpoints") and joins them with the ledger. Prints the wall time and the
// child's peak RSS as a ratio to the limit (< 1 is within); asserts nothing.
// Usage: npm run bench:status [-- accounts=1000000 [checkout]]: with a checkout (another commit, built), its
// bin/migrate.js is the one measured, for a before-and-after on the same data.

const ACCOUNTS = Number(process.argv[2] ?? 1_000_000);
const RSS_LIMIT_MB = 300;
const ROOT = join(import.meta.dirname, '..', '..');
const MEASURED = resolve(process.argv[3] ?? ROOT);

const dir = mkdtempSync(join(tmpdir(), 'status-bench-'));
const state = join(dir, 'state');

function fill(): void {
  const ledger = Ledger.open(state);
  ledger.startRun('push', {});
  const batch = 5_000;
  for (let start = 0; start < ACCOUNTS; start += batch) {
    ledger.batch(() => {
      for (let n = start; n < Math.min(ACCOUNTS, start + batch); n += 1) {
        const id = ledger.insertAccount(
          {
            importSupplier: 'ACME',
            externalAccountNumber: `BENCH-${n}`,
            state: 'done',
            payload: '{}',
            fingerprint: 'f',
            originFile: 'accounts.csv',
            originLine: n + 2,
            origins: null,
          },
          { step: 'stage' },
        );
        ledger.updateAccountNow(id, { platformAccountNumber: `A-${n.toString(16).padStart(8, '0')}` });
      }
    });
  }
  ledger.close();
}

interface Sandbox {
  url: string;
  apiKey: string;
  seconds: number;
  stop(): void;
}

function startSandboxProcess(): Promise<Sandbox> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', join(ROOT, 'test/bench/status-sandbox-server.ts'), String(ACCOUNTS)],
    { stdio: ['pipe', 'pipe', 'inherit'], cwd: ROOT },
  );
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`the sandbox exited (${code})`)));
    createInterface({ input: child.stdout }).once('line', (line) => {
      const ready = JSON.parse(line) as Omit<Sandbox, 'stop'>;
      resolve({ ...ready, stop: () => child.stdin.end() });
    });
  });
}

/** `node bin/migrate.js status ACME`, its peak RSS taken at exit by cpu-hook.mjs. */
async function statusChild(
  sandbox: Sandbox,
  json: boolean,
): Promise<{ seconds: number; maxRssMb: number; code: number | null; bytes: number; tail: string }> {
  const usageFile = join(dir, `usage-${json ? 'json' : 'text'}.json`);
  const started = performance.now();
  const child = spawn(
    process.execPath,
    [
      '--import',
      join(ROOT, 'test/bench/cpu-hook.mjs'),
      join(MEASURED, 'bin/migrate.js'),
      'status',
      'ACME',
      '--base-url',
      sandbox.url,
      '--state',
      state,
      ...(json ? ['--json'] : []),
    ],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, MIGRATE_API_KEY: sandbox.apiKey, BENCH_USAGE_FILE: usageFile, NO_COLOR: '1' },
    },
  );
  let bytes = 0;
  let tail = '';
  child.stdout.on('data', (chunk: Buffer) => {
    bytes += chunk.length;
    tail = (tail + chunk.toString()).slice(-600);
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  const seconds = (performance.now() - started) / 1000;
  if (stderr !== '') process.stderr.write(stderr.slice(0, 2000));
  const usage = JSON.parse(readFileSync(usageFile, 'utf8')) as { maxRssKb: number };
  return { seconds, maxRssMb: usage.maxRssKb / 1024, code, bytes, tail };
}

async function main(): Promise<void> {
  const load = (): string =>
    `load average ${loadavg()
      .map((value) => value.toFixed(2))
      .join(' ')}`;
  console.log(`migrate status at ${ACCOUNTS} accounts, ${MEASURED}/bin/migrate.js (${load()})`);
  const fillStart = performance.now();
  fill();
  console.log(
    `ledger of ${ACCOUNTS} done accounts filled in ${((performance.now() - fillStart) / 1000).toFixed(1)} s (${(statSync(join(state, 'ledger.sqlite')).size / 2 ** 20).toFixed(0)} MB)`,
  );
  const sandbox = await startSandboxProcess();
  console.log(`sandbox seeded with ${ACCOUNTS} imported accounts in ${sandbox.seconds.toFixed(1)} s`);
  try {
    for (const json of [false, true]) {
      const run = await statusChild(sandbox, json);
      console.log(
        `migrate status ACME${json ? ' --json' : ''}: ${run.seconds.toFixed(1)} s, exit ${run.code}, ${(run.bytes / 2 ** 20).toFixed(1)} MB out; peak RSS ${run.maxRssMb.toFixed(0)} MB (limit ${RSS_LIMIT_MB} MB: ${(run.maxRssMb / RSS_LIMIT_MB).toFixed(2)}); ${load()}`,
      );
      if (!json) console.log(run.tail.replace(/^/gm, '  | '));
    }
  } finally {
    sandbox.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
