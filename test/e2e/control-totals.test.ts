import { parse } from 'csv-parse/sync';
import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestCluster, type TestCluster } from '../pg/cluster.js';
import { copyLegacyCis, FILES, LEGACY_CIS, plant } from './legacy-cis-files.js';
import { runMigrate } from './run-push.js';

// Control totals from the legacy files to the platform (docs/control-totals.md), through the real binary: validate's
// short form, a push to the built-in sandbox, and the report's reconciliation.csv, control-totals.csv and
// unused-rows.csv, against numbers counted by hand on fixtures/legacy-cis (each with how it was counted), and on a
// planted mistake: an inner join that drops notes shows as unused rows.

type Row = Record<string, string>;

/**
 * A legacy file's rows, each with the line it starts on (a note's body runs over two lines): the line breaks before
 * the end of the record before it (csv-parse's `info.bytes`: UTF-8 bytes of the text read).
 */
function legacyRows(file: string, encoding = 'utf-8', delimiter = ','): Array<Row & { _line: string }> {
  const decoder = new TextDecoder(encoding);
  const text = decoder.decode(readFileSync(join(LEGACY_CIS, file)), { stream: true }) + decoder.decode();
  const bytes = Buffer.from(text, 'utf8');
  const records = parse(text, { columns: true, delimiter, info: true }) as Array<{
    record: Row;
    info: { bytes: number };
  }>;
  let end = bytes.indexOf(0x0a) + 1;
  return records.map(({ record, info }) => {
    const line = bytes.subarray(0, end).filter((byte) => byte === 0x0a).length + 1;
    end = info.bytes;
    return { ...record, _line: String(line) };
  });
}

const csv = (path: string): Row[] => parse(readFileSync(path, 'utf8'), { columns: true, bom: true }) as Row[];

let root: string;
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'control-totals-'));
});
let cluster: TestCluster | undefined;
afterAll(async () => {
  await cluster?.close();
  rmSync(root, { recursive: true, force: true });
});

/** validate, push to the built-in sandbox, report: the three files and the page. */
async function pushAndReport(dir: string, name: string, exitCode = 0, ledger?: string) {
  const state = join(root, `${name}-state`);
  const out = join(root, `${name}-report`);
  const where = ledger === undefined ? ['--state', state] : ['--ledger', ledger];
  const pushed = await runMigrate(['push', dir, '--sandbox', ...where]);
  expect(pushed.code, pushed.stderr).toBe(exitCode);
  const reported = await runMigrate(['report', ...where, '--out', out, '--html']);
  expect(reported.code, reported.stderr).toBe(0);
  return {
    reconciliation: csv(join(out, 'reconciliation.csv')),
    totals: csv(join(out, 'control-totals.csv')),
    unused: csv(join(out, 'unused-rows.csv')),
    html: readFileSync(join(out, 'report.html'), 'utf8'),
  };
}

// Counted by hand on fixtures/legacy-cis (a spreadsheet's filter on each column named, or the plain reading below):
const accounts = legacyRows(FILES.accounts, 'windows-1252');
const closed = new Set(accounts.filter((row) => row['ACCOUNT_STATUS'] !== 'LIVE').map((row) => row['ACCOUNT_NO']));

describe('control totals of fixtures/legacy-cis', () => {
  it.each([
    ['a state directory', undefined],
    ['a PostgreSQL ledger', 'postgres'],
  ])(
    'every number of reconciliation.csv, control-totals.csv and unused-rows.csv, as counted by hand (%s)',
    async (_, store) => {
      const name = store ?? 'fixture';
      const dir = copyLegacyCis(join(root, name));
      const validated = await runMigrate(['validate', dir]);
      expect(validated.code, validated.stderr).toBe(0);
      expect(validated.stdout).toContain('THISTLE_CIS_ACCOUNTS_20261126.csv: 364 read, 318 used, 46 unused');
      expect(validated.stdout).toContain(
        'accounts: 200 shaped, 200 valid; transfer_balance -31505.35, -31505.35; ledger_balance -31505.35, ' +
          '-31505.35; last_statement_balance -32358.76, -32358.76',
      );
      expect(validated.stdout).toContain(
        'historical_statement_transactions: 150 shaped, 150 valid; amount 30843.91, 30843.91; net_amount ' +
          '-11742.59, -11742.59',
      );
      expect(validated.stdout).toContain(
        'current_statement_transactions: 222 shaped, 222 valid; amount 26055.67, 26055.67; net_amount 853.41, 853.41',
      );
      // On PostgreSQL the totals go through the runner's working copy and come back in the report's snapshot.
      const ledger = store === undefined ? undefined : await (cluster ??= await startTestCluster()).newDatabase();
      const { reconciliation, totals, unused, html } = await pushAndReport(dir, name, 0, ledger);

      expect(reconciliation).toEqual([
        // 364 data rows (365 lines, the header the first; no cell holds a line break). ACCOUNT_STATUS: 318 LIVE rows of
        // 200 accounts (118 of them dual fuel, two rows: 318 = 200 + 118), 35 CLOSED and 11 FINAL rows of 27 accounts.
        // Used: every row of a live account (live_accounts names its supply point rows in _rows); unused: the 46 rows
        // left behind.
        row('cis_accounts', FILES.accounts, 364, 318, 46),
        // 345 notes (383 lines: 37 bodies run over two lines); 38 of them name a closed or final account once their
        // leading zeros are padded back (the left_behind scope), the other 307 are sent.
        row('cis_notes', FILES.notes, 345, 307, 38),
        // 350 postings (351 lines); 40 of accounts left behind, 310 sent.
        row('fin_postings', FILES.postings, 350, 310, 40),
        // 361 bills (362 lines); 37 of accounts left behind, 324 sent.
        row('bills', FILES.bills, 361, 324, 37),
        // 197 mandates: ACTIVE of live accounts 142 (sent); CANCELLED of live accounts 25, any of accounts left behind 30
        // (23 ACTIVE, 7 CANCELLED): 55 unused.
        row('dd_mandates', FILES.mandates, 197, 142, 55),
      ]);

      // Every stage the same: every account valid, sent and accepted ("everything done").
      const stages = (kind: string, records: number, money: Partial<Row> = {}): Row[] =>
        ['shaped', 'valid', 'sent', 'accepted'].map((stage) => ({
          kind,
          stage,
          records: String(records),
          transfer_balance: '',
          ledger_balance: '',
          last_statement_balance: '',
          amount: '',
          net_amount: '',
          gross_amount: '',
          ...money,
        }));
      expect(totals).toEqual([
        // 200 live accounts; BALANCE_PENCE of their first rows sums to +3,150,535 pence (the customers owe): the
        // platform's sign and pounds make it -31505.35. Each carries one MAIN ledger whose balance is the legacy
        // balance, so the ledgers' balances add up to the same -31505.35. Its last statement's balance is that less
        // what the postings after the statement's closing date did (the guide's "History in ledgers"): the balances
        // less the current statement's net below (853.41) make -32358.76.
        ...stages('accounts', 200, {
          transfer_balance: '-31505.35',
          ledger_balance: '-31505.35',
          last_statement_balance: '-32358.76',
        }),
        // The 310 postings of live accounts, each on the side of its account's closing date (the latest PERIOD_END
        // of its bills; never billed: the day before its first posting) where its POST_DATE falls: 88 up to it, 222
        // after it. Every posting's date and amount read, every code and sign typed (BILL/ADJ +: charge, ADJ -:
        // credit, DDR/CARD -: payment, RFND +: repayment). Before them, one balance brought forward on each of the
        // 62 accounts with historical postings whose last statement's balance their postings do not make alone:
        // 150 historical statement transactions. amount: the absolute amounts; net_amount: as each moves the
        // balance (payments and credits +, charges and repayments -); a brought-forward posting's net is what it
        // brings forward.
        ...stages('historical_statement_transactions', 150, { amount: '30843.91', net_amount: '-11742.59' }),
        ...stages('current_statement_transactions', 222, { amount: '26055.67', net_amount: '853.41' }),
        // CUST1_SURNAME filled on 196 live accounts (4 are vacant, VACANT_FLAG Y), CUST2_SURNAME on 51: 247 holders.
        ...stages('customers', 247),
        // One supply address per live account.
        ...stages('supply_addresses', 200),
        ...stages('notes', 307),
        // The 310 postings are history: they go in the accounts' ledgers (used above), none through the transactions
        // endpoint.
        ...stages('transactions', 0, { amount: '0.00', net_amount: '0.00' }),
        // TOTAL_DUE of the 324 bills (£ and thousands separators read) sums to 59421.99.
        ...stages('statements', 324, { gross_amount: '59421.99' }),
        ...stages('payment_instructions', 142),
      ]);

      // unused-rows.csv: exactly the rows of the plain reading, at their lines (a note's at the line it starts on).
      const notesLeft = legacyRows(FILES.notes).filter((note) =>
        closed.has(note['Account Number']!.trim().padStart(8, '0')),
      );
      const expected = [
        ...accounts
          .filter((row) => closed.has(row['ACCOUNT_NO']))
          .map((row) => ['cis_accounts', FILES.accounts, row._line]),
        ...notesLeft.map((row) => ['cis_notes', FILES.notes, row._line]),
        ...legacyRows(FILES.postings, 'utf-8', '|')
          .filter((row) => closed.has(row['ACCT_NO']))
          .map((row) => ['fin_postings', FILES.postings, row._line]),
        ...legacyRows(FILES.bills)
          .filter((row) => closed.has(row['ACCOUNT_NO']))
          .map((row) => ['bills', FILES.bills, row._line]),
        ...legacyRows(FILES.mandates)
          .filter((row) => closed.has(row['ACCOUNT_NO']) || row['MANDATE_STATUS'] !== 'ACTIVE')
          .map((row) => ['dd_mandates', FILES.mandates, row._line]),
      ].map(([source, file, line]) => ({ source: source!, file: file!, line: line! }));
      expect(expected).toHaveLength(46 + 38 + 40 + 37 + 55);
      expect(unused).toEqual(expected);

      expect(html).toContain('id="control-totals"');
      // The page's table holds the ledgers' transactions and last statement balances as the CSV does.
      expect(html).toContain(
        '<tr><td>historical_statement_transactions</td><td>accepted</td><td class="n">150</td><td class="n"></td>',
      );
      expect(html).toContain('<th class="n">last_statement_balance</th>');
      expect(html).toContain('Every number agrees from one stage to the next.');
    },
  );

  it('an inner join that drops notes: the notes it lost are unused rows, and the notes count falls', async () => {
    const dir = copyLegacyCis(join(root, 'inner-join'));
    // A first week's mistake: notes joined to the accounts file, one row per account by keeping its electricity
    // supply point, so the notes of a gas-only account find no row and are lost without a word.
    const shape = join(dir, 'shape.sql');
    const sql = readFileSync(shape, 'utf8');
    const notesView = /CREATE VIEW notes AS[\s\S]*?;\n/.exec(sql)?.[0];
    expect(notesView).toBeDefined();
    writeFileSync(
      shape,
      sql.replace(
        notesView!,
        'CREATE VIEW notes AS\nSELECT a.ACCOUNT_NO AS external_account_number, n."Note Text" AS body, ' +
          'n."Note Date" AS created_at, nullif(trim(n.Pinned), \'\') AS is_pinned, n._file, n._line\n' +
          'FROM cis_notes n JOIN cis_accounts a ON lpad(trim(n."Account Number"), 8, \'0\') = a.ACCOUNT_NO\n' +
          "WHERE a.SUPPLY_POINT_TYPE = 'ELEC' AND a.ACCOUNT_STATUS = 'LIVE';\n",
      ),
    );
    // Counted by hand: a note survives the join when its number, padded to eight digits, has a LIVE row with
    // SUPPLY_POINT_TYPE ELEC (191 of the 200 live accounts; none has two): 295 notes; the 38 of accounts left behind
    // and the 12 of the 9 gas-only accounts are lost.
    const notes = legacyRows(FILES.notes);
    const electric = new Set(
      accounts
        .filter((row) => row['ACCOUNT_STATUS'] === 'LIVE' && row['SUPPLY_POINT_TYPE'] === 'ELEC')
        .map((row) => row['ACCOUNT_NO']),
    );
    expect(electric.size).toBe(191);
    const padded = (note: Row): string => note['Account Number']!.trim().padStart(8, '0');
    const kept = notes.filter((note) => electric.has(padded(note)));
    const lost = notes.filter((note) => !electric.has(padded(note)));
    expect([kept.length, lost.length]).toEqual([295, 50]);

    const validated = await runMigrate(['validate', dir]);
    expect(validated.code, validated.stderr).toBe(0);
    expect(validated.stdout).toContain(`${FILES.notes}: 345 read, ${kept.length} used, ${lost.length} unused`);
    const { reconciliation, totals, unused } = await pushAndReport(dir, 'inner-join');
    expect(reconciliation.find((each) => each['source'] === 'cis_notes')).toEqual(
      row('cis_notes', FILES.notes, 345, kept.length, lost.length),
    );
    expect(totals.filter((each) => each['kind'] === 'notes').map((each) => each['records'])).toEqual(
      Array(4).fill(String(kept.length)),
    );
    expect(unused.filter((each) => each['source'] === 'cis_notes')).toEqual(
      lost.map((note) => ({ source: 'cis_notes', file: FILES.notes, line: note._line })),
    );
  });

  it('names what does not agree: a mandate the service refuses is sent and not accepted', async () => {
    const dir = copyLegacyCis(join(root, 'refused'));
    // The sandbox's payment vendor refuses a reference starting FAIL-: line 20 is account 00106613's active mandate.
    plant(dir, FILES.mandates, 20, 'MANDATE_REF', 'FAIL-TH00106613D2');
    const { totals, html } = await pushAndReport(dir, 'refused', 5);
    const instructions = totals.filter((each) => each['kind'] === 'payment_instructions');
    expect(instructions.map((each) => [each['stage'], each['records']])).toEqual([
      ['shaped', '142'],
      ['valid', '142'],
      ['sent', '142'],
      ['accepted', '141'],
    ]);
    expect(html).toContain('Numbers that must agree and do not:');
    expect(html).toContain('payment_instructions: 142 sent, 141 accepted (sent but not accepted by the service');
  });

  it('lists the files no source claims, and compares a control file with the rows read', async () => {
    const dir = copyLegacyCis(join(root, 'passed-over'));
    const config = JSON.parse(readFileSync(join(dir, 'migrate.config.json'), 'utf8')) as {
      sources: Record<string, unknown>;
    };
    config.sources['extract_control'] = {
      file: 'THISTLE_CONTROL_*.csv',
      control: { file_column: 'FILE_NAME', rows_column: 'RECORD_COUNT' },
    };
    writeFileSync(join(dir, 'migrate.config.json'), JSON.stringify(config, null, 2));
    // The extract's own counts: the accounts right (364), the notes one too many, a file the export does not have.
    writeFileSync(
      join(dir, 'THISTLE_CONTROL_20261126.csv'),
      `FILE_NAME,RECORD_COUNT\n${FILES.accounts},364\n${FILES.notes},346\nTHISTLE_METERS_20261126.csv,12\n`,
    );
    writeFileSync(join(dir, 'notes.csv'), 'external_account_number,body\n00000042,a stray note\n');
    writeFileSync(join(dir, `${FILES.bills}.bak`), readFileSync(join(dir, FILES.bills)));
    const validated = await runMigrate(['validate', dir]);
    expect(validated.code, validated.stderr).toBe(0);
    expect(validated.stdout).toContain('Not read (not export files): 2 entries');
    expect(validated.stdout).toMatch(/ {2}notes\.csv: no source of the mapping file claims it/);
    expect(validated.stdout).toMatch(/ {2}THISTLE_BILLS_20261126\.csv\.bak: no source of the mapping file claims it/);
    expect(validated.stdout).toContain(
      `Warning: THISTLE_CONTROL_20261126.csv:3 declares 346 row(s) of ${FILES.notes}; 345 were read.`,
    );
    expect(validated.stdout).toContain(
      'Warning: THISTLE_CONTROL_20261126.csv:4 declares 12 row(s) of THISTLE_METERS_20261126.csv, a file no source',
    );
    expect(validated.stdout).not.toContain(`declares 364 row(s) of ${FILES.accounts}`);
    // The control file is no source of records: it is not among the files whose rows are counted.
    expect(validated.stdout).not.toMatch(/extract_control THISTLE_CONTROL_20261126\.csv: \d+ read/);
    const json = await runMigrate(['validate', dir, '--json']);
    const document = JSON.parse(json.stdout) as {
      not_read: Array<{ name: string }>;
      control_totals: {
        control_counts: Array<{ file: string; declared: string; read: number | null; agrees: boolean }>;
      };
    };
    expect(document.not_read.map((entry) => entry.name)).toEqual([`${FILES.bills}.bak`, 'notes.csv']);
    expect(document.control_totals.control_counts.map((count) => [count.file, count.agrees])).toEqual([
      [FILES.accounts, true],
      [FILES.notes, false],
      ['THISTLE_METERS_20261126.csv', false],
    ]);
  });

  it("an export in the tool's own layout is its own sources: a row that joins no account is unused", async () => {
    const dir = copyLegacyCis(join(root, 'to-shape'));
    const shaped = join(root, 'shaped');
    const written = await runMigrate(['shape', dir, '--out', shaped]);
    expect(written.code, written.stderr).toBe(0);
    // A note keyed with no account number, after the 307 notes the shape made.
    appendFileSync(join(shaped, 'notes.csv'), ',a note nobody keyed,01/01/2026 10:00,,,\n');
    const validated = await runMigrate(['validate', shaped]);
    expect(validated.code).toBe(5);
    expect(validated.stdout).toContain('accounts accounts.csv: 200 read, 200 used, 0 unused');
    expect(validated.stdout).toContain('notes notes.csv: 308 read, 307 used, 1 unused');
    expect(validated.stdout).toMatch(/1 row\(s\) reached no record: notes\.csv:\d+ /);
    expect(validated.stdout).toContain('notes: 307 shaped, 307 valid');
  });

  it('a record that names only one of the legacy rows it comes from leaves the others unused', async () => {
    const dir = copyLegacyCis(join(root, 'first-row'));
    // The accounts view without the _rows that names each account's supply point rows: it carries the first only.
    const shape = join(dir, 'shape.sql');
    const sql = readFileSync(shape, 'utf8').replace(
      '  _file, _line, _rows\nFROM ledgered;',
      '  _file, _line\nFROM ledgered;',
    );
    expect(sql).toContain('  _file, _line\nFROM ledgered;');
    writeFileSync(shape, sql);
    const validated = await runMigrate(['validate', dir]);
    expect(validated.code, validated.stderr).toBe(0);
    // The 118 second supply point rows of dual-fuel accounts (318 LIVE rows of 200 accounts) reach no record now,
    // beside the 46 rows of the accounts left behind.
    expect(validated.stdout).toContain(`cis_accounts ${FILES.accounts}: 364 read, 200 used, 164 unused`);
  });
});

function row(source: string, file: string, read: number, used: number, unused: number): Row {
  return {
    source,
    file,
    rows_read: String(read),
    rows_used: String(used),
    rows_unused: String(unused),
  };
}
