import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateExport } from './validate-data.js';

// npm run bench:validate [-- 100000 1000000] [-- --scattered]   (BENCH_RUNS=N: N runs of each, in turn; medians)
// Validation throughput and peak RSS beside bare csv-parse on the same files (README "Performance"):
// limits are validation >= 0.5 x bare csv-parse rows/s, peak RSS < 300 MB at 1,000,000
// accounts and flat as the input grows tenfold. Printed as ratios to the limits, not asserted.
// Each size is measured sorted by external account number (streaming join) and, with
// --scattered, also with the customers, notes and transactions files in scattered account order
// (the streaming join stops at once, the scratch join reads it).

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.join(here, '..', '..');
const sizes = process.argv
  .slice(2)
  .map(Number)
  .filter((size) => size > 0);
const orders: Array<'sorted' | 'scattered'> = process.argv.includes('--scattered')
  ? ['sorted', 'scattered']
  : ['sorted'];

interface Measure {
  rows: number;
  seconds: number;
  peakRssMb: number;
  join?: string;
}

function measureOnce(mode: string, dir: string): Measure {
  return JSON.parse(
    execFileSync(process.execPath, [path.join(here, 'validate-child.mjs'), mode, dir], {
      encoding: 'utf8',
      maxBuffer: 1 << 20,
    }),
  ) as Measure;
}

/**
 * Each mode run BENCH_RUNS times (default 1), the modes in turn (A B C A B C ...) so that a shared machine's slow
 * moments fall on all of them; the run of median seconds of each (its peak RSS the largest of its runs).
 */
function measureModes(modes: string[], dir: string): Measure[] {
  const runs = Math.max(1, Number(process.env['BENCH_RUNS'] ?? 1));
  const measured: Measure[][] = modes.map(() => []);
  for (let run = 0; run < runs; run += 1) modes.forEach((mode, index) => measured[index]?.push(measureOnce(mode, dir)));
  return measured.map((list) => {
    const sorted = [...list].sort((a, b) => a.seconds - b.seconds);
    const median = sorted[Math.floor((sorted.length - 1) / 2)] as Measure;
    return { ...median, peakRssMb: Math.max(...list.map((item) => item.peakRssMb)) };
  });
}

const rate = (m: Measure): number => m.rows / m.seconds;
const fmt = (value: number): string => Math.round(value).toLocaleString('en-GB');

// The measured code is the compiled code users run (dist/, plain node).
execFileSync(path.join(root, 'node_modules', '.bin', 'tsc'), ['-p', 'tsconfig.build.json'], {
  cwd: root,
  stdio: 'inherit',
});

const results: Array<{
  accounts: number;
  order: string;
  rows: number;
  arrays: Measure;
  columns: Measure;
  validate: Measure;
}> = [];
for (const accounts of sizes.length > 0 ? sizes : [100_000, 1_000_000])
  for (const order of orders) {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'migrate-bench-'));
    try {
      const counts = await generateExport(dir, accounts, order);
      const rows = Object.values(counts).reduce((sum, count) => sum + count, 0);
      const [arrays, columns, validate] = measureModes(['csv-arrays', 'csv-columns', 'validate'], dir) as [
        Measure,
        Measure,
        Measure,
      ];
      results.push({ accounts, order, rows, arrays, columns, validate });
      console.log(
        `\n${fmt(accounts)} accounts, ${order}, ${fmt(rows)} data rows (${Object.entries(counts)
          .map(([file, count]) => `${file} ${fmt(count)}`)
          .join(', ')})`,
      );
      console.log(
        `  bare csv-parse, arrays:        ${fmt(rate(arrays))} rows/s, peak RSS ${arrays.peakRssMb.toFixed(0)} MB`,
      );
      console.log(
        `  bare csv-parse, columns: true: ${fmt(rate(columns))} rows/s, peak RSS ${columns.peakRssMb.toFixed(0)} MB`,
      );
      console.log(
        `  migrate validate (read, map, join: ${validate.join}, schemas): ${fmt(rate(validate))} rows/s in ${validate.seconds.toFixed(1)} s, peak RSS ${validate.peakRssMb.toFixed(0)} MB`,
      );
      const ratio = rate(validate) / rate(arrays);
      console.log(
        `  throughput: ${ratio.toFixed(2)} x bare csv-parse (arrays), ${(rate(validate) / rate(columns)).toFixed(2)} x (columns); limit >= 0.50 -> ${ratio >= 0.5 ? 'PASS' : 'FAIL'}`,
      );
      console.log(
        `  peak RSS: ${(validate.peakRssMb / 300).toFixed(2)} of the 300 MB limit -> ${validate.peakRssMb < 300 ? 'PASS' : 'FAIL'}`,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
for (const order of orders) {
  const measured = results.filter((result) => result.order === order);
  if (measured.length < 2) continue;
  const [small, large] = [measured[0]!, measured[measured.length - 1]!];
  const growth = large.validate.peakRssMb / small.validate.peakRssMb;
  console.log(
    `\n${order}: peak RSS growth ${fmt(small.accounts)} -> ${fmt(large.accounts)} accounts: x${growth.toFixed(2)} (input x${(large.rows / small.rows).toFixed(0)}); flat (< x1.5) -> ${growth < 1.5 ? 'PASS' : 'FAIL'}`,
  );
}
