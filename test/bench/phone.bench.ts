// us per number: libphonenumber-js isValidPhoneNumber vs isValidInternationalPhone (src/schema/phone.ts),
// CPU time in one process, each measured twice, on the validate benchmark's numbers and on a varied set.
//   npx tsx test/bench/phone.bench.ts
import { createRequire } from 'node:module';
import { isValidPhoneNumber } from 'libphonenumber-js';
import { isValidInternationalPhone } from '../../src/schema/phone.js';

const require = createRequire(import.meta.url);
const examples = require('libphonenumber-js/examples.mobile.json') as Record<string, string>;
const codes = require('libphonenumber-js/metadata.min.json') as { countries: Record<string, [string]> };

const cpu = (): number => {
  const usage = process.cpuUsage();
  return usage.user + usage.system;
};

// validate-data.ts's mobile column: +4479111 then five digits.
const bench = Array.from({ length: 100_000 }, (_, i) => `+4479111${String(i).padStart(5, '0')}`);
const varied: string[] = [];
for (const [country, national] of Object.entries(examples)) {
  const code = codes.countries[country]?.[0];
  if (!code) continue;
  for (let d = 0; d < 10; d++)
    varied.push(`+${code}${national.slice(0, -1)}${d}`, `+${code}${national}${d}`, `+${code} ${national}`);
}

function measure(label: string, values: string[], check: (value: string) => boolean): number {
  const start = cpu();
  let valid = 0;
  for (const value of values) if (check(value)) valid++;
  const us = (cpu() - start) / values.length;
  console.log(`  ${label.padEnd(28)} ${us.toFixed(2)} us/number (${valid}/${values.length} valid)`);
  return us;
}

const plusAndValid = (value: string): boolean => value.startsWith('+') && isValidPhoneNumber(value);
for (const [name, values] of [
  ['benchmark numbers', bench],
  ['varied (all countries)', varied],
] as const) {
  console.log(`${name}: ${values.length}`);
  for (let round = 1; round <= 2; round++) {
    const library = measure(`round ${round} isValidPhoneNumber`, values, plusAndValid);
    const ours = measure(`round ${round} isValidInternational`, values, isValidInternationalPhone);
    console.log(`  ratio ${(ours / library).toFixed(3)} of the library's cost`);
  }
}
