import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Dialect } from '../../src/schema/index.js';

// Writes a small export directory in the default layout (docs/export-format.md) with
// every case the e2e tests need: valid accounts with notes, transactions, statements and
// payment instructions; invalid accounts; ERR- accounts (the sandbox ends them ERRORED);
// FAIL- (vendor refuses) and FLAKY- (500 then success) payment references.

export interface E2eExport {
  dir: string;
  valid: string[];
  invalid: string[];
  errored: string[];
  notes: Map<string, string[]>;
  transactions: Map<string, string[]>;
  statements: Map<string, string[]>;
  paymentInstructions: Map<string, string>;
  failingPaymentInstructions: string[];
  /** kraken: each account's meter_points as the export gives them (a tenant field, sent unchanged). */
  meterPoints: Map<string, unknown>;
}

const ACCOUNT_HEADER =
  'external_account_number,import_supplier,account_type,billing_name,billing_email,billing_address.street_address,billing_address.locality,billing_address.postal_code,billing_address.country,account_billing_options.period_length,account_billing_options.period_start_day,account_billing_options.use_industry_billing,communication_preference';

/**
 * `kraken`: every supply address carries meter_points (a tenant field declared in the export's
 * migrate.config.json), as the real platform requires.
 */
export function writeE2eExport(
  root: string,
  size: number,
  prefix = 'E2E',
  dialect: Dialect = 'spec',
  options: { clean?: boolean; dir?: string; order?: 'scattered' | 'sorted' } = {},
): E2eExport {
  // `clean`: every account valid, every record accepted (a migration that can finish: `status` exit 0).
  const dir = join(root, options.dir ?? 'export');
  mkdirSync(dir, { recursive: true });
  const month = new Date().toISOString().slice(0, 7);
  const today = new Date().toISOString().slice(0, 10);
  const day = today.slice(8) === '01' ? '01' : '02';
  const result: E2eExport = {
    dir,
    valid: [],
    invalid: [],
    errored: [],
    notes: new Map(),
    transactions: new Map(),
    statements: new Map(),
    paymentInstructions: new Map(),
    failingPaymentInstructions: [],
    meterPoints: new Map(),
  };
  const accounts = [ACCOUNT_HEADER];
  const customers = ['external_account_number,given_name,family_name,email,mobile'];
  const kraken = dialect === 'kraken';
  const supply = [
    `external_account_number,supply_address1,supply_postcode,customer_at_supply_address_from_date${kraken ? ',meter_points' : ''}`,
  ];
  const notes = ['external_account_number,body,created_at'];
  const transactions = ['external_account_number,transaction_id,transaction_date,amount,type,reason'];
  const statements = [
    'external_account_number,statement_id,bill_period_from_date,bill_period_to_date,issued_date,number,gross_amount',
  ];
  const instructions = ['external_account_number,import_supplier,vendor,reference,type'];
  for (let n = 1; n <= size; n += 1) {
    const kind = options.clean ? 'valid' : n % 10 === 3 ? 'invalid' : n % 10 === 7 ? 'errored' : 'valid';
    const number = kind === 'errored' ? `ERR-${prefix}-${n}` : `${prefix}-${String(n).padStart(4, '0')}`;
    const email = kind === 'invalid' ? 'not-an-e-mail' : `person${n}@example.org`;
    accounts.push(
      `${number},ACME,DOMESTIC,Person ${n},${email},${n} High Street,York,YO1 7HH,GB,MONTHLY,1,false,ONLINE`,
    );
    customers.push(`${number},Given${n},Family${n},c${n}@example.org,+4479111${String(23000 + n).padStart(5, '0')}`);
    if (n % 2 === 0) customers.push(`${number},Second${n},Family${n},,`);
    const mpan = `12000${String(n).padStart(8, '0')}`;
    supply.push(`${number},${n} High Street,YO1 7HH,2024-01-01${kraken ? `,"[{""mpan"": ""${mpan}""}]"` : ''}`);
    if (kraken) result.meterPoints.set(number, [{ mpan }]);
    result[kind].push(number);
    const accountNotes = n % 2 === 0 ? [`note one of ${n}`, `note two of ${n}`] : [`only note of ${n}`];
    for (const [i, body] of accountNotes.entries()) notes.push(`${number},${body},${month}-0${i + 1}T09:00:00Z`);
    const ids = [`${number}-T1`, `${number}-T2`];
    transactions.push(
      `${number},${ids[0]},${month}-${day},12.50,CHARGE,IMPORTED_CHARGE`,
      `${number},${ids[1]},${month}-${day},3.10,CREDIT,IMPORTED_CREDIT`,
    );
    const statementIds = n % 3 === 0 ? [] : [`${number}-S1`, `${number}-S2`];
    // Major units in the export; the service gets minor units (4010).
    for (const id of statementIds) statements.push(`${number},${id},2024-01-01,2024-01-31,2024-02-03,INV-${id},40.10`);
    const reference = n % 11 === 5 && !options.clean ? `FAIL-${n}` : n % 11 === 8 ? `FLAKY-${n}` : `pm_${n}`;
    if (n % 4 !== 1) {
      instructions.push(`${number},ACME,STRIPE,${reference},CARD`);
      if (kind === 'valid') {
        if (reference.startsWith('FAIL-')) result.failingPaymentInstructions.push(number);
        else result.paymentInstructions.set(number, reference);
      }
    }
    if (kind === 'valid') {
      result.notes.set(number, accountNotes);
      result.transactions.set(number, ids);
      result.statements.set(number, statementIds);
    }
  }
  const files: Record<string, string[]> = {
    'accounts.csv': accounts,
    'customers.csv': customers,
    'supply_addresses.csv': supply,
    'notes.csv': notes,
    'transactions.csv': transactions,
    'statements.csv': statements,
    'payment_instructions.csv': instructions,
  };
  // Scattered (the default, as legacy exports are): every file's rows in an order of its own, so that an account's rows
  // sit far apart; sorted: in external account number order.
  const random = seeded(prefix);
  for (const [name, [header, ...rows]] of Object.entries(files)) {
    if (options.order !== 'sorted') shuffle(rows, random);
    writeFileSync(join(dir, name), `${[header, ...rows].join('\n')}\n`);
  }
  if (kraken)
    writeFileSync(
      join(dir, 'migrate.config.json'),
      JSON.stringify({ tenant_fields: { supply_addresses: { meter_points: 'array' } } }),
    );
  return result;
}

/** A repeatable pseudo-random sequence from a text (mulberry32): the same export for the same prefix. */
function seeded(text: string): () => number {
  let state = [...text].reduce((hash, char) => Math.imul(hash ^ char.charCodeAt(0), 2654435761) >>> 0, 2166136261);
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Fisher-Yates, in place. */
function shuffle<T>(items: T[], random: () => number): void {
  for (let i = items.length - 1; i > 0; i -= 1) {
    const j = Math.floor(random() * (i + 1));
    [items[i], items[j]] = [items[j] as T, items[i] as T];
  }
}
