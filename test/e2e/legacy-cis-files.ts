import { parse } from 'csv-parse/sync';
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
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
  /** `id type amount` */
  transactions: string[];
  /** `id pence path` */
  statements: string[];
  mandate: string | undefined;
}

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
      transactions: [],
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
  for (const posting of rows(FILES.postings, 'utf-8', '|')) {
    const lowers = posting['AMOUNT']!.startsWith('-');
    const type = POSTING_TYPES[posting['TXN_CODE']!]?.[lowers ? 1 : 0];
    const amount = Number(posting['AMOUNT']!.replace(/^[+-]/, ''));
    accounts.get(posting['ACCT_NO']!)?.transactions.push(`${posting['TXN_REF']} ${type} ${amount}`);
  }
  for (const bill of rows(FILES.bills))
    accounts
      .get(bill['ACCOUNT_NO']!)
      ?.statements.push(`${bill['BILL_NO']} ${pence(bill['TOTAL_DUE']!)} ${documentPath(bill['PDF_LOCATION']!)}`);
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
