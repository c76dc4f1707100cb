import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

// An SAP IS-U extract in the formats SAP writes, for the shaping tests: a contract account download whose fields are
// never quoted (a `"` in a name is a character of it), a header-less pipe-delimited dump of open items with its
// columns named in the mapping file, notes quoted with `'`, and a fixed-width bank mandate file in windows-1252 whose
// lines end where their last filled column ends. Written byte for byte by the test, so every value and line is known.

export const SAP_FILES = {
  accounts: 'SAP_FKKVKP_20261126.csv',
  postings: 'SAP_DFKKOP_20261126.txt',
  notes: 'SAP_NOTES_20261126.csv',
  mandates: 'SAP_MANDATES_20261126.dat',
} as const;

/** The contract accounts download: `;`-delimited, never quoted, windows-1252, CRLF. */
export const ACCOUNT_LINES = [
  'VKONT;NAME_FIRST;NAME_LAST;SMTP_ADDR;STREET;POST_CODE1;EINZDAT;SALDO',
  '000010000001;Anil "Neil";Patel;anil@example.org;1 High St;YO1 7HH;20240103;-1250',
  '000010000002;Zoë;O\'Brien;zoe@example.org;2 "The Mews", Rear;LS1 4AP;20250228;0',
  '000010000003;José;Núñez;jose@example.org;3 Low St;HU1 1AA;20230615;300',
];

/** Open items: VKONT|OPBEL|BUDAT|BETRH|HVORG, no header, LF. */
export const POSTING_LINES = [
  '000010000001|100000000001|20260301|52.10|BILL',
  '000010000001|100000000002|20260315|-52.10|DDR',
  '000010000003|100000000003|20260301|12.00|BILL',
];

/** Notes quoted with ' (doubled inside), a " an ordinary character. */
export const NOTE_LINES = [
  "'VKONT','TEXT','ERDAT'",
  "'000010000001','Asked for ''paper bills''; said \"no calls\"','26.03.2026 10:00'",
  "'000010000002','Moved in, 28 Feb',01.11.2026 09:30",
];

/** The mandate layout: VKONT 1-12, sort code 13-18, bank account 19-26, holder 27-56, limit 57-64, reference 65-79, status 80, cancelled on 81-88. */
export const MANDATE_COLUMNS = [
  { name: 'VKONT', start: 1, width: 12 },
  { name: 'SORT_CODE', start: 13, width: 6 },
  { name: 'BANK_ACCOUNT', start: 19, width: 8 },
  { name: 'HOLDER', start: 27, width: 30 },
  { name: 'DD_LIMIT', start: 57, width: 8 },
  { name: 'MANDATE_REF', start: 65, width: 15 },
  { name: 'STATUS', start: 80, width: 1 },
  { name: 'CANCELLED_ON', start: 81, width: 8 },
];

const fixed = (...values: Array<[string, number]>): string =>
  values.map(([value, width]) => value.padEnd(width)).join('');

/** Active mandates end after STATUS, or carry spaces for the date; a cancelled one carries its date. */
export const MANDATE_LINES = [
  fixed(
    ['000010000001', 12],
    ['401234', 6],
    ['12345678', 8],
    ['Anil "Neil" Patel, Esq.', 30],
    ['£500', 8],
    ['SAPDD-0000001', 15],
    ['A', 1],
  ),
  fixed(
    ['000010000002', 12],
    ['208965', 6],
    ['87654321', 8],
    ["Zoë O'Brien", 30],
    ['£1,000', 8],
    ['SAPDD-0000002', 15],
    ['A', 1],
    ['', 8],
  ),
  fixed(
    ['000010000003', 12],
    ['309634', 6],
    ['11223344', 8],
    ['José Núñez', 30],
    ['', 8],
    ['SAPDD-0000003', 15],
    ['C', 1],
    ['20260301', 8],
  ),
  fixed(
    ['000010000003', 12],
    ['309634', 6],
    ['55667788', 8],
    ['José Núñez', 30],
    ['£250', 8],
    ['SAPDD-0000004', 15],
    ['A', 1],
  ),
];

export const SAP_CONFIG = {
  import_supplier: 'ACME',
  sources: {
    sap_accounts: { file: 'SAP_FKKVKP_*.csv', encoding: 'windows-1252', delimiter: ';', quote: false },
    sap_postings: {
      file: 'SAP_DFKKOP_*.txt',
      format: 'csv',
      delimiter: '|',
      header: false,
      columns: ['VKONT', 'OPBEL', 'BUDAT', 'BETRH', 'HVORG'],
    },
    sap_notes: { file: 'SAP_NOTES_*.csv', quote: "'" },
    sap_mandates: { file: 'SAP_MANDATES_*.dat', format: 'fixed', encoding: 'windows-1252', columns: MANDATE_COLUMNS },
  },
  shape: 'shape.sql',
  mapping: {
    accounts: {
      rename: { VKONT: 'external_account_number' },
      constants: { 'billing_address.country': 'GB', account_type: 'DOMESTIC' },
      scale: { transfer_balance: -0.01 },
    },
    customers: { rename: { VKONT: 'external_account_number' } },
    supply_addresses: { rename: { VKONT: 'external_account_number' }, date_format: 'YYYYMMDD' },
    transactions: {
      rename: { VKONT: 'external_account_number', OPBEL: 'transaction_id' },
      values: { payment_type: { DDR: 'DD_REGULAR_COLLECTION' } },
      date_format: 'YYYYMMDD',
    },
    notes: {
      rename: { VKONT: 'external_account_number', TEXT: 'body' },
      datetime_format: 'DD.MM.YYYY HH:mm',
      timezone: 'Europe/London',
    },
    payment_instructions: {
      rename: { VKONT: 'external_account_number' },
      constants: { vendor: 'BOTTOMLINE_GLOBAL_PAYMENTS_HUB', type: 'DIRECT_DEBIT' },
    },
  },
};

export const SAP_SHAPE = `
-- Account, holder and supply address from the contract account download; the SQL trims (the readers never do).
CREATE VIEW accounts AS
SELECT a.VKONT,
       trim(NAME_FIRST) || ' ' || trim(NAME_LAST) AS billing_name,
       SMTP_ADDR AS billing_email,
       STREET AS "billing_address.street_address",
       POST_CODE1 AS "billing_address.postal_code",
       SALDO AS transfer_balance,
       CASE WHEN m.VKONT IS NOT NULL THEN to_json([{'key': 'sap_mandate', 'value': {
         'sort_code': m.SORT_CODE, 'bank_account': m.BANK_ACCOUNT, 'holder': rtrim(m.HOLDER),
         'limit': nullif(trim(m.DD_LIMIT), '')}}])::VARCHAR END AS metadata,
       a._file, a._line
FROM sap_accounts AS a LEFT JOIN sap_mandates AS m ON m.VKONT = a.VKONT AND m.STATUS = 'A';

CREATE VIEW customers AS
SELECT VKONT, NAME_FIRST AS given_name, NAME_LAST AS family_name, SMTP_ADDR AS email, _file, _line FROM sap_accounts;

CREATE VIEW supply_addresses AS
SELECT VKONT, STREET AS supply_address1, POST_CODE1 AS supply_postcode,
       EINZDAT AS customer_at_supply_address_from_date, _file, _line
FROM sap_accounts;

CREATE VIEW transactions AS
SELECT VKONT, OPBEL, BUDAT AS transaction_date, ltrim(BETRH, '-') AS amount,
       CASE HVORG WHEN 'BILL' THEN 'CHARGE' WHEN 'DDR' THEN 'PAYMENT' END AS type,
       CASE HVORG WHEN 'BILL' THEN 'IMPORTED_CHARGE' WHEN 'DDR' THEN 'ACCOUNT_CHARGE_PAYMENT' END AS reason,
       CASE HVORG WHEN 'DDR' THEN HVORG END AS payment_type,
       CASE HVORG WHEN 'DDR' THEN 'DD ' || OPBEL END AS reference,
       _file, _line
FROM sap_postings;

CREATE VIEW notes AS SELECT VKONT, TEXT, ERDAT AS created_at, _file, _line FROM sap_notes;

CREATE VIEW payment_instructions AS
SELECT VKONT, trim(MANDATE_REF) AS reference, _file, _line FROM sap_mandates WHERE STATUS = 'A';
`;

/** Writes the SAP extract into `dir`: the four files, the mapping file and the shape. */
export function writeSapExport(dir: string, change: Partial<Record<keyof typeof SAP_FILES, string[]>> = {}): string {
  mkdirSync(dir, { recursive: true });
  const lines = {
    accounts: ACCOUNT_LINES,
    postings: POSTING_LINES,
    notes: NOTE_LINES,
    mandates: MANDATE_LINES,
    ...change,
  };
  writeFileSync(join(dir, SAP_FILES.accounts), Buffer.from(`${lines.accounts.join('\r\n')}\r\n`, 'latin1'));
  writeFileSync(join(dir, SAP_FILES.postings), `${lines.postings.join('\n')}\n`);
  writeFileSync(join(dir, SAP_FILES.notes), `${lines.notes.join('\r\n')}\r\n`);
  writeFileSync(join(dir, SAP_FILES.mandates), Buffer.from(`${lines.mandates.join('\r\n')}\r\n`, 'latin1'));
  writeFileSync(join(dir, 'migrate.config.json'), JSON.stringify(SAP_CONFIG, null, 2));
  writeFileSync(join(dir, 'shape.sql'), SAP_SHAPE);
  return dir;
}
