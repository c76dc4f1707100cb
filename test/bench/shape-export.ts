import { createWriteStream, mkdirSync, writeFileSync } from 'node:fs';
import { once } from 'node:events';
import { join } from 'node:path';

// A legacy CIS export in the field's shape, for the shaping bench (test/bench/shape.bench.ts) and the engine-alone
// measurements of the guide's SQL (test/bench/shape-patterns.ts). As docs/from-a-legacy-system.md describes a CIS
// export: 47 columns, one row per supply point in supply point order (every third account dual fuel, its gas row a
// whole file away from its electricity row), joint holders side by side (every fourth account), the billing address
// as four ragged lines, the balance in signed pence (+ the customer owes), DD/MM/YYYY dates, Windows-1252 (accented
// names, every cell quoted, CRLF); contact notes saved from Excel (BOM, headers with spaces, leading zeros stripped,
// UK local times, a body over two lines); a pipe-delimited finance dump with four postings per account (a signed
// amount in pounds and a posting code). One account in fifty closed. With the shape file (the guide's SQL, in the
// forms that spill to disk) and the mapping file that make the tool's record kinds of it.

const HOLDER = ['TITLE', 'FORENAME', 'SURNAME', 'DOB', 'MOBILE', 'EMAIL', 'SMS_OPTIN', 'PSR_CONSENT'];

export const ACCOUNT_COLUMNS = [
  'RECORD_TYPE',
  'EXTRACT_DATE',
  'ACCOUNT_NO',
  'ACCOUNT_STATUS',
  'ACCOUNT_TYPE_CD',
  'ACCOUNT_OPEN_DATE',
  'SUPPLY_POINT_TYPE',
  'MPAN_MPRN',
  'METER_SERIAL',
  'TARIFF_CODE',
  ...HOLDER.map((column) => `CUST1_${column}`),
  ...HOLDER.map((column) => `CUST2_${column}`),
  'BILL_ADDR1',
  'BILL_ADDR2',
  'BILL_ADDR3',
  'BILL_ADDR4',
  'BILL_POSTCODE',
  'SUPPLY_ADDR1',
  'SUPPLY_ADDR2',
  'SUPPLY_ADDR3',
  'SUPPLY_ADDR4',
  'SUPPLY_POSTCODE',
  'MOVE_IN_DATE',
  'VACANT_FLAG',
  'BALANCE_PENCE',
  'BILL_FREQ',
  'PAPERLESS',
  'REGION_CD',
  'GSP_GROUP',
  'METER_TYPE',
  'READ_CYCLE',
  'LAST_READ_DATE',
  'EAC_KWH',
  'DEBT_FLAG',
  'FILLER_1',
];

const GIVEN = ['Oliver', 'Amelia', 'Zoë', 'Renée', 'Siân', 'Chloé', 'Jürgen', 'Harry', 'Isla', 'Noël', 'Priya'];
const FAMILY = ['Smith', 'Jones', 'Müller', 'Núñez', 'Patel', 'Lefèvre', 'MacLeod', 'Hughes', 'Åström', 'Khan'];
const TOWNS = ['Leeds', 'York', 'Harrogate', 'Manchester', 'Bath', 'Cardiff', 'Edinburgh', 'Kendal'];

const accountNo = (index: number): string => String(index + 1).padStart(8, '0');
const quoted = (cells: string[]): string => `"${cells.join('","')}"\r\n`;
/** A DD/MM/YYYY date in `months` months of `year`, spread by `index`. */
const ukDate = (index: number, year: number, months = 12): string =>
  `${String((index % 28) + 1).padStart(2, '0')}/${String((index % months) + 1).padStart(2, '0')}/${year}`;

function holder(index: number, second: boolean): string[] {
  const given = GIVEN[(index + (second ? 5 : 0)) % GIVEN.length] ?? '';
  const family = FAMILY[index % FAMILY.length] ?? '';
  const mobile = `07911 ${String(100000 + ((index * 7 + (second ? 3 : 0)) % 900000)).padStart(6, '0')}`;
  return [
    second ? 'Mrs' : 'Mr',
    given,
    family,
    ukDate(index, 1950 + (index % 50)),
    mobile,
    `${second ? 'p' : 'c'}${index}@example.org`,
    index % 3 === 0 ? 'Y' : 'N',
    index % 11 === 0 ? 'Y' : 'N',
  ];
}

function accountRow(index: number, fuel: 'ELEC' | 'GAS'): string {
  const id = accountNo(index);
  const town = TOWNS[index % TOWNS.length] ?? '';
  const billedElsewhere = index % 10 === 0;
  const supply = [`${(index % 200) + 1} Mill Lane`, index % 2 === 0 ? 'Headingley' : '', '', town];
  const bill = billedElsewhere ? [`Flat ${index % 9}`, `${index % 90} Café Row`, '', town] : ['', '', '', ''];
  const owes = index % 3 === 0 ? -1 : 1;
  return quoted([
    'SP',
    '26/11/2026',
    id,
    index % 50 === 49 ? 'CLOSED' : 'LIVE',
    'DOM',
    ukDate(index, 2015 + (index % 10)),
    fuel,
    fuel === 'ELEC' ? `12${id}001` : `9${id}`,
    `${fuel === 'ELEC' ? 'E' : 'G'}${String(index).padStart(9, '0')}`,
    fuel === 'ELEC' ? 'STD-E-2026' : 'STD-G-2026',
    ...holder(index, false),
    ...(index % 4 === 0 ? holder(index, true) : HOLDER.map(() => '')),
    ...bill,
    billedElsewhere ? `LS6 ${index % 9}AB` : '',
    ...supply,
    `YO1 ${index % 9}HH`,
    ukDate(index, 2020 + (index % 6), 10),
    'N',
    `${owes < 0 ? '-' : '+'}${(index * 37) % 250_000}`,
    'M',
    index % 2 === 0 ? 'Y' : 'N',
    `R${index % 14}`,
    `_${'ABCDEFGHJKLMNP'[index % 14]}`,
    fuel === 'ELEC' ? 'SMETS2' : 'CREDIT',
    `C${index % 30}`,
    ukDate(index + 3, 2026, 10),
    String(2000 + (index % 4000)),
    index % 17 === 0 ? 'Y' : 'N',
    '',
  ]);
}

/** Electricity rows for every account, then gas rows for the dual-fuel ones: a CIS in supply point order. */
const accountLines =
  (accounts: number) =>
  (row: number): string =>
    row < accounts ? accountRow(row, 'ELEC') : accountRow((row - accounts) * 3, 'GAS');

function noteLine(index: number): string {
  if (index % 2 !== 0) return '';
  const body =
    index % 10 === 0 ? '"Complaint logged: meter reading disputed.\r\nCallback booked."' : 'Customer called.';
  const at = `${ukDate(index, 2026, 10)} ${String(index % 24).padStart(2, '0')}:${index % 2 === 0 ? '15' : '45'}`;
  return `${index},${index + 1},${at},jsmith,General,${body},${index % 20 === 0 ? 'Y' : ''}\r\n`;
}

const POSTINGS = [
  ['BILL', 1, 'Energy bill'],
  ['DDR', -1, ''],
  ['BILL', 1, 'Energy bill'],
  ['ADJ', -1, 'Reading correction'],
] as const;

function financeLines(index: number): string {
  const id = accountNo(index);
  let lines = '';
  for (const [at, [code, sign, narrative]] of POSTINGS.entries()) {
    const pence = 1000 + ((index * 13 + at * 101) % 20_000);
    const amount = `${sign < 0 ? '-' : ''}${Math.floor(pence / 100)}.${String(pence % 100).padStart(2, '0')}`;
    const bank = code === 'DDR' ? `BACS${index}` : '';
    lines += `${id}|FT${index}-${at}|${ukDate(index + at, 2026, 10)}|${amount}|${code}|${narrative}|${bank}|GL1100\n`;
  }
  return lines;
}

async function writeLines(
  path: string,
  lines: (index: number) => string,
  count: number,
  head: string,
  encoding: 'latin1' | 'utf8',
): Promise<void> {
  const out = createWriteStream(path);
  out.write(head, encoding);
  let buffer = '';
  for (let index = 0; index < count; index += 1) {
    buffer += lines(index);
    if (buffer.length > 1 << 16) {
      if (!out.write(buffer, encoding)) await once(out, 'drain');
      buffer = '';
    }
  }
  out.end(buffer, encoding);
  await once(out, 'close');
}

/** The bench's SQL: the guide's patterns (docs/from-a-legacy-system.md "SQL that scales"), the forms that spill. */
export const SHAPE_SQL = `
CREATE VIEW left_behind AS
SELECT DISTINCT ACCOUNT_NO FROM cis_accounts WHERE ACCOUNT_STATUS IN ('CLOSED', 'FINAL');

-- Each account's supply points numbered: a window sorts, and spills.
CREATE VIEW live_rows AS
SELECT *, row_number() OVER (PARTITION BY ACCOUNT_NO ORDER BY SUPPLY_POINT_TYPE, _line) AS point
FROM cis_accounts WHERE ACCOUNT_STATUS = 'LIVE';

-- Money totals per account: a GROUP BY over narrow columns spills.
CREATE VIEW posting_totals AS
SELECT ACCT_NO, sum(CAST(AMOUNT AS DECIMAL(18, 2))) AS total, count(*) AS postings
FROM fin_postings GROUP BY ACCT_NO;

-- One row per account, its supply points side by side by position (max(CASE ...) spills where list() does not),
-- made a list for the metadata.
CREATE VIEW live_accounts AS
SELECT ACCOUNT_NO, ACCOUNT_TYPE_CD, ACCOUNT_OPEN_DATE, VACANT_FLAG, BALANCE_PENCE, BILL_FREQ, PAPERLESS, MOVE_IN_DATE,
  ${HOLDER.map((column) => `CUST1_${column}`).join(', ')},
  ${HOLDER.map((column) => `CUST2_${column}`).join(', ')},
  list_filter([BILL_ADDR1, BILL_ADDR2, BILL_ADDR3, BILL_ADDR4], line -> trim(line) <> '') AS bill_lines,
  nullif(trim(BILL_POSTCODE), '') AS bill_postcode,
  list_filter([SUPPLY_ADDR1, SUPPLY_ADDR2, SUPPLY_ADDR3, SUPPLY_ADDR4], line -> trim(line) <> '') AS supply_lines,
  nullif(trim(SUPPLY_POSTCODE), '') AS supply_postcode,
  list_filter([
    max(CASE WHEN point = 1 THEN {'fuel': SUPPLY_POINT_TYPE, 'mpxn': MPAN_MPRN, 'meter_serial': METER_SERIAL,
                                  'tariff': TARIFF_CODE} END),
    max(CASE WHEN point = 2 THEN {'fuel': SUPPLY_POINT_TYPE, 'mpxn': MPAN_MPRN, 'meter_serial': METER_SERIAL,
                                  'tariff': TARIFF_CODE} END)
  ], point -> point IS NOT NULL) AS supply_points,
  min(_line) AS _line, min(_file) AS _file
FROM live_rows
GROUP BY ALL;

CREATE VIEW accounts AS
WITH addressed AS (
  SELECT *,
    CASE WHEN len(bill_lines) = 0 THEN supply_lines ELSE bill_lines END AS lines,
    CASE WHEN len(bill_lines) = 0 THEN supply_postcode ELSE bill_postcode END AS postcode
  FROM live_accounts
)
SELECT ACCOUNT_NO AS external_account_number, ACCOUNT_TYPE_CD AS account_type,
  concat_ws(' ', nullif(trim(CUST1_TITLE), ''), nullif(trim(CUST1_FORENAME), ''), nullif(trim(CUST1_SURNAME), ''))
    AS billing_name,
  nullif(trim(CUST1_EMAIL), '') AS billing_email,
  CASE WHEN len(lines) > 1 THEN array_to_string(lines[1:len(lines) - 1], chr(10)) ELSE lines[1] END
    AS "billing_address.street_address",
  CASE WHEN len(lines) > 1 THEN lines[len(lines)] END AS "billing_address.locality",
  postcode AS "billing_address.postal_code",
  BILL_FREQ AS "account_billing_options.period_length",
  ACCOUNT_OPEN_DATE AS date_of_sale,
  PAPERLESS AS communication_preference,
  BALANCE_PENCE AS transfer_balance,
  to_json([{'key': 'cis', 'value': {'account_no': ACCOUNT_NO, 'supply_points': supply_points,
                                     'postings_total': CAST(totals.total AS VARCHAR),
                                     'postings': totals.postings}}])::VARCHAR AS metadata,
  _file, _line
FROM addressed LEFT JOIN posting_totals AS totals ON totals.ACCT_NO = addressed.ACCOUNT_NO;

-- Joint holders unpivoted from the account's first supply point row (no second pass over the grouping).
CREATE VIEW customers AS
SELECT ACCOUNT_NO AS external_account_number, title, given_name, family_name, date_of_birth, mobile, email,
  "customer_preferences.opted_into_sms", "customer_preferences.is_user_psr_consent_obtained", _file, _line
FROM (
  SELECT ACCOUNT_NO, 1 AS holder, CUST1_TITLE AS title, CUST1_FORENAME AS given_name, CUST1_SURNAME AS family_name,
    CUST1_DOB AS date_of_birth, CUST1_MOBILE AS mobile, CUST1_EMAIL AS email,
    CUST1_SMS_OPTIN AS "customer_preferences.opted_into_sms",
    CUST1_PSR_CONSENT AS "customer_preferences.is_user_psr_consent_obtained", _file, _line
  FROM live_rows WHERE point = 1 AND trim(CUST1_SURNAME) <> ''
  UNION ALL
  SELECT ACCOUNT_NO, 2, CUST2_TITLE, CUST2_FORENAME, CUST2_SURNAME, CUST2_DOB, CUST2_MOBILE, CUST2_EMAIL,
    CUST2_SMS_OPTIN, CUST2_PSR_CONSENT, _file, _line
  FROM live_rows WHERE point = 1 AND trim(CUST2_SURNAME) <> ''
)
ORDER BY ACCOUNT_NO, holder;

CREATE VIEW supply_addresses AS
SELECT ACCOUNT_NO AS external_account_number, array_to_string(supply_lines, ', ') AS supply_address1,
  supply_postcode, MOVE_IN_DATE AS customer_at_supply_address_from_date, _file, _line
FROM live_accounts;

CREATE VIEW notes AS
SELECT lpad(trim("Account Number"), 8, '0') AS external_account_number, "Note Text" AS body,
  "Note Date" AS created_at, nullif(trim(Pinned), '') AS is_pinned, _file, _line
FROM cis_notes
WHERE lpad(trim("Account Number"), 8, '0') NOT IN (SELECT ACCOUNT_NO FROM left_behind);

CREATE VIEW transactions AS
WITH posting AS (
  SELECT *, starts_with(trim(AMOUNT), '-') AS lowers_debt FROM fin_postings
  WHERE ACCT_NO NOT IN (SELECT ACCOUNT_NO FROM left_behind)
)
SELECT ACCT_NO AS external_account_number, TXN_REF AS transaction_id, POST_DATE AS transaction_date,
  regexp_replace(trim(AMOUNT), '^[+-]', '') AS amount,
  CASE WHEN TXN_CODE = 'BILL' AND NOT lowers_debt THEN 'CHARGE' WHEN TXN_CODE = 'ADJ' AND lowers_debt THEN 'CREDIT'
       WHEN TXN_CODE = 'DDR' AND lowers_debt THEN 'PAYMENT' END AS type,
  CASE WHEN TXN_CODE = 'BILL' AND NOT lowers_debt THEN 'IMPORTED_CHARGE'
       WHEN TXN_CODE = 'ADJ' AND lowers_debt THEN 'IMPORTED_CREDIT'
       WHEN TXN_CODE = 'DDR' AND lowers_debt THEN 'ACCOUNT_CHARGE_PAYMENT' END AS reason,
  CASE WHEN TXN_CODE = 'DDR' THEN nullif(trim(BANK_REF), '') END AS reference,
  CASE WHEN TXN_CODE = 'DDR' THEN TXN_CODE END AS payment_type,
  CASE WHEN TXN_CODE IN ('BILL', 'ADJ') THEN nullif(trim(NARRATIVE), '') END AS display_note,
  _file, _line
FROM posting;
`;

const CONFIG = {
  import_supplier: 'ACME',
  phone_default_country: 'GB',
  sources: {
    cis_accounts: { file: 'CIS_ACCOUNTS_*.csv', encoding: 'windows-1252' },
    cis_notes: { file: 'NOTES_EXPORT_*.csv' },
    fin_postings: { file: 'FIN_TXN_*.txt', format: 'csv', delimiter: '|' },
  },
  shape: 'shape.sql',
  mapping: {
    accounts: {
      values: {
        account_type: { DOM: 'DOMESTIC' },
        'account_billing_options.period_length': { M: 'MONTHLY', Q: 'QUARTERLY' },
        communication_preference: { Y: 'ONLINE', N: 'PRINT' },
      },
      constants: { 'billing_address.country': 'GB', 'account_billing_options.use_industry_billing': false },
      date_format: 'DD/MM/YYYY',
      scale: { transfer_balance: -0.01 },
    },
    customers: {
      values: {
        'customer_preferences.opted_into_sms': { Y: true, '*': false },
        'customer_preferences.is_user_psr_consent_obtained': { Y: true, '*': false },
      },
      date_format: 'DD/MM/YYYY',
    },
    supply_addresses: { date_format: 'DD/MM/YYYY' },
    notes: { datetime_format: 'DD/MM/YYYY HH:mm', timezone: 'Europe/London', dst: 'earlier' },
    transactions: { values: { payment_type: { DDR: 'DD_REGULAR_COLLECTION' } }, date_format: 'DD/MM/YYYY' },
  },
};

/** Writes the export of `accounts` accounts, its shape file and its mapping file into `dir`. */
export async function writeLegacyExport(dir: string, accounts: number): Promise<void> {
  mkdirSync(dir, { recursive: true });
  const dualFuel = Math.ceil(accounts / 3);
  await writeLines(
    join(dir, 'CIS_ACCOUNTS_20261126.csv'),
    accountLines(accounts),
    accounts + dualFuel,
    quoted(ACCOUNT_COLUMNS),
    'latin1',
  );
  await writeLines(
    join(dir, 'NOTES_EXPORT_20261126.csv'),
    noteLine,
    accounts,
    '\ufeffNote ID,Account Number,Note Date,Created By,Category,Note Text,Pinned\r\n',
    'utf8',
  );
  await writeLines(
    join(dir, 'FIN_TXN_20261126.txt'),
    financeLines,
    accounts,
    'ACCT_NO|TXN_REF|POST_DATE|AMOUNT|TXN_CODE|NARRATIVE|BANK_REF|GL_CODE\n',
    'utf8',
  );
  writeFileSync(join(dir, 'shape.sql'), SHAPE_SQL);
  writeFileSync(join(dir, 'migrate.config.json'), JSON.stringify(CONFIG, null, 2));
}
