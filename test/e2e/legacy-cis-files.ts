import { parse } from 'csv-parse/sync';
import { appendFileSync, cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './helpers.js';

// The legacy CIS fixture (fixtures/legacy-cis/) read the plainest way there is, without its shape.sql: what every live
// account must become on the service, derived here from the legacy rows by rules written out in full. The shape file
// and this reader are two independent readings of the same files; the end-to-end test compares them on the service.

export const LEGACY_CIS = join(ROOT, 'fixtures', 'legacy-cis');
export const FILES = {
  accounts: 'THISTLE_CIS_ACCOUNTS_20261126.csv',
  notes: 'THISTLE_NOTES_EXPORT_20261126.csv',
  postings: 'THISTLE_FIN_TXN_20261126.txt',
  bills: 'THISTLE_BILLS_20261126.csv',
  mandates: 'THISTLE_DD_MANDATES_20261126.csv',
} as const;

type Row = Record<string, string>;

function rows(name: string, encoding = 'utf-8', delimiter = ','): Row[] {
  // Streaming: Node 20's one-shot windows-1252 decode takes a latin-1 shortcut (O’Brien would read as O\u0092Brien).
  const decoder = new TextDecoder(encoding);
  const text = decoder.decode(readFileSync(join(LEGACY_CIS, name)), { stream: true }) + decoder.decode();
  return parse(text, { columns: true, delimiter, bom: true }) as Row[];
}

export interface LegacyAccount {
  status: string;
  supplyPoints: number;
  occupier: boolean;
  billingName: string;
  billingEmail: string | undefined;
  /** `given family <email> mobile`, the first holder first; the mobile international. */
  customers: string[];
  transferBalance: number;
  postalCode: string;
  supplyPostcode: string;
  dateOfSale: string;
  /** `body @ instant` */
  notes: string[];
  /** The account's one ledger: its posting history, as the platform keeps it. */
  ledger: Ledger;
  /** `id pence path` */
  statements: string[];
  mandate: string | undefined;
}

/** A ledger of the account payload (spec "Account payload"), as the platform keeps an account's posting history. */
export interface Ledger {
  ledger_code: string;
  last_statement_closing_date?: string;
  last_statement_balance: number;
  ledger_balance: number;
  historical_statement_transactions?: Posting[];
  current_statement_transactions?: Posting[];
}

type Posting = Record<string, string | number>;

const iso = (day: string): string => day.split('/').reverse().join('-');
const international = (phone: string): string => (phone === '' ? '' : `+44${phone.replaceAll(' ', '').slice(1)}`);

/**
 * `DD/MM/YYYY HH:MM` in UK local time as an instant, by the UK's rule (summer time from 01:00 UTC on the last Sunday
 * of March to 01:00 UTC on the last Sunday of October), not by a time zone database.
 */
export function londonInstant(local: string): string {
  const [day, month, year, hour, minute] = local.split(/[/ :]/).map(Number) as [number, number, number, number, number];
  const asUtc = Date.UTC(year, month - 1, day, hour, minute);
  const lastSunday = (m: number): number => {
    const last = new Date(Date.UTC(year, m, 0));
    return Date.UTC(year, m - 1, last.getUTCDate() - last.getUTCDay(), 1);
  };
  const summer = asUtc - 3_600_000;
  return new Date(summer >= lastSunday(3) && summer < lastSunday(10) ? summer : asUtc).toISOString();
}

/** A posting code and sign -> the platform's type: [when it raises what the customer owes, when it lowers it]. */
const POSTING_TYPES: Record<string, [string | undefined, string | undefined]> = {
  BILL: ['CHARGE', undefined],
  ADJ: ['CHARGE', 'CREDIT'],
  DDR: [undefined, 'PAYMENT'],
  CARD: [undefined, 'PAYMENT'],
  RFND: ['REPAYMENT', undefined],
};
const REASONS: Record<string, string> = {
  CHARGE: 'IMPORTED_CHARGE',
  CREDIT: 'IMPORTED_CREDIT',
  PAYMENT: 'ACCOUNT_CHARGE_PAYMENT',
  REPAYMENT: 'FULL_CREDIT_REFUND',
};
const PAYMENT_TYPES: Record<string, string> = {
  DDR: 'DD_REGULAR_COLLECTION',
  CARD: 'DEBIT_CARD',
  RFND: 'DIRECT_CREDIT',
};

/** A posting as a transaction of its account's ledger, with its date and its effect on the platform's balance. */
interface Dated {
  date: string;
  /** Pence, + when it puts the customer in credit (payments and credits). */
  effect: number;
  transaction: Posting;
}

function transactionOf(posting: Row): Dated {
  const lowers = posting['AMOUNT']!.startsWith('-');
  const code = posting['TXN_CODE']!;
  const type = POSTING_TYPES[code]?.[lowers ? 1 : 0] ?? '';
  const pennies = Math.round(Number(posting['AMOUNT']!.replace(/^[+-]/, '')) * 100);
  const paid = code in PAYMENT_TYPES;
  const transaction: Posting = {
    transaction_id: posting['TXN_REF']!,
    transaction_date: iso(posting['POST_DATE']!),
    amount: pennies / 100,
    type,
    reason: REASONS[type] ?? '',
    ...(paid && posting['BANK_REF'] ? { reference: posting['BANK_REF'] } : {}),
    ...(paid ? { payment_type: PAYMENT_TYPES[code]! } : {}),
    ...(!paid && posting['NARRATIVE'] ? { display_note: posting['NARRATIVE'] } : {}),
  };
  return { date: iso(posting['POST_DATE']!), effect: lowers ? pennies : -pennies, transaction };
}

const byDate = (a: Dated, b: Dated): number =>
  a.date.localeCompare(b.date) ||
  String(a.transaction['transaction_id']).localeCompare(String(b.transaction['transaction_id']));
const sum = (postings: Dated[]): number => postings.reduce((total, posting) => total + posting.effect, 0);
const dayBefore = (day: string): string =>
  new Date(Date.parse(`${day}T00:00:00Z`) - 86_400_000).toISOString().slice(0, 10);

/**
 * The ledger of an account (docs/from-a-legacy-system.md "History in ledgers"): its last statement closes on its last
 * bill's period end (never billed: the day before its first posting); postings up to that day are historical, after it
 * current; the ledger's balance is the legacy balance; the last statement's is that less the current postings; what
 * came before the extract's postings is one posting of its own, the balance brought forward.
 */
function ledgerOf(number: string, balancePence: number, postings: Dated[], lastBillEnd: string | undefined): Ledger {
  const first = [...postings].sort(byDate)[0]?.date;
  const closing = lastBillEnd ?? (first === undefined ? undefined : dayBefore(first));
  const historical = postings.filter((posting) => closing !== undefined && posting.date <= closing).sort(byDate);
  const current = postings.filter((posting) => !historical.includes(posting)).sort(byDate);
  const last = balancePence - sum(current);
  const broughtForward = last - sum(historical);
  const carried: Dated[] =
    historical.length > 0 && broughtForward !== 0
      ? [
          {
            date: first!,
            effect: broughtForward,
            transaction: {
              transaction_id: `BF${number}`,
              transaction_date: first!,
              amount: Math.abs(broughtForward) / 100,
              type: broughtForward > 0 ? 'CREDIT' : 'CHARGE',
              reason: broughtForward > 0 ? 'IMPORTED_CREDIT' : 'IMPORTED_CHARGE',
              display_note: 'Balance brought forward',
            },
          },
        ]
      : [];
  const list = (items: Dated[]) => (items.length === 0 ? undefined : items.map((item) => item.transaction));
  return {
    ledger_code: 'MAIN',
    ...(closing === undefined ? {} : { last_statement_closing_date: closing }),
    last_statement_balance: last / 100,
    ledger_balance: balancePence / 100,
    ...(historical.length === 0 ? {} : { historical_statement_transactions: list([...carried, ...historical]) }),
    ...(current.length === 0 ? {} : { current_statement_transactions: list(current) }),
  };
}

/** `£1,204.50` / `-£12.00` in pence. */
const pence = (printed: string): number => Math.round(Number(printed.replace(/[£,]/g, '')) * 100);

/** `\\fileserver\bills\2026\08\x.pdf` -> `bills/2026/08/x.pdf`. */
const documentPath = (unc: string): string => unc.replace(/^\\\\fileserver\\/, '').replaceAll('\\', '/');

/** Every account of the CIS extract by account number, live or not, with what its records hold. */
export function readLegacyCis(): Map<string, LegacyAccount> {
  const accounts = new Map<string, LegacyAccount>();
  for (const row of rows(FILES.accounts, 'windows-1252')) {
    const known = accounts.get(row['ACCOUNT_NO']!);
    if (known) {
      known.supplyPoints += 1;
      continue;
    }
    const holders = [1, 2].filter((n) => (row[`CUST${n}_SURNAME`] ?? '') !== '');
    const name = ['TITLE', 'FORENAME', 'SURNAME'].map((part) => row[`CUST1_${part}`]).filter(Boolean);
    accounts.set(row['ACCOUNT_NO']!, {
      status: row['ACCOUNT_STATUS']!,
      supplyPoints: 1,
      occupier: row['VACANT_FLAG'] === 'Y',
      billingName: row['VACANT_FLAG'] === 'Y' ? 'The Occupier' : name.join(' '),
      billingEmail: row['CUST1_EMAIL'] || undefined,
      customers: holders.map((n) =>
        [
          `${row[`CUST${n}_FORENAME`]} ${row[`CUST${n}_SURNAME`]}`,
          `<${row[`CUST${n}_EMAIL`]}>`,
          international(row[`CUST${n}_MOBILE`] ?? ''),
        ].join(' '),
      ),
      // The CIS: pence, + when the customer owes. The platform: pounds, + when the customer is in credit.
      transferBalance: -Number(row['BALANCE_PENCE']) / 100,
      postalCode: row['BILL_POSTCODE'] || row['SUPPLY_POSTCODE']!,
      supplyPostcode: row['SUPPLY_POSTCODE']!,
      dateOfSale: iso(row['ACCOUNT_OPEN_DATE']!),
      notes: [],
      ledger: { ledger_code: 'MAIN', last_statement_balance: 0, ledger_balance: 0 },
      statements: [],
      mandate: undefined,
    });
  }
  // Excel dropped the notes' leading zeros: a note belongs to the account whose number is the same number.
  const byNumber = new Map([...accounts.keys()].map((key) => [Number(key), key]));
  for (const note of rows(FILES.notes)) {
    const key = byNumber.get(Number(note['Account Number']));
    if (key !== undefined) accounts.get(key)?.notes.push(`${note['Note Text']} @ ${londonInstant(note['Note Date']!)}`);
  }
  const postings = new Map<string, Dated[]>();
  for (const posting of rows(FILES.postings, 'utf-8', '|')) {
    const list = postings.get(posting['ACCT_NO']!) ?? [];
    list.push(transactionOf(posting));
    postings.set(posting['ACCT_NO']!, list);
  }
  const lastBillEnd = new Map<string, string>();
  for (const bill of rows(FILES.bills)) {
    accounts
      .get(bill['ACCOUNT_NO']!)
      ?.statements.push(`${bill['BILL_NO']} ${pence(bill['TOTAL_DUE']!)} ${documentPath(bill['PDF_LOCATION']!)}`);
    const end = iso(bill['PERIOD_END']!);
    if (end > (lastBillEnd.get(bill['ACCOUNT_NO']!) ?? '')) lastBillEnd.set(bill['ACCOUNT_NO']!, end);
  }
  for (const [number, account] of accounts) {
    const balance = Math.round(account.transferBalance * 100);
    account.ledger = ledgerOf(number, balance, postings.get(number) ?? [], lastBillEnd.get(number));
  }
  for (const mandate of rows(FILES.mandates))
    if (mandate['MANDATE_STATUS'] === 'ACTIVE') {
      const account = accounts.get(mandate['ACCOUNT_NO']!);
      if (account) account.mandate = mandate['MANDATE_REF'];
    }
  return accounts;
}

/** A copy of the fixture to run in (a push writes nothing into its export, but a test may plant errors in it). */
export function copyLegacyCis(to: string): string {
  cpSync(LEGACY_CIS, to, { recursive: true, filter: (source) => !source.endsWith('.mjs') });
  return to;
}

/**
 * Sets one cell of one legacy row, in place, keeping the file's bytes otherwise: the row at `line` (one physical
 * line: the rows edited here hold no line break) is parsed, changed and written back quoted as the file quotes.
 * windows-1252 and UTF-8 files alike are edited through latin1, which keeps every byte as it was.
 */
export function plant(dir: string, file: string, line: number, column: string, value: string, delimiter = ','): void {
  const path = join(dir, file);
  const lines = readFileSync(path)
    .toString('latin1')
    .split(/(?<=\n)/);
  const header = (parse(lines[0]!.replace(/^\u00ef\u00bb\u00bf/, ''), { delimiter }) as string[][])[0]!;
  const target = lines[line - 1]!;
  const cells = (parse(target, { delimiter }) as string[][])[0]!;
  const index = header.indexOf(column);
  if (index < 0) throw new Error(`${file} has no column ${column}`);
  // The file's bytes are kept as they are (read and written as latin1); the value planted is written in the file's
  // own encoding: windows-1252 for the accounts file, UTF-8 for the others.
  cells[index] = file === FILES.accounts ? value : Buffer.from(value, 'utf8').toString('latin1');
  const quoteAll = target.startsWith('"');
  const quote = (cell: string): string =>
    quoteAll || /["\r\n]/.test(cell) || cell.includes(delimiter) ? `"${cell.replaceAll('"', '""')}"` : cell;
  lines[line - 1] = `${cells.map(quote).join(delimiter)}${target.endsWith('\r\n') ? '\r\n' : '\n'}`;
  writeFileSync(path, Buffer.from(lines.join(''), 'latin1'));
}

/**
 * The fixture as a team sends its history when it follows the transactions endpoint (the mistake the guide warns of):
 * every posting also through a `transactions` view, dated as it was posted. `force`: the mapping file declares
 * force_add_to_current_statement.
 */
export function sendHistoryAsTransactions(dir: string, force = false): void {
  appendFileSync(
    join(dir, 'shape.sql'),
    `
CREATE VIEW transactions AS
SELECT ACCT_NO AS external_account_number, TXN_REF AS transaction_id, POST_DATE AS transaction_date,
  regexp_replace(trim(AMOUNT), '^[+-]', '') AS amount,
  CASE
    WHEN TXN_CODE IN ('BILL', 'ADJ') AND NOT starts_with(trim(AMOUNT), '-') THEN 'CHARGE'
    WHEN TXN_CODE = 'ADJ' THEN 'CREDIT'
    WHEN TXN_CODE IN ('DDR', 'CARD') AND starts_with(trim(AMOUNT), '-') THEN 'PAYMENT'
    WHEN TXN_CODE = 'RFND' AND NOT starts_with(trim(AMOUNT), '-') THEN 'REPAYMENT'
  END AS type,
  _file, _line
FROM fin_postings
WHERE ACCT_NO NOT IN (SELECT ACCOUNT_NO FROM left_behind);
`,
  );
  const file = join(dir, 'migrate.config.json');
  const config = JSON.parse(readFileSync(file, 'utf8')) as { mapping: Record<string, unknown> };
  config.mapping['transactions'] = {
    date_format: 'DD/MM/YYYY',
    ...(force ? { force_add_to_current_statement: true } : {}),
  };
  writeFileSync(file, JSON.stringify(config, null, 2));
}
