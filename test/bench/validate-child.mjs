// One measurement in its own process, so that its peak RSS is its own, on the compiled code that
// `migrate` runs (dist/, plain node, no tsx loader in the process):
//   node validate-child.mjs <csv-arrays|csv-columns|validate> <dir>
// prints { rows, seconds, peakRssMb } (and, for validate, the join used).
import { parse } from 'csv-parse';
import { createReadStream, readdirSync } from 'node:fs';
import path from 'node:path';

async function bareCsv(dir, columns) {
  let rows = 0;
  for (const name of readdirSync(dir).filter((file) => file.endsWith('.csv'))) {
    const parser = createReadStream(path.join(dir, name)).pipe(parse({ bom: true, columns, skip_empty_lines: true }));
    for await (const record of parser) {
      void record;
      rows += 1;
    }
    if (!columns) rows -= 1;
  }
  return rows;
}

/** What `migrate validate` does: every CSV file's order proven, the files not in order sorted first, one read. */
async function validate(dir) {
  const { loadMigrateConfig } = await import('../../dist/config/index.js');
  const { openExportInOrder } = await import('../../dist/intake/export-in-order.js');
  const { validateExport } = await import('../../dist/intake/validate-export.js');
  const config = await loadMigrateConfig({ cwd: dir, env: {}, supplier: 'BENCH' });
  const reader = await openExportInOrder(dir, config, { today: '2026-11-22' });
  try {
    const result = await validateExport(reader);
    if (!result.ok) throw new Error(`benchmark data should be valid: ${JSON.stringify(result.errors.first(3))}`);
    const sorted = result.sorted.map((file) => file.file);
    return {
      rows: Object.values(result.summary.records).reduce((sum, count) => sum + count, 0),
      join:
        reader.proof === undefined
          ? 'scratch'
          : sorted.length > 0
            ? `streaming, sorting ${sorted.join(' ')}`
            : 'streaming',
      proofSeconds: (reader.proof?.ms ?? 0) / 1000,
    };
  } finally {
    await reader.close();
  }
}

const [mode, dir] = process.argv.slice(2);
if (!mode || !dir) throw new Error('usage: validate-child.mjs <csv-arrays|csv-columns|validate> <dir>');
// As bin/migrate.js does, for validate (bare csv-parse runs as plain node).
if (mode === 'validate') (await import('../../dist/cli/heap.js')).keepHeapNearLiveData();
const started = process.hrtime.bigint();
const result = mode === 'validate' ? await validate(dir) : { rows: await bareCsv(dir, mode === 'csv-columns') };
const seconds = Number(process.hrtime.bigint() - started) / 1e9;
process.stdout.write(`${JSON.stringify({ ...result, seconds, peakRssMb: process.resourceUsage().maxRSS / 1024 })}\n`);
