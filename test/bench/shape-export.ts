import { createWriteStream, mkdirSync, writeFileSync } from 'node:fs';
import { once } from 'node:events';
import { join } from 'node:path';

// A legacy CIS export as the field sends it, for the shaping benchmark (test/bench/shape.bench.ts): wide accounts one
// row per supply point (every third account dual fuel), joint holders side by side (every fourth), Windows-1252,
// every cell quoted, CRLF; notes that went through Excel (BOM, headers with spaces, account numbers without their
// leading zeros, UK local times); a pipe-delimited finance dump with one signed amount in pence and a code. With the
// shape file and the mapping file that make the tool's record kinds of it.

const ACCOUNT_HEADER = [
  'ACCOUNT_NO',
  'STATUS',
  'ACCOUNT_TYPE',
  'TITLE_1',
  'FORENAME_1',
  'SURNAME_1',
  'EMAIL_1',
  'PHONE_1',
  'TITLE_2',
  'FORENAME_2',
  'SURNAME_2',
  'EMAIL_2',
  'ADDR_1',
  'ADDR_2',
  'ADDR_3',
  'ADDR_4',
  'POSTCODE',
  'MPXN',
  'FUEL',
  'SUPPLY_START',
  'TARIFF',
  'PAY_METHOD',
  'BALANCE_PENCE',
  'LAST_BILL',
  'SEGMENT',
];

const number = (index: number): string => String(index + 1).padStart(8, '0');
const quoted = (cells: string[]): string => `${cells.map((cell) => `"${cell}"`).join(',')}\r\n`;

function accountRows(index: number): string {
  const id = number(index);
  const joint = index % 4 === 0;
  const status = index % 50 === 49 ? 'CLOSED' : 'LIVE';
  const phone = `07911 ${String(100000 + (index % 900000)).padStart(6, '0')}`;
  const base = [
    id,
    status,
    'D',
    'Mr',
    `Forename${index}`,
    `Surname${index}`,
    `c${index}@example.org`,
    phone,
    joint ? 'Mrs' : '',
    joint ? `Partner${index}` : '',
    joint ? `Surname${index}` : '',
    joint ? `p${index}@example.org` : '',
    `${index} High Street`,
    'Flat 2',
    'Old Town',
    'York',
    'YO1 7HH',
  ];
  const row = (fuel: string, mpxn: string): string =>
    quoted([...base, mpxn, fuel, '03/01/2024', 'STANDARD', 'DD', String((index % 20_000) - 10_000), '01/11/2026', 'A']);
  return row('E', `12${id}001`) + (index % 3 === 0 ? row('G', `9${id}`) : '');
}

async function writeLines(path: string, lines: (index: number) => string, count: number, head: string): Promise<void> {
  const out = createWriteStream(path);
  out.write(head);
  let buffer = '';
  for (let index = 0; index < count; index += 1) {
    buffer += lines(index);
    if (buffer.length > 1 << 16) {
      if (!out.write(buffer, 'latin1')) await once(out, 'drain');
      buffer = '';
    }
  }
  out.end(buffer, 'latin1');
  await once(out, 'close');
}

export const SHAPE_SQL = `
CREATE VIEW accounts AS
SELECT ACCOUNT_NO AS external_account_number, TITLE_1 || ' ' || FORENAME_1 || ' ' || SURNAME_1 AS billing_name,
       EMAIL_1 AS billing_email, concat_ws(', ', ADDR_1, ADDR_2, ADDR_3) AS "billing_address.street_address",
       ADDR_4 AS "billing_address.locality", POSTCODE AS "billing_address.postal_code",
       CAST(-CAST(BALANCE_PENCE AS INTEGER) / 100 AS VARCHAR) AS transfer_balance, _file, _line
FROM cis_accounts WHERE STATUS = 'LIVE'
QUALIFY row_number() OVER (PARTITION BY ACCOUNT_NO ORDER BY _line) = 1;

CREATE VIEW customers AS
SELECT * EXCLUDE (holder) FROM (
  SELECT ACCOUNT_NO AS external_account_number, 1 AS holder, TITLE_1 AS title, FORENAME_1 AS given_name,
         SURNAME_1 AS family_name, EMAIL_1 AS email, PHONE_1 AS mobile, _file, _line
  FROM cis_accounts WHERE STATUS = 'LIVE' AND FUEL = 'E'
  UNION ALL
  SELECT ACCOUNT_NO, 2, TITLE_2, FORENAME_2, SURNAME_2, EMAIL_2, NULL, _file, _line
  FROM cis_accounts WHERE STATUS = 'LIVE' AND FUEL = 'E' AND FORENAME_2 IS NOT NULL)
ORDER BY external_account_number, holder;

CREATE VIEW supply_addresses AS
SELECT ACCOUNT_NO AS external_account_number, ADDR_1 AS supply_address1, POSTCODE AS supply_postcode,
       SUPPLY_START AS customer_at_supply_address_from_date, _file, _line
FROM cis_accounts WHERE STATUS = 'LIVE' AND FUEL = 'E';

CREATE VIEW notes AS
SELECT lpad("Account No", 8, '0') AS external_account_number, "Note Text" AS body,
       strftime(timezone('UTC', timezone('Europe/London', strptime(Created, '%d/%m/%Y %H:%M'))),
                '%Y-%m-%dT%H:%M:%SZ') AS created_at, _file, _line
FROM cis_notes
WHERE lpad("Account No", 8, '0') IN (SELECT ACCOUNT_NO FROM cis_accounts WHERE STATUS = 'LIVE');

CREATE VIEW transactions AS
SELECT ACCT AS external_account_number, TXN_ID AS transaction_id,
       strftime(strptime(TXN_DATE, '%Y%m%d'), '%Y-%m-%d') AS transaction_date,
       CAST(abs(CAST(AMOUNT AS INTEGER)) / 100 AS VARCHAR) AS amount,
       CASE WHEN CAST(AMOUNT AS INTEGER) < 0 THEN 'PAYMENT' ELSE 'CHARGE' END AS type,
       CASE WHEN CAST(AMOUNT AS INTEGER) < 0 THEN 'ACCOUNT_CHARGE_PAYMENT' ELSE 'IMPORTED_CHARGE' END AS reason,
       _file, _line
FROM cis_finance
WHERE ACCT IN (SELECT ACCOUNT_NO FROM cis_accounts WHERE STATUS = 'LIVE');
`;

const CONFIG = {
  import_supplier: 'ACME',
  phone_default_country: 'GB',
  sources: {
    cis_accounts: { file: 'CIS_ACCOUNTS_*.csv', encoding: 'windows-1252' },
    cis_notes: { file: 'CIS_NOTES.csv' },
    cis_finance: { file: 'CIS_FINANCE.txt', format: 'csv', delimiter: '|' },
  },
  shape: 'shape.sql',
  mapping: {
    accounts: { constants: { 'billing_address.country': 'GB', account_type: 'DOMESTIC' } },
    supply_addresses: { date_format: 'DD/MM/YYYY' },
  },
};

export async function writeLegacyExport(dir: string, accounts: number): Promise<void> {
  mkdirSync(dir, { recursive: true });
  await writeLines(join(dir, 'CIS_ACCOUNTS_20261126.csv'), accountRows, accounts, quoted(ACCOUNT_HEADER));
  const note = (index: number): string =>
    index % 2 === 0
      ? `${index + 1},"Called about bill ${index}",${String((index % 28) + 1).padStart(2, '0')}/10/2026 09:30\r\n`
      : '';
  await writeLines(join(dir, 'CIS_NOTES.csv'), note, accounts, '\ufeffAccount No,Note Text,Created\r\n');
  const finance = (index: number): string =>
    `${number(index)}|T${index}C|20261101|${1000 + (index % 5000)}|BILL\n` +
    `${number(index)}|T${index}P|20261115|-${1000 + (index % 5000)}|DDPAY\n`;
  await writeLines(join(dir, 'CIS_FINANCE.txt'), finance, accounts, 'ACCT|TXN_ID|TXN_DATE|AMOUNT|CODE\n');
  writeFileSync(join(dir, 'shape.sql'), SHAPE_SQL);
  writeFileSync(join(dir, 'migrate.config.json'), JSON.stringify(CONFIG, null, 2));
}
