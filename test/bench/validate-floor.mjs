// What the schemas alone cost, beside bare csv-parse over the same export (compiled dist/ code,
// CPU time, one process): shows how much of the budget (validate >= 0.5 x bare
// csv-parse rows/s, i.e. the whole of validate in at most twice csv-parse's time) the checks
// leave for reading, staging and joining.
//   node test/bench/validate-floor.mjs <export dir> [rounds]   (run `npm run build` first)
import { parse } from 'csv-parse';
import { isValidPhoneNumber } from 'libphonenumber-js';
import { createReadStream, readdirSync } from 'node:fs';
import path from 'node:path';

const { loadMigrateConfig } = await import('../../dist/config/index.js');
const { openExport } = await import('../../dist/intake/index.js');
const schema = await import('../../dist/schema/index.js');
const { isValidInternationalPhone } = await import('../../dist/schema/phone.js');

const cpu = () => {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1000;
};

const [dir, roundsText] = process.argv.slice(2);
if (!dir) throw new Error('usage: validate-floor.mjs <dir> [rounds]');
const rounds = Number(roundsText ?? 3);
const today = '2026-11-22';
const config = await loadMigrateConfig({ cwd: dir, env: {}, supplier: 'BENCH' });
const reader = await openExport(dir, config, { today });
const accounts = [];
for await (const entry of reader.entries()) if (entry.kind === 'account') accounts.push(entry.account);
await reader.close();
const rows = Object.values(reader.summary.records).reduce((sum, count) => sum + count, 0);
const phones = accounts
  .flatMap((account) => (account.payload.customers ?? []).flatMap((customer) => [customer.mobile, customer.landline]))
  .filter((value) => value !== undefined);
const head = (account) => ({
  import_supplier: account.importSupplier,
  external_account_number: account.externalAccountNumber,
});

const parts = {
  'bare csv-parse (arrays), all files': async () => {
    for (const name of readdirSync(dir).filter((file) => file.endsWith('.csv'))) {
      for await (const record of createReadStream(path.join(dir, name)).pipe(
        parse({ bom: true, skip_empty_lines: true }),
      ))
        void record;
    }
  },
  'account payload schema + rules': () =>
    accounts.forEach((account) => schema.validateAccountPayload(account.payload, { today })),
  '  of which isValidPhoneNumber': () => phones.forEach((phone) => isValidPhoneNumber(phone)),
  '  of which isValidInternationalPhone': () => phones.forEach((phone) => isValidInternationalPhone(phone)),
  'notes + transactions requests': () =>
    accounts.forEach((account) => {
      if (account.notes.length > 0)
        schema.validateNotesRequest({ ...head(account), notes: account.notes.map((item) => item.value) });
      if (account.transactions.length > 0)
        schema.validateTransactionsRequest(
          { ...head(account), transactions: account.transactions.map((item) => item.value) },
          { today },
        );
    }),
};
const results = {};
for (const [name, run] of Object.entries(parts)) {
  let total = 0;
  for (let round = 0; round < rounds; round += 1) {
    const started = cpu();
    await run();
    total += cpu() - started;
  }
  results[name] = total / rounds;
}
const csv = results['bare csv-parse (arrays), all files'];
console.log(
  `${accounts.length} accounts, ${rows} rows, ${phones.length} phone numbers; CPU ms per pass (share of the budget = 2 x bare csv-parse):`,
);
for (const [name, ms] of Object.entries(results))
  console.log(
    `  ${name.padEnd(36)} ${String(Math.round(ms)).padStart(6)} ms  ${(ms / (2 * csv)).toFixed(2)} of the budget`,
  );
