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

/** What `migrate validate` does: the streaming join for sorted files, else the staged join after it. */
async function validate(dir) {
  const { loadMigrateConfig } = await import('../../dist/config/index.js');
  const { openExport } = await import('../../dist/intake/index.js');
  const { validateExportDirectory } = await import('../../dist/intake/validate-export.js');
  const config = await loadMigrateConfig({ cwd: dir, env: {}, supplier: 'BENCH' });
  const result = await validateExportDirectory((join, sortFiles) =>
    openExport(dir, config, { join, sortFiles, today: '2026-11-22' }),
  );
  if (!result.ok) throw new Error(`benchmark data should be valid: ${JSON.stringify(result.errors.slice(0, 3))}`);
  return {
    rows: Object.values(result.summary.records).reduce((sum, count) => sum + count, 0),
    join: !result.unsorted
      ? 'streaming'
      : result.unsorted.sorted
        ? `streaming, sorting ${result.unsorted.sorted.join(' ')}`
        : 'staged after streaming',
  };
}

const [mode, dir] = process.argv.slice(2);
if (!mode || !dir) throw new Error('usage: validate-child.mjs <csv-arrays|csv-columns|validate> <dir>');
// As bin/migrate.js does, for validate (bare csv-parse runs as plain node).
if (mode === 'validate') (await import('../../dist/cli/heap.js')).keepHeapNearLiveData();
const started = process.hrtime.bigint();
const result = mode === 'validate' ? await validate(dir) : { rows: await bareCsv(dir, mode === 'csv-columns') };
const seconds = Number(process.hrtime.bigint() - started) / 1e9;
process.stdout.write(`${JSON.stringify({ ...result, seconds, peakRssMb: process.resourceUsage().maxRSS / 1024 })}\n`);
