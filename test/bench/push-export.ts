import { createWriteStream, type WriteStream } from 'node:fs';
import { once } from 'node:events';
import path from 'node:path';

// A synthetic export for the push benchmark and the end-to-end tests, with every record kind, as the field sends
// them: per account one accounts row, two customers (joint holders), one supply address (two on every seventh);
// three notes on two accounts in three, two transactions on every second account, two historical statements on
// every fourth, one payment instruction on four accounts in five.
// `scattered` (the default, as legacy exports are: customers by surname, transactions by date):
// every file in its own account order, and the several rows of one account far apart (the n-th
// row of every account is written in its own pass, each pass in another order); `sorted`: every
// file in external account number order. Written as a stream: memory does not follow the size.
// It returns the fewest requests the spec allows for it: per account create, one status check,
// one request per post-import kind present, one per payment instruction.

export type ExportOrder = 'scattered' | 'sorted';

export interface GeneratedExport {
  accounts: number;
  minimumRequests: number;
}

class Lines {
  readonly #stream: WriteStream;
  #buffer = '';

  constructor(file: string, header: string) {
    this.#stream = createWriteStream(file);
    this.#buffer = `${header}\n`;
  }

  async add(line: string): Promise<void> {
    this.#buffer += `${line}\n`;
    if (this.#buffer.length < 1 << 16) return;
    const ok = this.#stream.write(this.#buffer);
    this.#buffer = '';
    if (!ok) await once(this.#stream, 'drain');
  }

  async end(): Promise<void> {
    this.#stream.end(this.#buffer);
    await once(this.#stream, 'finish');
  }
}

/**
 * The first day of the open statement period the transactions are dated in (its first 15 days): a sandbox that must
 * take them all, whatever the month it runs in, is given this period.
 */
export const PUSH_EXPORT_OPEN_PERIOD = '2026-11-01';
const day = (index: number): string =>
  `${PUSH_EXPORT_OPEN_PERIOD.slice(0, 8)}${String(1 + (index % 15)).padStart(2, '0')}`;

const id = (i: number): string => `PB-${String(i).padStart(8, '0')}`;
const noteCount = (i: number): number => (i % 3 === 0 ? 0 : 3);

/** Each file's rows of account i, in the account's own order. */
const ROWS: Record<string, (i: number) => string[]> = {
  'accounts.csv': (i) => [
    `${id(i)},ACME,DOMESTIC,Customer ${i},customer${i}@example.org,REF${i},Customer ${i},${i} High Street,Leeds,LS1 ${1 + (i % 9)}AB,GB,MONTHLY,${1 + (i % 28)},false,2024-03-0${1 + (i % 9)},DIRECT,ONLINE,0,Team ${i % 5}`,
  ],
  'customers.csv': (i) => [
    `${id(i)},Ms,Ada,Lovelace${i},ada${i}@example.org,+4479111${String(i % 100000).padStart(5, '0')},1980-01-0${1 + (i % 9)},true`,
    `${id(i)},Mr,Bob,Lovelace${i},bob${i}@example.org,,1979-05-1${i % 10},false`,
  ],
  'supply_addresses.csv': (i) => [
    `${id(i)},${i} High Street,LS1 ${1 + (i % 9)}AB,2024-03-0${1 + (i % 9)}`,
    ...(i % 7 === 0 ? [`${id(i)},${i} Mill Lane,LS2 ${1 + (i % 9)}CD,2025-06-1${i % 10}`] : []),
  ],
  'notes.csv': (i) =>
    Array.from(
      { length: noteCount(i) },
      (_, n) => `${id(i)},"Migrated from legacy, note ${n} of ${i}",2026-11-0${1 + n}T09:00:00Z`,
    ),
  'transactions.csv': (i) =>
    i % 2 === 0
      ? [
          `${id(i)},T${i}-1,${day(i)},42.10,CHARGE,IMPORTED_CHARGE,Opening charge`,
          `${id(i)},T${i}-2,${day(i + 1)},42.10,PAYMENT,ACCOUNT_CHARGE_PAYMENT,`,
        ]
      : [],
  'statements.csv': (i) =>
    i % 4 === 0
      ? [
          `${id(i)},S${i}-09,2026-09-01,2026-09-30,2026-10-03,INV-${i}-09,40.50`,
          `${id(i)},S${i}-10,2026-10-01,2026-10-31,2026-11-03,INV-${i}-10,41.25`,
        ]
      : [],
  'payment_instructions.csv': (i) => (i % 5 !== 0 ? [`${id(i)},ACME,STRIPE,pm_${i},CARD`] : []),
};

const HEADERS: Record<string, string> = {
  'accounts.csv':
    'external_account_number,import_supplier,account_type,billing_name,billing_email,billing_customer_reference,billing_address.name,billing_address.street_address,billing_address.locality,billing_address.postal_code,billing_address.country,account_billing_options.period_length,account_billing_options.period_start_day,account_billing_options.use_industry_billing,date_of_sale,sales_channel,communication_preference,transfer_balance,operations_team_name',
  'customers.csv':
    'external_account_number,title,given_name,family_name,email,mobile,date_of_birth,customer_preferences.opted_into_sms',
  'supply_addresses.csv':
    'external_account_number,supply_address1,supply_postcode,customer_at_supply_address_from_date',
  'notes.csv': 'external_account_number,body,created_at',
  'transactions.csv': 'external_account_number,transaction_id,transaction_date,amount,type,reason,display_note',
  'statements.csv':
    'external_account_number,statement_id,bill_period_from_date,bill_period_to_date,issued_date,number,gross_amount',
  'payment_instructions.csv': 'external_account_number,import_supplier,vendor,reference,type',
};

/** Multipliers coprime with most counts: j -> (j * p + offset) mod count is then a permutation. */
const PRIMES = [7919, 104729, 1299709, 15485863, 32452843, 49979687, 67867967, 86028121, 104395301];

/** The account written at position j of pass `pass` of file `fileIndex` (identity when sorted). */
function orderOf(order: ExportOrder, count: number, fileIndex: number, pass: number): (j: number) => number {
  if (order === 'sorted') return (j) => j;
  const candidates = PRIMES.filter((prime) => count % prime !== 0);
  const prime = candidates[(fileIndex * 3 + pass) % candidates.length] ?? 1;
  const offset = (fileIndex * 7 + pass * 13) % Math.max(1, count);
  // j * prime stays below 2^53 up to 86 million accounts.
  return (j) => (j * prime + offset) % count;
}

export async function writePushExport(
  dir: string,
  count: number,
  order: ExportOrder = 'scattered',
): Promise<GeneratedExport> {
  for (const [fileIndex, [name, rowsOfAccount]] of Object.entries(ROWS).entries()) {
    const lines = new Lines(path.join(dir, name), HEADERS[name] as string);
    const passes = order === 'sorted' ? 1 : 3;
    for (let pass = 0; pass < passes; pass += 1) {
      const accountAt = orderOf(order, count, fileIndex, pass);
      for (let j = 0; j < count; j += 1) {
        const all = rowsOfAccount(accountAt(j));
        // Sorted: every row of the account at once; scattered: its pass-th row only.
        for (const line of order === 'sorted' ? all : all.slice(pass, pass + 1)) await lines.add(line);
      }
    }
    await lines.end();
  }
  let minimumRequests = 0;
  for (let i = 0; i < count; i += 1) {
    minimumRequests += 2 + (noteCount(i) > 0 ? 1 : 0);
    minimumRequests += (i % 2 === 0 ? 1 : 0) + (i % 4 === 0 ? 1 : 0) + (i % 5 !== 0 ? 1 : 0);
  }
  return { accounts: count, minimumRequests };
}
