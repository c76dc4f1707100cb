// CPU time of each phase of `migrate validate` in one process (compiled dist/ code), for
// before/after comparisons on a loaded machine where wall-clock rates swing by +-30%:
//   node test/bench/validate-phases.mjs <export dir> [rounds]
// prints CPU ms of: bare csv-parse (arrays), read+stage, join+validate, and their sum.
import { parse } from 'csv-parse';
import { createReadStream, readdirSync } from 'node:fs';
import path from 'node:path';

const { loadMigrateConfig } = await import('../../dist/config/index.js');
const { openExport } = await import('../../dist/intake/index.js');
const { validateExport } = await import('../../dist/intake/validate-export.js');

const cpu = () => {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1000;
};

async function bare(dir) {
  for (const name of readdirSync(dir).filter((file) => file.endsWith('.csv'))) {
    for await (const record of createReadStream(path.join(dir, name)).pipe(
      parse({ bom: true, skip_empty_lines: true }),
    ))
      void record;
  }
}

const [dir, roundsText] = process.argv.slice(2);
if (!dir) throw new Error('usage: validate-phases.mjs <dir> [rounds]');
const config = await loadMigrateConfig({ cwd: dir, env: {}, supplier: 'BENCH' });
const totals = { csv: 0, read: 0, join: 0 };
const rounds = Number(roundsText ?? 3);
for (let round = 0; round < rounds; round += 1) {
  let started = cpu();
  await bare(dir);
  totals.csv += cpu() - started;
  started = cpu();
  const reader = await openExport(dir, config, { today: '2026-11-22' });
  totals.read += cpu() - started;
  started = cpu();
  const result = await validateExport(reader);
  totals.join += cpu() - started;
  await reader.close();
  if (!result.ok) throw new Error('benchmark data should be valid');
}
const ms = (value) => Math.round(value / rounds);
console.log(
  JSON.stringify({
    csvMs: ms(totals.csv),
    readStageMs: ms(totals.read),
    joinValidateMs: ms(totals.join),
    ratio: +(totals.csv / (totals.read + totals.join)).toFixed(3),
  }),
);
