import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';

// npx tsx test/bench/shape-patterns.ts [ACCOUNTS] [LIMIT ...]   (default 1000000 256MB 1GB)
// The guide's SQL patterns in DuckDB alone (docs/from-a-legacy-system.md "SQL that scales"): each form of each
// pattern over a CIS table of ACCOUNTS accounts (one row per supply point, every third account dual fuel, 45 text
// columns, every fourth a joint holder, one in fifty closed; four postings per account), run as migrate runs a view
// (one thread, a database file and spills in a temporary directory, the result sorted by account into a table), in
// a process of its own per memory limit. Printed per form: rows, or the engine's out-of-memory; seconds, CPU seconds,
// peak RSS of the process, peak bytes of the temporary directory (database file included). Not asserted.

const FILLERS = Array.from({ length: 24 }, (_, index) => `X${index}`);
const ACCOUNT_COLUMNS = [
  'ACCOUNT_NO',
  'STATUS',
  'ACCOUNT_TYPE',
  'CUST1_TITLE',
  'CUST1_FORENAME',
  'CUST1_SURNAME',
  'CUST1_EMAIL',
  'CUST1_MOBILE',
  'CUST2_TITLE',
  'CUST2_FORENAME',
  'CUST2_SURNAME',
  'CUST2_EMAIL',
  'ADDR1',
  'ADDR2',
  'ADDR3',
  'ADDR4',
  'POSTCODE',
  'TARIFF',
  'BALANCE_PENCE',
  ...FILLERS,
].join(', ');
const POINT = "{'fuel': FUEL, 'mpxn': MPXN, 'meter_serial': METER_SERIAL, 'tariff': TARIFF}";
const FIRST_ROW = `SELECT ${ACCOUNT_COLUMNS}, _file, _line FROM cis WHERE STATUS = 'LIVE'
  QUALIFY row_number() OVER (PARTITION BY ACCOUNT_NO ORDER BY _line) = 1`;
const NUMBERED = `SELECT *, row_number() OVER (PARTITION BY ACCOUNT_NO ORDER BY FUEL, _line) AS point
  FROM cis WHERE STATUS = 'LIVE'`;
const BY_POSITION = `list_filter([max(CASE WHEN point = 1 THEN ${POINT} END), max(CASE WHEN point = 2 THEN ${POINT}
  END)], p -> p IS NOT NULL)`;

/** The forms, by pattern: name -> query. */
export const FORMS: Record<string, string> = {
  'one row: DISTINCT ON': `SELECT DISTINCT ON (ACCOUNT_NO) ${ACCOUNT_COLUMNS}, _file, _line FROM cis
    WHERE STATUS = 'LIVE' ORDER BY ACCOUNT_NO, _line`,
  'one row: arg_min': `SELECT ACCOUNT_NO, unnest(arg_min(struct_pack(${ACCOUNT_COLUMNS.replace('ACCOUNT_NO, ', '')},
    _file), _line)), min(_line) AS _line FROM cis WHERE STATUS = 'LIVE' GROUP BY ACCOUNT_NO`,
  'one row: GROUP BY ALL with list()': `SELECT ${ACCOUNT_COLUMNS}, list(${POINT} ORDER BY FUEL) AS supply_points,
    min(_file) AS _file, min(_line) AS _line FROM cis WHERE STATUS = 'LIVE' GROUP BY ALL`,
  'one row: row_number() = 1': FIRST_ROW,
  'one row: GROUP BY ALL': `SELECT ${ACCOUNT_COLUMNS}, min(_file) AS _file, min(_line) AS _line FROM cis
    WHERE STATUS = 'LIVE' GROUP BY ALL`,
  'supply points: list() ORDER BY': `SELECT ACCOUNT_NO, list(${POINT} ORDER BY FUEL) AS supply_points,
    min(_file) AS _file, min(_line) AS _line FROM cis WHERE STATUS = 'LIVE' GROUP BY ACCOUNT_NO`,
  'supply points: list()': `SELECT ACCOUNT_NO, list(${POINT}) AS supply_points, min(_file) AS _file,
    min(_line) AS _line FROM cis WHERE STATUS = 'LIVE' GROUP BY ACCOUNT_NO`,
  'supply points: max(CASE) by fuel': `SELECT ACCOUNT_NO, max(CASE WHEN FUEL = 'E' THEN MPXN END) AS mpan,
    max(CASE WHEN FUEL = 'E' THEN METER_SERIAL END) AS e_serial, max(CASE WHEN FUEL = 'G' THEN MPXN END) AS mprn,
    max(CASE WHEN FUEL = 'G' THEN METER_SERIAL END) AS g_serial, min(_file) AS _file, min(_line) AS _line
    FROM cis WHERE STATUS = 'LIVE' GROUP BY ACCOUNT_NO`,
  'supply points: string_agg': `SELECT ACCOUNT_NO, string_agg(FUEL || ':' || MPXN, ',') AS supply_points,
    min(_file) AS _file, min(_line) AS _line FROM cis WHERE STATUS = 'LIVE' GROUP BY ACCOUNT_NO`,
  'supply points: numbered, by position': `WITH numbered AS (${NUMBERED}) SELECT ACCOUNT_NO,
    ${BY_POSITION} AS supply_points, min(_file) AS _file, min(_line) AS _line FROM numbered GROUP BY ACCOUNT_NO`,
  'one row + supply points: GROUP BY ALL, by position': `WITH numbered AS (${NUMBERED}) SELECT ${ACCOUNT_COLUMNS},
    ${BY_POSITION} AS supply_points, min(_file) AS _file, min(_line) AS _line FROM numbered GROUP BY ALL`,
  'holders: UNION ALL': `WITH one AS (${FIRST_ROW}) SELECT ACCOUNT_NO, 1 AS holder, CUST1_TITLE AS title,
    CUST1_FORENAME AS given, CUST1_SURNAME AS family, CUST1_EMAIL AS email, _file, _line FROM one UNION ALL
    SELECT ACCOUNT_NO, 2, CUST2_TITLE, CUST2_FORENAME, CUST2_SURNAME, CUST2_EMAIL, _file, _line FROM one
    WHERE CUST2_SURNAME <> ''`,
  'holders: UNPIVOT': `SELECT ACCOUNT_NO, holder, title, given, family, email, _file, _line FROM (${FIRST_ROW})
    UNPIVOT ((title, given, family, email) FOR holder IN ((CUST1_TITLE, CUST1_FORENAME, CUST1_SURNAME, CUST1_EMAIL)
    AS '1', (CUST2_TITLE, CUST2_FORENAME, CUST2_SURNAME, CUST2_EMAIL) AS '2')) WHERE family <> ''`,
  'scope: NOT IN': `SELECT * FROM fin WHERE ACCT NOT IN (SELECT ACCOUNT_NO FROM cis
    WHERE STATUS IN ('CLOSED', 'FINAL'))`,
  'scope: IN': `SELECT * FROM fin WHERE ACCT IN (SELECT ACCOUNT_NO FROM cis WHERE STATUS = 'LIVE')`,
  'scope: ANTI JOIN': `SELECT f.* FROM fin AS f ANTI JOIN (SELECT ACCOUNT_NO FROM cis
    WHERE STATUS IN ('CLOSED', 'FINAL')) AS c ON f.ACCT = c.ACCOUNT_NO`,
  'totals: GROUP BY': `SELECT ACCT, sum(CAST(AMOUNT AS BIGINT)) AS total_pence, count(*) AS postings,
    min(_file) AS _file, min(_line) AS _line FROM fin GROUP BY ACCT`,
  'totals: joined to one row': `WITH one AS (${FIRST_ROW}), totals AS (SELECT ACCT,
    sum(CAST(AMOUNT AS BIGINT)) AS total_pence FROM fin GROUP BY ACCT) SELECT one.*, totals.total_pence FROM one
    LEFT JOIN totals ON totals.ACCT = one.ACCOUNT_NO`,
  'totals: correlated subquery': `SELECT ACCOUNT_NO, (SELECT sum(CAST(AMOUNT AS BIGINT)) FROM fin
    WHERE fin.ACCT = one.ACCOUNT_NO) AS total_pence, _file, _line FROM (SELECT ACCOUNT_NO, _file, _line FROM cis
    WHERE STATUS = 'LIVE' AND FUEL = 'E') AS one`,
};

async function writeTables(file: string, accounts: number): Promise<void> {
  const instance = await DuckDBInstance.create(file, { threads: '1', memory_limit: '2GB' });
  const connection = await instance.connect();
  const fillers = FILLERS.map((name, index) => `'FILLER${index}_' || (i % 97)::VARCHAR AS ${name}`).join(', ');
  const joint = (text: string): string => `CASE WHEN i % 4 = 0 THEN ${text} ELSE '' END`;
  await connection.run(`CREATE TABLE cis AS
    WITH base AS (SELECT i, lpad((i + 1)::VARCHAR, 8, '0') AS acct FROM range(${accounts}) t(i)),
    points AS (SELECT i, acct, 'E' AS fuel, 1 AS ord FROM base UNION ALL
               SELECT i, acct, 'G', 2 FROM base WHERE i % 3 = 0)
    SELECT acct AS ACCOUNT_NO, CASE WHEN i % 50 = 49 THEN 'CLOSED' ELSE 'LIVE' END AS STATUS, 'DOM' AS ACCOUNT_TYPE,
      'Mr' AS CUST1_TITLE, 'Forename' || i AS CUST1_FORENAME, 'Surname' || i AS CUST1_SURNAME,
      'c' || i || '@example.org' AS CUST1_EMAIL, '07911 ' || lpad((100000 + i % 900000)::VARCHAR, 6, '0') AS CUST1_MOBILE,
      ${joint("'Mrs'")} AS CUST2_TITLE, ${joint("'Partner' || i")} AS CUST2_FORENAME,
      ${joint("'Surname' || i")} AS CUST2_SURNAME, ${joint("'p' || i || '@example.org'")} AS CUST2_EMAIL,
      i || ' High Street' AS ADDR1, 'Flat 2' AS ADDR2, 'Old Town' AS ADDR3, 'York' AS ADDR4, 'YO1 7HH' AS POSTCODE,
      CASE WHEN fuel = 'E' THEN '12' || acct || '001' ELSE '9' || acct END AS MPXN, fuel AS FUEL,
      'MS' || i || fuel AS METER_SERIAL, 'STANDARD' AS TARIFF, ((i % 20000) - 10000)::VARCHAR AS BALANCE_PENCE,
      ${fillers}, 'CIS.csv' AS _file, (2 + i + ord * ${accounts})::BIGINT AS _line
    FROM points ORDER BY fuel, i`);
  await connection.run(`CREATE TABLE fin AS
    SELECT lpad((i + 1)::VARCHAR, 8, '0') AS ACCT, 'T' || i || '_' || k AS TXN_ID, '20261101' AS TXN_DATE,
      CASE WHEN k % 2 = 0 THEN (1000 + i % 5000)::VARCHAR ELSE '-' || (1000 + i % 5000)::VARCHAR END AS AMOUNT,
      CASE WHEN k % 2 = 0 THEN 'BILL' ELSE 'DDR' END AS CODE, 'FIN.txt' AS _file, (2 + k * ${accounts} + i)::BIGINT
      AS _line
    FROM range(${accounts}) t(i), range(4) s(k)`);
  // Into the file itself (not its write-ahead log), which each form's run copies.
  await connection.run('CHECKPOINT');
  instance.closeSync();
}

/** One form at one memory limit, in this process (a child of the main run): its figures as one JSON line. */
async function runForm(tables: string, limit: string, form: string): Promise<void> {
  const temp = mkdtempSync(join(tmpdir(), 'shape-pattern-'));
  copyFileSync(tables, join(temp, 'shape.duckdb'));
  const instance = await DuckDBInstance.create(join(temp, 'shape.duckdb'), {
    threads: '1',
    memory_limit: limit,
    temp_directory: temp,
    allocator_flush_threshold: '8MB',
  });
  const connection = await instance.connect();
  let peakTemp = 0;
  const watch = setInterval(() => {
    const bytes = readdirSync(temp).reduce((sum, name) => sum + statSync(join(temp, name)).size, 0);
    peakTemp = Math.max(peakTemp, bytes);
  }, 100);
  const started = Date.now();
  let rows: number | undefined;
  let error: string | undefined;
  try {
    await connection.run(
      `CREATE TABLE sorted AS SELECT * FROM (SELECT *, row_number() OVER () AS __row FROM (${FORMS[form] ?? ''})) ` +
        'ORDER BY 1, __row',
    );
    rows = Number((await connection.runAndReadAll('SELECT count(*) FROM sorted')).getRowsJS()[0]?.[0]);
  } catch (caught) {
    error = (caught as Error).message.split('\n')[0];
  }
  clearInterval(watch);
  instance.closeSync();
  rmSync(temp, { recursive: true, force: true });
  const usage = process.resourceUsage();
  const figures = {
    seconds: (Date.now() - started) / 1000,
    cpuSeconds: (usage.userCPUTime + usage.systemCPUTime) / 1e6,
    peakRssMb: Math.round(usage.maxRSS / 1024),
    peakTempMb: Math.round(peakTemp / 2 ** 20),
  };
  process.stdout.write(`${JSON.stringify({ rows, error, ...figures })}\n`);
}

const [first, ...rest] = process.argv.slice(2);
if (first === '--form') {
  const [tables, limit, form] = rest as [string, string, string];
  await runForm(tables, limit, form);
} else {
  const accounts = Number(first ?? 1_000_000);
  const limits = rest.length > 0 ? rest : ['256MB', '1GB'];
  const dir = mkdtempSync(join(tmpdir(), 'shape-patterns-'));
  try {
    const tables = join(dir, 'cis.duckdb');
    await writeTables(tables, accounts);
    console.log(`${accounts.toLocaleString('en-GB')} accounts; load average ${loadavg()[0]?.toFixed(1)}`);
    for (const form of Object.keys(FORMS))
      for (const limit of limits) {
        const line = execFileSync(
          process.execPath,
          ['--import', 'tsx', import.meta.filename, '--form', tables, limit, form],
          { encoding: 'utf8', maxBuffer: 1 << 20 },
        );
        const run = JSON.parse(line) as { rows?: number; error?: string; [figure: string]: unknown };
        const outcome = run.error === undefined ? `${run.rows} rows` : `FAILS: ${run.error}`;
        console.log(
          `${form} at ${limit}: ${outcome}; ${String(run['seconds'])} s, CPU ${Number(run['cpuSeconds']).toFixed(1)} ` +
            `s, peak RSS ${String(run['peakRssMb'])} MB, temporary directory ${String(run['peakTempMb'])} MB; load ` +
            `${loadavg()[0]?.toFixed(1)}`,
        );
      }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
