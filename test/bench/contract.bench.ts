import { execFileSync } from 'node:child_process';
import { copyFileSync, createWriteStream, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { once } from 'node:events';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

// npm run bench:contract [-- ACCOUNTS [DOCUMENT ...]]
// What the tenant's contract costs (README "Performance"): `migrate validate` on a tenant-shaped export of 100,000
// accounts with --contract against the same run without it (limit 1.5x), each the real binary timed from start to
// exit (wall time, and on Linux its CPU time, which the shared machine's other work does not move), three runs of
// each taken in turn, medians compared; and the time to load each fixture contract (read, parse,
// compile) in a fresh process (limit 1 s), and of any further DOCUMENT named. Printed beside the limits, not asserted.

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.join(here, '..', '..');
const bin = path.join(root, 'bin', 'migrate.js');
const accounts = Number(process.argv[2] ?? 100_000);
const RUNS = 3;
const FAMILIES = ['flat-address', 'structured-address'];

async function writeFile(file: string, header: string, rows: (index: number) => string[]): Promise<number> {
  const stream = createWriteStream(file);
  stream.write(`${header}\n`);
  let buffer = '';
  let written = 0;
  for (let index = 0; index < accounts; index += 1) {
    for (const row of rows(index)) {
      buffer += `${row}\n`;
      written += 1;
    }
    if (buffer.length > 1 << 16) {
      if (!stream.write(buffer)) await once(stream, 'drain');
      buffer = '';
    }
  }
  stream.end(buffer);
  await once(stream, 'finish');
  return written;
}

/** A flat-address tenant's export: every account valid, with tenant fields at four levels. */
async function generate(dir: string): Promise<number> {
  const id = (index: number): string => `FERN-${String(index).padStart(8, '0')}`;
  const day = (index: number): string => `2024-0${1 + (index % 9)}-${String(1 + (index % 27)).padStart(2, '0')}`;
  const q = (json: unknown): string => `"${JSON.stringify(json).replace(/"/g, '""')}"`;
  const counts = await Promise.all([
    writeFile(
      path.join(dir, 'accounts.csv'),
      'external_account_number,account_type,billing_name,billing_email,billing_address.street_address,' +
        'billing_address.locality,billing_address.postal_code,billing_address.country,' +
        'account_billing_options.period_length,account_billing_options.period_start_day,' +
        'account_billing_options.use_industry_billing,communication_preference,transfer_balance,smart_read_cycle_day',
      (n) => [
        `${id(n)},DOMESTIC,Customer ${n},c${n}@example.org,${n} Station Road,York,YO1 7HH,GB,MONTHLY,${1 + (n % 28)},false,ONLINE,${(n % 500) - 250}.${String(n % 100).padStart(2, '0')},${1 + (n % 28)}`,
      ],
    ),
    writeFile(
      path.join(dir, 'customers.csv'),
      'external_account_number,given_name,family_name,email,mobile,psr',
      (n) => [
        `${id(n)},Grace,Patel${n},g${n}@example.org,+4479111${String(n % 100000).padStart(5, '0')},${n % 4 === 0 ? q([{ need_code: 'HEARING', effective_from: '2024-01-15T09:30:00Z' }]) : ''}`,
      ],
    ),
    writeFile(
      path.join(dir, 'supply_addresses.csv'),
      'external_account_number,supply_address1,supply_postcode,customer_at_supply_address_from_date,meter_points',
      (n) => [
        `${id(n)},${n} Station Road,YO1 7HH,${day(n)},${q([{ supply_type: 'ELECTRICITY', identifier: String(1200000000000 + n), mpid: 'FERN', supply_start_date: day(n) }])}`,
      ],
    ),
    writeFile(
      path.join(dir, 'transactions.csv'),
      'external_account_number,transaction_id,transaction_date,amount,type,reason,to_prepay_meter_serial_number',
      (n) => [
        `${id(n)},${id(n)}-T1,${day(n)},${10 + (n % 90)}.10,CHARGE,IMPORTED_CHARGE,${n % 3 === 0 ? `21E${n}` : ''}`,
        `${id(n)},${id(n)}-T2,${day(n)},0.29,CREDIT,GOODWILL,`,
      ],
    ),
    writeFile(path.join(dir, 'notes.csv'), 'external_account_number,body,created_at,external_id', (n) => [
      `${id(n)},Note for account ${n},2024-02-03T09:00:00Z,N-${n}`,
    ]),
  ]);
  writeFileSync(
    path.join(dir, 'migrate.config.json'),
    JSON.stringify({
      import_supplier: 'FERNLEIGH',
      dialect: 'kraken',
      tenant_fields: {
        accounts: { smart_read_cycle_day: 'number' },
        customers: { psr: 'array' },
        supply_addresses: { meter_points: 'array' },
        notes: { external_id: 'string' },
        transactions: { to_prepay_meter_serial_number: 'string' },
      },
    }),
  );
  return counts.reduce((sum, count) => sum + count, 0);
}

/**
 * CPU seconds of this process's finished children (Linux: /proc/self/stat's cutime and cstime, in clock ticks of
 * 1/100 s): what a run cost, whatever else the shared machine is doing; undefined elsewhere.
 */
function childCpu(): number | undefined {
  if (!existsSync('/proc/self/stat')) return undefined;
  const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1]?.split(' ') ?? [];
  return (Number(fields[13]) + Number(fields[14])) / 100;
}

interface Run {
  wall: number;
  cpu: number | undefined;
}

function run(args: string[]): Run {
  const [start, cpuBefore] = [process.hrtime.bigint(), childCpu()];
  const stdout = execFileSync(process.execPath, [bin, ...args], { encoding: 'utf8', maxBuffer: 1 << 26 });
  const wall = Number(process.hrtime.bigint() - start) / 1e9;
  const cpuAfter = childCpu();
  const report = JSON.parse(stdout) as { ok: boolean; errors: unknown[] };
  if (!report.ok) throw new Error(`the bench export should be valid: ${JSON.stringify(report.errors.slice(0, 3))}`);
  return { wall, cpu: cpuBefore === undefined || cpuAfter === undefined ? undefined : cpuAfter - cpuBefore };
}

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;
const listed = (values: number[]): string => values.map((value) => value.toFixed(2)).join(', ');

/** Medians of validate without and with the contract, and their ratio (limit 1.5). */
function report(what: 'wall' | 'cpu', plain: number[], checked: number[]): void {
  const [a, b] = [median(plain), median(checked)];
  console.log(
    `  ${what}: without a contract ${a.toFixed(2)} s (${listed(plain)}), --contract ${b.toFixed(2)} s (${listed(checked)}); ratio ${(b / a).toFixed(2)} (limit 1.5)`,
  );
}

/** Read, parse and compile one contract in a fresh process (the module loaded first, as a command has it). */
function loadMs(file: string): number {
  const script =
    `const { loadContractFile } = await import(${JSON.stringify(path.join(root, 'dist', 'config', 'contract-file.js'))});` +
    `const t = performance.now(); await loadContractFile(${JSON.stringify(file)}, 'bench');` +
    `console.log(performance.now() - t);`;
  return Number(execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' }));
}

execFileSync('npm', ['run', 'build', '--silent'], { cwd: root, stdio: 'inherit' });
const dir = mkdtempSync(path.join(os.tmpdir(), 'migrate-contract-bench-'));
try {
  const rows = await generate(dir);
  const contract = path.join(dir, 'openapi.yaml');
  copyFileSync(path.join(root, 'fixtures', 'contracts', 'flat-address', 'openapi.yaml'), contract);
  const without: Run[] = [];
  const withContract: Run[] = [];
  for (let index = 0; index < RUNS; index += 1) {
    without.push(run(['validate', dir, '--json']));
    withContract.push(run(['validate', dir, '--json', '--contract', contract]));
  }
  console.log(
    `\n${accounts.toLocaleString('en-GB')} accounts (${rows.toLocaleString('en-GB')} rows), flat-address tenant`,
  );
  report(
    'wall',
    without.map((r) => r.wall),
    withContract.map((r) => r.wall),
  );
  if (without.every((r) => r.cpu !== undefined))
    report(
      'cpu',
      without.map((r) => r.cpu ?? 0),
      withContract.map((r) => r.cpu ?? 0),
    );
  for (const family of FAMILIES) {
    const times = Array.from({ length: RUNS }, () =>
      loadMs(path.join(root, 'fixtures', 'contracts', family, 'openapi.yaml')),
    );
    console.log(
      `  load ${family}: ${median(times).toFixed(0)} ms (runs ${times.map((ms) => ms.toFixed(0)).join(', ')}; limit 1000)`,
    );
  }
  for (const extra of process.argv.slice(3)) {
    const times = Array.from({ length: RUNS }, () => loadMs(path.resolve(extra)));
    console.log(
      `  load ${extra}: ${median(times).toFixed(0)} ms (runs ${times.map((ms) => ms.toFixed(0)).join(', ')}; limit 1000)`,
    );
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
