import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { defaultShapeMemory, thisProcessMemory } from '../../src/shape/engine-budget.js';
import { formatSize } from '../../src/shape/engine-size.js';
import { splitStatements } from '../../src/shape/sql-statements.js';

// npx tsx test/bench/ledgers.bench.ts [accounts]
// The posting history as the account payload's ledgers (docs/from-a-legacy-system.md "History in ledgers"): the
// legacy CIS fixture's shape.sql (fixtures/legacy-cis/) run over generated legacy tables of N accounts (default
// 1,000,000; 1 in 50 closed, 1 in 3 dual fuel), 8 postings each over three months and 3 bills for 2 accounts in 3,
// in DuckDB as the tool opens it (a database file, one thread, the shape's memory limit, spilling to a temporary
// directory). Measured: the accounts view read in the order the tool reads it (sorted by account number into a table,
// as src/shape/view-rows.ts does) with its ledgers, and without them (every other column), once each; reported as
// seconds, the ledgers' share, and the time against a limit of 60 s per million accounts. Not asserted.

const ACCOUNTS = Number(process.argv[2] ?? 1_000_000);
/** The engine's memory limit, the tool's default here unless BENCH_MEMORY_LIMIT says otherwise (what a shape needs). */
const MEMORY_LIMIT = process.env['BENCH_MEMORY_LIMIT'] ?? formatSize(defaultShapeMemory(thisProcessMemory()).bytes);
const LIMIT_SECONDS_PER_MILLION = 60;
const SHAPE = join(import.meta.dirname, '..', '..', 'fixtures', 'legacy-cis', 'shape.sql');

const CUSTOMER = ['TITLE', 'FORENAME', 'SURNAME', 'DOB', 'MOBILE', 'LANDLINE', 'EMAIL', 'SMS_OPTIN', 'MKTG_OPTIN'];

/** The legacy tables the shape reads, only the columns it uses, every cell text as the tool loads them. */
function legacyTables(accounts: number): string[] {
  const number = `lpad(CAST(i AS VARCHAR), 8, '0')`;
  const holder = (n: number) =>
    CUSTOMER.map(
      (column) =>
        `CASE WHEN ${n} = 1 OR i % 4 = 0 THEN '${column.toLowerCase()}' || i ELSE '' END ` + `AS CUST${n}_${column}`,
    ).join(', ') + `, 'N' AS CUST${n}_PSR_CONSENT`;
  return [
    `CREATE TABLE cis_accounts AS SELECT ${number} AS ACCOUNT_NO,
       CASE WHEN i % 50 = 49 THEN 'CLOSED' ELSE 'LIVE' END AS ACCOUNT_STATUS, 'DOM' AS ACCOUNT_TYPE_CD,
       '01/02/2019' AS ACCOUNT_OPEN_DATE, 'N' AS VACANT_FLAG,
       CAST((i * 7919) % 60000 - 20000 AS VARCHAR) AS BALANCE_PENCE, 'M' AS BILL_FREQ, '1' AS BILL_DAY,
       'Y' AS PAPERLESS, 'N' AS LARGE_PRINT, 'DIR' AS SALES_CHANNEL_CD, '01/02/2019' AS MOVE_IN_DATE,
       ${holder(1)}, ${holder(2)},
       '' AS BILL_ADDR1, '' AS BILL_ADDR2, '' AS BILL_ADDR3, '' AS BILL_ADDR4, '' AS BILL_POSTCODE,
       i || ' High Street' AS SUPPLY_ADDR1, 'Leeds' AS SUPPLY_ADDR2, '' AS SUPPLY_ADDR3, '' AS SUPPLY_ADDR4,
       'LS6 1AA' AS SUPPLY_POSTCODE, fuel AS SUPPLY_POINT_TYPE, CAST(1000000000 + i AS VARCHAR) AS MPAN_MPRN,
       'M' || i AS METER_SERIAL, 'FIX' AS TARIFF_CODE,
       'CIS.csv' AS _file, 2 + 2 * i + (fuel = 'GAS')::INT AS _line
     FROM range(${accounts}) AS r(i), (VALUES ('ELEC'), ('GAS')) AS f(fuel)
     WHERE fuel = 'ELEC' OR i % 3 = 0`,
    `CREATE TABLE fin_postings AS SELECT ${number} AS ACCT_NO, 'FT' || (i * 8 + p) AS TXN_REF,
       lpad(CAST(1 + (i + p) % 26 AS VARCHAR), 2, '0') || '/' || lpad(CAST(9 + p % 3 AS VARCHAR), 2, '0') || '/2026'
         AS POST_DATE,
       CASE WHEN p % 2 = 0 THEN '' ELSE '-' END || CAST(10 + (i + p) % 200 AS VARCHAR) || '.' ||
         lpad(CAST((i * p) % 100 AS VARCHAR), 2, '0') AS AMOUNT,
       CASE WHEN p % 2 = 0 THEN 'BILL' ELSE 'DDR' END AS TXN_CODE, 'Energy bill' AS NARRATIVE,
       'BACS' || i AS BANK_REF, 'FIN.txt' AS _file, 2 + i * 8 + p AS _line
     FROM range(${accounts}) AS r(i), range(8) AS q(p)`,
    `CREATE TABLE bills AS SELECT ${number} AS ACCOUNT_NO, 'B' || (i * 3 + m) AS BILL_NO,
       '05/' || lpad(CAST(9 + m AS VARCHAR), 2, '0') || '/2026' AS BILL_DATE,
       '01/' || lpad(CAST(8 + m AS VARCHAR), 2, '0') || '/2026' AS PERIOD_START,
       CASE m WHEN 0 THEN '31/08/2026' WHEN 1 THEN '30/09/2026' ELSE '31/10/2026' END AS PERIOD_END,
       '£10.00' AS TOTAL_DUE, '\\\\fileserver\\bills\\' || i || '.pdf' AS PDF_LOCATION,
       'BILLS.csv' AS _file, 2 + i * 3 + m AS _line
     FROM range(${accounts}) AS r(i), range(3) AS q(m) WHERE i % 3 <> 2`,
    `CREATE TABLE cis_notes AS SELECT '' AS "Account Number", '' AS "Note Text", '' AS "Note Date", '' AS Pinned,
       'NOTES.csv' AS _file, 2 AS _line WHERE false`,
    `CREATE TABLE dd_mandates AS SELECT '' AS ACCOUNT_NO, '' AS MANDATE_REF, '' AS MANDATE_STATUS,
       'DD.csv' AS _file, 2 AS _line WHERE false`,
  ];
}

/** Seconds to write `select` into a table, or the engine's error. */
async function timed(connection: DuckDBConnection, select: string): Promise<number | string> {
  const started = performance.now();
  try {
    await connection.run(`CREATE OR REPLACE TABLE measured AS ${select}`);
    return (performance.now() - started) / 1000;
  } catch (error) {
    return String(error).split('\n')[0] ?? 'failed';
  }
}

/** The accounts view's columns as text, sorted by account number, as the tool reads a view (src/shape/view-rows.ts). */
const sortedAccounts = (columns: string[]): string =>
  `SELECT ${columns.map((column) => `CAST("${column}" AS VARCHAR) AS "${column}"`).join(', ')} FROM accounts ` +
  'ORDER BY external_account_number';

const shown = (figure: number | string): string => (typeof figure === 'number' ? `${figure.toFixed(1)} s` : figure);

/** live_accounts of the shape (its columns, in its order) without aggregating: every account has one ELEC row. */
const ONE_ROW_PER_ACCOUNT = `SELECT
  ACCOUNT_NO, ACCOUNT_TYPE_CD, ACCOUNT_OPEN_DATE, VACANT_FLAG, BALANCE_PENCE, BILL_FREQ, BILL_DAY, PAPERLESS,
  LARGE_PRINT, SALES_CHANNEL_CD, MOVE_IN_DATE,
  ${[1, 2].map((n) => [...CUSTOMER, 'PSR_CONSENT'].map((column) => `CUST${n}_${column}`).join(', ')).join(', ')},
  list_filter([BILL_ADDR1, BILL_ADDR2, BILL_ADDR3, BILL_ADDR4], line -> trim(line) <> '') AS bill_lines,
  nullif(trim(BILL_POSTCODE), '') AS bill_postcode,
  list_filter([SUPPLY_ADDR1, SUPPLY_ADDR2, SUPPLY_ADDR3, SUPPLY_ADDR4], line -> trim(line) <> '') AS supply_lines,
  nullif(trim(SUPPLY_POSTCODE), '') AS supply_postcode,
  [{'fuel': SUPPLY_POINT_TYPE, 'mpxn': MPAN_MPRN, 'meter_serial': METER_SERIAL, 'tariff': TARIFF_CODE}]
    AS supply_points,
  _line, _file
FROM cis_accounts WHERE ACCOUNT_STATUS = 'LIVE' AND SUPPLY_POINT_TYPE = 'ELEC'`;

async function main(): Promise<void> {
  const temp = mkdtempSync(join(tmpdir(), 'ledgers-bench-'));
  const instance = await DuckDBInstance.create(join(temp, 'bench.duckdb'), {
    memory_limit: MEMORY_LIMIT,
    temp_directory: temp,
    threads: '1',
  });
  try {
    const connection = await instance.connect();
    for (const statement of legacyTables(ACCOUNTS)) await connection.run(statement);
    for (const statement of splitStatements(readFileSync(SHAPE, 'utf8'))) await connection.run(statement.text);
    // The shape's one row per account (GROUP BY ALL with a list of supply points) runs out of the engine's memory on
    // its own past some 10,000 accounts; the ledgers are measured over a table of those rows instead, which the
    // shape's views read by name.
    await connection.run(`CREATE TABLE live_accounts_rows AS ${ONE_ROW_PER_ACCOUNT}`);
    await connection.run('DROP VIEW live_accounts');
    await connection.run('CREATE VIEW live_accounts AS SELECT * FROM live_accounts_rows');
    const described = await connection.runAndReadAll('SELECT column_name FROM (DESCRIBE accounts)');
    const columns = described.getRows().map((row) => String(row[0]));
    const steps: Array<[string, string]> = [
      ['posting history (per account)', 'SELECT * FROM posting_history'],
      ['accounts view without ledgers', sortedAccounts(columns.filter((column) => column !== 'ledgers'))],
      ['accounts view with ledgers', sortedAccounts(columns)],
    ];
    const figures: Array<number | string> = [];
    for (const [name, select] of steps) {
      figures.push(await timed(connection, select));
      console.log(`${name}: ${shown(figures.at(-1)!)}`);
    }
    const [, without, withLedgers] = figures;
    const limit = (LIMIT_SECONDS_PER_MILLION * ACCOUNTS) / 1_000_000;
    console.log(
      `${ACCOUNTS.toLocaleString('en-GB')} accounts, memory limit ${MEMORY_LIMIT}, one thread, ` +
        `load ${loadavg()[0]?.toFixed(1)}`,
    );
    if (typeof withLedgers === 'number')
      console.log(
        `accounts view with ledgers ${withLedgers.toFixed(1)} s: ${(withLedgers / limit).toFixed(2)} of the ` +
          `${limit.toFixed(0)} s limit` +
          (typeof without === 'number' ? `; the ledgers ${(withLedgers / without).toFixed(2)} x without them` : ''),
      );
  } finally {
    instance.closeSync();
    rmSync(temp, { recursive: true, force: true });
  }
}

await main();
