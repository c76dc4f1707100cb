import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ledger } from '../../src/ledger/index.js';
import { openLedgerSource } from '../../src/commands/common/ledger-source.js';
import { writeHtmlReport } from '../../src/commands/report/html-report.js';
import { gatherStatus } from '../../src/commands/status/status-gather.js';
import { REPORT_FILES, writeReport } from '../../src/commands/report/write-report.js';

// Memory of `migrate report` and `migrate status --offline --json` over a large ledger: both
// stream, so a million accounts do not load into memory. Fills a ledger with N accounts
// (a tenth invalid with two issues, a tenth errored, the rest done) and two records each, then
// writes the report and runs the status pass, sampling the heap. Prints each figure as a ratio
// to its limit (< 1 is within).
// Usage: node --expose-gc --import tsx test/bench/report.bench.ts [accounts=1000000]

const ACCOUNTS = Number(process.argv[2] ?? 1_000_000);
/** Heap growth allowed while streaming, whatever N: flat memory means a constant bound. */
const HEAP_LIMIT_MB = 64;

const dir = mkdtempSync(join(tmpdir(), 'report-bench-'));
const state = join(dir, 'state');

function fill(): void {
  const ledger = Ledger.open(state);
  ledger.startRun('push', {});
  const batch = 5_000;
  for (let start = 0; start < ACCOUNTS; start += batch) {
    ledger.batch(() => {
      for (let n = start; n < Math.min(ACCOUNTS, start + batch); n += 1) {
        const kind = n % 10 === 3 ? 'invalid' : n % 10 === 7 ? 'errored' : 'done';
        const id = ledger.insertAccount(
          {
            importSupplier: 'ACME',
            externalAccountNumber: `BENCH-${n}`,
            state: kind,
            payload: '{}',
            fingerprint: 'f',
            originFile: 'accounts.csv',
            originLine: n + 2,
            origins: null,
          },
          { step: 'stage' },
        );
        if (kind === 'invalid') {
          ledger.replaceIssues(id, [
            {
              code: 'invalid_email',
              message: 'not an e-mail',
              file: 'accounts.csv',
              line: n + 2,
              column: 'billing_email',
              source: 'local',
            },
            {
              code: 'invalid_phone_number',
              message: 'not a phone',
              file: 'customers.csv',
              line: n + 2,
              column: 'mobile',
              source: 'local',
            },
          ]);
        } else if (kind === 'errored')
          ledger.updateAccountNow(id, { error: { code: 'account_creation_failed', detail: 'no' } });
        else ledger.updateAccountNow(id, { platformAccountNumber: `A-${n.toString(16).padStart(8, '0')}` });
        ledger.insertItem({
          accountId: id,
          kind: 'note',
          naturalKey: `note ${n}`,
          body: '{}',
          fingerprint: 'f',
          state: kind === 'done' ? 'done' : 'pending',
          originFile: 'notes.csv',
          originLine: n + 2,
        });
        ledger.insertItem({
          accountId: id,
          kind: 'transaction',
          naturalKey: `T-${n}`,
          body: '{}',
          fingerprint: 'f',
          state: kind === 'done' ? 'done' : 'pending',
          originFile: 'transactions.csv',
          originLine: n + 2,
        });
      }
    });
  }
  ledger.close();
}

/**
 * Live heap: sampled right after a forced GC (run with --expose-gc), so garbage not yet collected
 * does not count; what stays is what the streaming holds (pages, buffers), which must not grow with N.
 */
async function measure<T>(label: string, work: () => Promise<T>): Promise<T> {
  const gc = (): void => (global as { gc?: () => void }).gc?.();
  gc();
  const base = process.memoryUsage().heapUsed;
  let peak = base;
  const sampler = setInterval(() => {
    gc();
    peak = Math.max(peak, process.memoryUsage().heapUsed);
  }, 250);
  const started = performance.now();
  const result = await work();
  clearInterval(sampler);
  const growthMb = (peak - base) / 2 ** 20;
  const seconds = (performance.now() - started) / 1000;
  console.log(
    `${label}: ${seconds.toFixed(1)} s (${Math.round(ACCOUNTS / seconds)} accounts/s); live heap growth ${growthMb.toFixed(1)} MB, ratio to the ${HEAP_LIMIT_MB} MB limit ${(growthMb / HEAP_LIMIT_MB).toFixed(2)}`,
  );
  return result;
}

async function main(): Promise<void> {
  const fillStart = performance.now();
  fill();
  console.log(
    `ledger of ${ACCOUNTS} accounts filled in ${((performance.now() - fillStart) / 1000).toFixed(1)} s (${(statSync(join(state, 'ledger.sqlite')).size / 2 ** 20).toFixed(0)} MB)`,
  );
  const source = openLedgerSource(state);
  try {
    const summary = await measure('migrate report', () =>
      writeReport(source, { ledgerLabel: state, outDir: join(dir, 'out') }),
    );
    console.log(
      `  accounts.csv ${summary.files[REPORT_FILES.accounts]?.rows} rows, fix-data.csv ${summary.files[REPORT_FILES.fixData]?.rows} rows`,
    );
    const html = await measure('migrate report --html (report.html alone)', () =>
      writeHtmlReport(source, summary, { outDir: join(dir, 'out'), supplier: undefined, known: {} }),
    );
    console.log(`  report.html ${(statSync(html).size / 1024).toFixed(1)} KB`);
    let rows = 0;
    await measure('migrate status --offline --json (row pass)', () =>
      gatherStatus({
        supplier: 'ACME',
        ledger: source,
        client: undefined,
        maxStatusChecks: 0,
        maxListed: 20,
        onRow: () => (rows += 1),
      }),
    );
    console.log(`  ${rows} rows`);
    console.log(
      `peak RSS of the whole bench (fill included): ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MB`,
    );
  } finally {
    source.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
