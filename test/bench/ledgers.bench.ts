import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { defaultShapeMemory, thisProcessMemory } from '../../src/shape/engine-budget.js';
import { formatSize, parseSize } from '../../src/shape/engine-size.js';
import { engineOptions } from '../../src/shape/shape-engine.js';
import { splitStatements } from '../../src/shape/sql-statements.js';
import { UNCOMPRESSED_TABLES, viewRows } from '../../src/shape/view-rows.js';

// npx tsx test/bench/ledgers.bench.ts [accounts]
// The posting history as the account payload's ledgers (docs/from-a-legacy-system.md "History in ledgers"): the
// legacy CIS fixture's shape.sql (fixtures/legacy-cis/) run over generated legacy tables of N accounts (default
// 1,000,000; 1 in 50 closed, 1 in 3 dual fuel), 8 postings each over three months and 3 bills for 2 accounts in 3,
// in DuckDB as the tool opens it (its engine settings: a database file, one thread, the shape's memory limit, spilling
// to a temporary directory). The tables are written once; each step then runs in a process of its own on a copy of
// them: the posting history per account alone, and the accounts view read by the tool's own reader (in account order,
// every row handed to this process) without its ledgers (every other column) and with them. Printed per step: seconds, CPU seconds and the process's peak RSS (or the engine's error);
// and the accounts view's time against a limit of 60 s per million accounts. Not asserted.

const STEP_ARGUMENT = '--step';
const ACCOUNTS = process.argv[2] === STEP_ARGUMENT ? 0 : Number(process.argv[2] ?? 1_000_000);
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

/** A step: the statement it times, or the accounts view's columns the tool's reader reads. */
type Step = { statement: string } | { columns: (all: string[]) => string[] };

const STEPS: Record<string, Step> = {
  'posting history (per account)': { statement: 'CREATE TABLE measured AS SELECT * FROM posting_history' },
  'accounts view without ledgers': { columns: (all) => all.filter((column) => column !== 'ledgers') },
  'accounts view with ledgers': { columns: (all) => all },
};

/** The accounts view's rows as the tool reads them (src/shape/view-rows.ts): how many. */
async function readAccounts(
  connection: DuckDBConnection,
  columns: string[],
  hasRows: boolean,
  memoryBytes: number,
): Promise<number> {
  const view = { kind: 'accounts' as const, columns, hasRows, passThrough: { table: undefined, columns: {} } };
  const reading = { place: { shapeName: 'shape.sql', view: 'accounts', line: undefined }, sources: [], memoryBytes };
  let rows = 0;
  for await (const batch of viewRows(
    connection,
    { ...reading, shortage: () => undefined },
    view,
    'external_account_number',
  ))
    rows += batch.length;
  return rows;
}

interface Figures {
  seconds?: number;
  error?: string;
  cpuSeconds: number;
  peakRssMb: number;
}

/** One step, in this process (a child of the main run), on a copy of the tables: its figures as one JSON line. */
async function runStep(tables: string, step: string): Promise<void> {
  const temp = mkdtempSync(join(tmpdir(), 'ledgers-step-'));
  copyFileSync(tables, join(temp, 'bench.duckdb'));
  const memory = parseSize(MEMORY_LIMIT) ?? 0;
  const limits = {
    memory: { bytes: memory, source: 'flag' as const },
    tempDisk: { bytes: 1e12, source: 'flag' as const },
  };
  const instance = await DuckDBInstance.create(join(temp, 'bench.duckdb'), engineOptions(limits, temp));
  let seconds: number | undefined;
  let error: string | undefined;
  try {
    const connection = await instance.connect();
    await connection.run(UNCOMPRESSED_TABLES);
    for (const statement of splitStatements(readFileSync(SHAPE, 'utf8'))) await connection.run(statement.text);
    const described = await connection.runAndReadAll('SELECT column_name FROM (DESCRIBE accounts)');
    const named = described.getRows().map((row) => String(row[0]));
    const columns = named.filter((column) => !['_file', '_line', '_rows'].includes(column));
    const measured = STEPS[step];
    const started = performance.now();
    try {
      if (measured === undefined) throw new Error(`no step ${step}`);
      if ('statement' in measured) await connection.run(measured.statement);
      else await readAccounts(connection, measured.columns(columns), named.includes('_rows'), memory);
      seconds = (performance.now() - started) / 1000;
    } catch (caught) {
      error = String(caught).split('\n')[0] ?? 'failed';
    }
  } finally {
    instance.closeSync();
    rmSync(temp, { recursive: true, force: true });
  }
  const usage = process.resourceUsage();
  const figures: Figures = {
    ...(seconds === undefined ? {} : { seconds }),
    ...(error === undefined ? {} : { error }),
    cpuSeconds: (usage.userCPUTime + usage.systemCPUTime) / 1e6,
    peakRssMb: Math.round(usage.maxRSS / 1024),
  };
  process.stdout.write(`${JSON.stringify(figures)}\n`);
}

async function writeTables(file: string): Promise<void> {
  const instance = await DuckDBInstance.create(file, { memory_limit: '2GB', threads: '1' });
  const connection = await instance.connect();
  for (const statement of legacyTables(ACCOUNTS)) await connection.run(statement);
  await connection.run('CHECKPOINT');
  instance.closeSync();
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'ledgers-bench-'));
  try {
    const tables = join(dir, 'tables.duckdb');
    await writeTables(tables);
    console.log(
      `${ACCOUNTS.toLocaleString('en-GB')} accounts, memory limit ${MEMORY_LIMIT}, one thread, ` +
        `load ${loadavg()[0]?.toFixed(1)}`,
    );
    const seconds: Record<string, number | undefined> = {};
    for (const step of Object.keys(STEPS)) {
      const line = execFileSync(
        process.execPath,
        ['--import', 'tsx', import.meta.filename, STEP_ARGUMENT, tables, step],
        {
          encoding: 'utf8',
          env: { ...process.env, BENCH_MEMORY_LIMIT: MEMORY_LIMIT },
        },
      );
      const figures = JSON.parse(line) as Figures;
      seconds[step] = figures.seconds;
      console.log(
        `${step}: ${figures.error ?? `${figures.seconds?.toFixed(1)} s`}; CPU ${figures.cpuSeconds.toFixed(1)} s ` +
          `(the shape's views included), peak RSS ${figures.peakRssMb} MB; load ${loadavg()[0]?.toFixed(1)}`,
      );
    }
    const [without, withLedgers] = [seconds['accounts view without ledgers'], seconds['accounts view with ledgers']];
    const limit = (LIMIT_SECONDS_PER_MILLION * ACCOUNTS) / 1_000_000;
    if (withLedgers !== undefined)
      console.log(
        `accounts view with ledgers ${withLedgers.toFixed(1)} s: ${(withLedgers / limit).toFixed(2)} of the ` +
          `${limit.toFixed(0)} s limit` +
          (without === undefined ? '' : `; the ledgers ${(withLedgers / without).toFixed(2)} x without them`),
      );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const [first, ...rest] = process.argv.slice(2);
if (first === STEP_ARGUMENT) await runStep(rest[0] ?? '', rest[1] ?? '');
else await main();
