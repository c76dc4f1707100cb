import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseDecimal } from '../../src/mapping/decimal.js';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.js';
import { ledgerAccountState, push, ROOT, type RunResult } from './helpers.js';

// Values exactly as the export holds them, through the real binary: a JSON, an NDJSON and a CSV export with values
// that binary floating point, JSON.stringify or a last-wins key would change on the way. The sandbox must receive
// exactly the export's values, and validate, validate --remote, push --dry-run and push must hold back the same
// accounts for the same reasons (docs/export-format.md "How numbers are read").

let root: string;
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'values-e2e-'));
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

type Format = 'json' | 'ndjson' | 'csv';

const ADDRESS =
  '"billing_address": {"street_address": "1 Station Road", "locality": "York", "postal_code": "YO1 7HH", ' +
  '"country": "GB"}, "account_billing_options": {"period_length": "MONTHLY", "period_start_day": 2, ' +
  '"use_industry_billing": false}, "communication_preference": "ONLINE", "account_type": "DOMESTIC"';

/** Accounts out of number order (the export is sorted on disk first): each as JSON text, numbers as written. */
const JSON_ACCOUNTS = [
  `{"external_account_number": "X-INF", "import_supplier": "ACME", "billing_name": "Inf", "transfer_balance": 1e309, ${ADDRESS}}`,
  `{"external_account_number": "V-1", "import_supplier": "ACME", "billing_name": "Café Zoë Ltd", ` +
    `"billing_customer_reference": 1.10, "transfer_balance": 12.50, ` +
    `"metadata": [{"key": "m", "value": {"n": 123456789012345.6, "s": "1.10"}}], ${ADDRESS}}`,
  `{"external_account_number": 90000000000000000001, "import_supplier": "ACME", "billing_name": "One", ` +
    `"transfer_balance": -0.29, ${ADDRESS}}`,
  `{"external_account_number": "X-PREC", "import_supplier": "ACME", "billing_name": "Prec", ` +
    `"transfer_balance": 12345678901234567.89, ${ADDRESS}}`,
  `{"external_account_number": 90000000000000000000, "import_supplier": "ACME", "billing_name": "Zero", ${ADDRESS}}`,
  `{"external_account_number": "X-GROSS", "import_supplier": "ACME", "billing_name": "Gross", ${ADDRESS}}`,
];

const JSON_STATEMENTS = [
  '{"external_account_number": "X-GROSS", "statement_id": "S-9", "bill_period_from_date": "2024-01-01", ' +
    '"bill_period_to_date": "2024-01-31", "issued_date": "2024-02-01", "number": "9", "gross_amount": 1e309}',
  '{"external_account_number": "V-1", "statement_id": "S-1", "bill_period_from_date": "2024-01-01", ' +
    '"bill_period_to_date": "2024-01-31", "issued_date": "2024-02-01", "number": 7.50, "gross_amount": 40.10}',
];

const CSV_ACCOUNTS = [
  'external_account_number,import_supplier,account_type,billing_name,billing_customer_reference,' +
    'billing_address.street_address,billing_address.locality,billing_address.postal_code,billing_address.country,' +
    'account_billing_options.period_length,account_billing_options.period_start_day,' +
    'account_billing_options.use_industry_billing,communication_preference,transfer_balance,metadata',
  `X-INF,ACME,DOMESTIC,Inf,,1 Station Road,York,YO1 7HH,GB,MONTHLY,2,false,ONLINE,${'9'.repeat(400)},`,
  'V-1,ACME,DOMESTIC,Café Zoë Ltd,1.10,1 Station Road,York,YO1 7HH,GB,MONTHLY,2,false,ONLINE,12.50,' +
    '"[{""key"": ""m"", ""value"": {""n"": 123456789012345.6, ""s"": ""1.10""}}]"',
  '90000000000000000001,ACME,DOMESTIC,One,,1 Station Road,York,YO1 7HH,GB,MONTHLY,2,false,ONLINE,-0.29,',
  'X-PREC,ACME,DOMESTIC,Prec,,1 Station Road,York,YO1 7HH,GB,MONTHLY,2,false,ONLINE,12345678901234567.89,',
  '90000000000000000000,ACME,DOMESTIC,Zero,,1 Station Road,York,YO1 7HH,GB,MONTHLY,2,false,ONLINE,,',
  'X-GROSS,ACME,DOMESTIC,Gross,,1 Station Road,York,YO1 7HH,GB,MONTHLY,2,false,ONLINE,,',
];

const CSV_STATEMENTS = [
  'external_account_number,statement_id,bill_period_from_date,bill_period_to_date,issued_date,number,gross_amount',
  `X-GROSS,S-9,2024-01-01,2024-01-31,2024-02-01,9,${'9'.repeat(30)}`,
  'V-1,S-1,2024-01-01,2024-01-31,2024-02-01,7.50,40.10',
];

const KEYS = ['X-INF', 'V-1', '90000000000000000001', 'X-PREC', '90000000000000000000', 'X-GROSS'];

/** Every account's customer and supply address (an account without them is never created), as CSV beside any format. */
const CUSTOMERS = ['external_account_number,given_name,family_name', ...KEYS.map((key) => `${key},Ada,Lovelace`)];
const SUPPLY_ADDRESSES = [
  'external_account_number,supply_address1,supply_postcode,customer_at_supply_address_from_date',
  ...KEYS.map((key) => `${key},1 Station Road,YO1 7HH,2024-01-01`),
];

/** What each command must hold back, and why. */
const HELD_BACK: Array<[string, string]> = [
  ['X-GROSS', 'number_out_of_range'],
  ['X-INF', 'number_out_of_range'],
  ['X-PREC', 'number_too_precise'],
];

function writeExport(format: Format): string {
  const dir = join(root, format, 'export');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'customers.csv'), `${CUSTOMERS.join('\n')}\n`);
  writeFileSync(join(dir, 'supply_addresses.csv'), `${SUPPLY_ADDRESSES.join('\n')}\n`);
  if (format === 'csv') {
    writeFileSync(join(dir, 'accounts.csv'), `${CSV_ACCOUNTS.join('\n')}\n`);
    writeFileSync(join(dir, 'statements.csv'), `${CSV_STATEMENTS.join('\n')}\n`);
  } else if (format === 'json') {
    writeFileSync(join(dir, 'accounts.json'), `[\n${JSON_ACCOUNTS.join(',\n')}\n]\n`);
    writeFileSync(join(dir, 'statements.json'), `[\n${JSON_STATEMENTS.join(',\n')}\n]\n`);
  } else {
    writeFileSync(join(dir, 'accounts.ndjson'), `${JSON_ACCOUNTS.join('\n')}\n`);
    writeFileSync(join(dir, 'statements.ndjson'), `${JSON_STATEMENTS.join('\n')}\n`);
  }
  return dir;
}

function migrate(sandbox: RunningSandbox, args: string[]): Promise<RunResult> {
  const child = spawn(process.execPath, [join(ROOT, 'bin', 'migrate.js'), ...args], {
    cwd: ROOT,
    env: { ...process.env, MIGRATE_API_KEY: sandbox.apiKey, NO_COLOR: '1' },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve) => child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr })));
}

/** Accounts with an error and the first error's code, from `validate --json`. */
function heldBackByValidate(result: RunResult): string[][] {
  const report = JSON.parse(result.stdout) as { errors: Array<{ external_account_number: string; code: string }> };
  const first = new Map<string, string>();
  for (const error of report.errors)
    if (!first.has(error.external_account_number)) first.set(error.external_account_number, error.code);
  return [...first].sort();
}

/** The same number: the JSON number received denotes exactly the decimal the export wrote. */
function sameNumber(received: unknown, written: string): boolean {
  const a = parseDecimal(String(received));
  const b = parseDecimal(written);
  return typeof received === 'number' && a !== undefined && JSON.stringify(a) === JSON.stringify(b);
}

describe('values exactly as the export holds them, through the binary to the sandbox', () => {
  it.each<Format>(['json', 'ndjson', 'csv'])(
    '%s: validate, validate --remote, push --dry-run and push agree; the sandbox holds exactly the export',
    async (format) => {
      const sandbox = await startSandbox({ processingMs: 20, seed: 5 });
      try {
        const dir = writeExport(format);
        const state = join(root, format, 'state');
        const local = await migrate(sandbox, ['validate', dir, '--json']);
        expect(local.code, local.stderr).toBe(5);
        expect(heldBackByValidate(local)).toEqual(HELD_BACK);
        const remote = await migrate(sandbox, ['validate', dir, '--json', '--remote', '--base-url', sandbox.url]);
        expect(remote.code, remote.stderr).toBe(5);
        expect(heldBackByValidate(remote)).toEqual(HELD_BACK);
        expect(sandbox.inspect.accountCount()).toBe(0);

        const dryRun = await push(sandbox, dir, state, ['--dry-run', '--json']);
        expect(dryRun.code, dryRun.stderr).toBe(0);
        const plan = JSON.parse(dryRun.stdout) as {
          accounts: Array<{ external_account_number: string; state: string; error_code?: string }>;
        };
        expect(
          plan.accounts
            .filter((row) => row.state === 'invalid')
            .map((row) => [row.external_account_number, row.error_code])
            .sort(),
        ).toEqual(HELD_BACK);

        const pushed = await push(sandbox, dir, state);
        expect(pushed.stderr).not.toMatch(/internal error/);
        for (const [number] of HELD_BACK) {
          expect(ledgerAccountState(state, 'ACME', number), number).toBe('invalid');
          expect(sandbox.inspect.account('ACME', number), `${number} never sent`).toBeUndefined();
        }
        const v1 = sandbox.inspect.account('ACME', 'V-1');
        expect(v1?.status).toBe('PROCESSED');
        const payload = v1?.payload as Record<string, any>;
        expect(payload['billing_customer_reference']).toBe('1.10');
        expect(payload['billing_name']).toBe('Café Zoë Ltd');
        expect(sameNumber(payload['transfer_balance'], '12.50')).toBe(true);
        expect(sameNumber(payload['metadata'][0].value.n, '123456789012345.6')).toBe(true);
        expect(payload['metadata'][0].value.s).toBe('1.10');
        expect(v1?.historicalStatements.map((s) => [s['statement_id'], s['number'], s['gross_amount']])).toEqual([
          ['S-1', '7.50', 4010],
        ]);
        // Two numbers that one double would merge stay two accounts, each under its own digits.
        const one = sandbox.inspect.account('ACME', '90000000000000000001');
        const zero = sandbox.inspect.account('ACME', '90000000000000000000');
        expect((one?.payload as Record<string, unknown>)['external_account_number']).toBe('90000000000000000001');
        expect((zero?.payload as Record<string, unknown>)['billing_name']).toBe('Zero');
        expect(sameNumber((one?.payload as Record<string, unknown>)['transfer_balance'], '-0.29')).toBe(true);
        expect(sandbox.inspect.accountCount()).toBe(3);
      } finally {
        await sandbox.close();
      }
    },
    120_000,
  );
});
