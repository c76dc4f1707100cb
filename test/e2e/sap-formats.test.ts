import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.js';
import { push } from './helpers.js';
import { runMigrate } from './run-push.js';
import { MANDATE_LINES, NOTE_LINES, POSTING_LINES, SAP_CONFIG, SAP_FILES, writeSapExport } from './sap-export.js';

// The formats an SAP extract comes in, read through the real binary: a download whose fields are never quoted
// ("quote": false), notes quoted with ' ("quote": "'"), a header-less delimited dump whose columns the mapping file
// names ("header": false, "columns"), and a fixed-width mandate file in windows-1252 ("format": "fixed"). Every value
// of every line, as validate --show prints the legacy rows, and what the sandbox holds after a push, are compared
// with expectations written by hand; each bad line is named at its file and line.

let root: string;
let dir: string;
let sandbox: RunningSandbox;
let shapedSandbox: RunningSandbox;
beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'sap-formats-'));
  dir = writeSapExport(join(root, 'export'));
  // The open items are what happens after the extract: in the service's open statement period (from March here).
  const options = { processingMs: 5, openPeriodStart: '2026-03-01' };
  [sandbox, shapedSandbox] = await Promise.all([startSandbox(options), startSandbox(options)]);
});
afterAll(async () => {
  await Promise.all([sandbox.close(), shapedSandbox.close()]);
  rmSync(root, { recursive: true, force: true });
});

type Row = Record<string, string | null>;

/** Every line of every legacy file, as each source's table must hold it: values exactly as they stand, untrimmed. */
const LEGACY: Record<string, Array<[string, Row]>> = {
  '000010000001': [
    [
      'SAP_FKKVKP_20261126.csv:2 (sap_accounts)',
      {
        VKONT: '000010000001',
        NAME_FIRST: 'Anil "Neil"',
        NAME_LAST: 'Patel',
        SMTP_ADDR: 'anil@example.org',
        STREET: '1 High St',
        POST_CODE1: 'YO1 7HH',
        EINZDAT: '20240103',
        SALDO: '-1250',
      },
    ],
    [
      'SAP_DFKKOP_20261126.txt:1 (sap_postings)',
      { VKONT: '000010000001', OPBEL: '100000000001', BUDAT: '20260301', BETRH: '52.10', HVORG: 'BILL' },
    ],
    [
      'SAP_DFKKOP_20261126.txt:2 (sap_postings)',
      { VKONT: '000010000001', OPBEL: '100000000002', BUDAT: '20260315', BETRH: '-52.10', HVORG: 'DDR' },
    ],
    [
      'SAP_NOTES_20261126.csv:2 (sap_notes)',
      { VKONT: '000010000001', TEXT: `Asked for 'paper bills'; said "no calls"`, ERDAT: '26.03.2026 10:00' },
    ],
    [
      'SAP_MANDATES_20261126.dat:1 (sap_mandates)',
      {
        VKONT: '000010000001',
        SORT_CODE: '401234',
        BANK_ACCOUNT: '12345678',
        HOLDER: 'Anil "Neil" Patel, Esq.       ',
        DD_LIMIT: '£500    ',
        MANDATE_REF: 'SAPDD-0000001  ',
        STATUS: 'A',
        CANCELLED_ON: null,
      },
    ],
  ],
  '000010000002': [
    [
      'SAP_FKKVKP_20261126.csv:3 (sap_accounts)',
      {
        VKONT: '000010000002',
        NAME_FIRST: 'Zoë',
        NAME_LAST: "O'Brien",
        SMTP_ADDR: 'zoe@example.org',
        STREET: '2 "The Mews", Rear',
        POST_CODE1: 'LS1 4AP',
        EINZDAT: '20250228',
        SALDO: '0',
      },
    ],
    [
      'SAP_NOTES_20261126.csv:3 (sap_notes)',
      { VKONT: '000010000002', TEXT: 'Moved in, 28 Feb', ERDAT: '01.11.2026 09:30' },
    ],
    [
      'SAP_MANDATES_20261126.dat:2 (sap_mandates)',
      {
        VKONT: '000010000002',
        SORT_CODE: '208965',
        BANK_ACCOUNT: '87654321',
        HOLDER: "Zoë O'Brien                   ",
        DD_LIMIT: '£1,000  ',
        MANDATE_REF: 'SAPDD-0000002  ',
        STATUS: 'A',
        CANCELLED_ON: '        ',
      },
    ],
  ],
  '000010000003': [
    [
      'SAP_FKKVKP_20261126.csv:4 (sap_accounts)',
      {
        VKONT: '000010000003',
        NAME_FIRST: 'José',
        NAME_LAST: 'Núñez',
        SMTP_ADDR: 'jose@example.org',
        STREET: '3 Low St',
        POST_CODE1: 'HU1 1AA',
        EINZDAT: '20230615',
        SALDO: '300',
      },
    ],
    [
      'SAP_DFKKOP_20261126.txt:3 (sap_postings)',
      { VKONT: '000010000003', OPBEL: '100000000003', BUDAT: '20260301', BETRH: '12.00', HVORG: 'BILL' },
    ],
    [
      'SAP_MANDATES_20261126.dat:3 (sap_mandates)',
      {
        VKONT: '000010000003',
        SORT_CODE: '309634',
        BANK_ACCOUNT: '11223344',
        HOLDER: 'José Núñez                    ',
        DD_LIMIT: '        ',
        MANDATE_REF: 'SAPDD-0000003  ',
        STATUS: 'C',
        CANCELLED_ON: '20260301',
      },
    ],
    [
      'SAP_MANDATES_20261126.dat:4 (sap_mandates)',
      {
        VKONT: '000010000003',
        SORT_CODE: '309634',
        BANK_ACCOUNT: '55667788',
        HOLDER: 'José Núñez                    ',
        DD_LIMIT: '£250    ',
        MANDATE_REF: 'SAPDD-0000004  ',
        STATUS: 'A',
        CANCELLED_ON: null,
      },
    ],
  ],
};

/** The "rows read" part of validate --show for an account, as its format prints the rows above. */
function rowsRead(rows: Array<[string, Row]>): string {
  const value = (cell: string | null): string => (cell === null ? 'NULL' : JSON.stringify(cell));
  return rows
    .map(
      ([at, row]) =>
        `    ${at}\n${Object.entries(row)
          .map(([name, cell]) => `      ${name}=${value(cell)}\n`)
          .join('')}`,
    )
    .join('');
}

const mandate = (sort_code: string, bank_account: string, holder: string, limit: string | null) => [
  { key: 'sap_mandate', value: { sort_code, bank_account, holder, limit } },
];

/** What the sandbox must hold for each account. */
const EXPECTED = {
  '000010000001': {
    payload: {
      external_account_number: '000010000001',
      import_supplier: 'ACME',
      account_type: 'DOMESTIC',
      billing_name: 'Anil "Neil" Patel',
      billing_email: 'anil@example.org',
      billing_address: { street_address: '1 High St', postal_code: 'YO1 7HH', country: 'GB' },
      transfer_balance: 12.5,
      metadata: mandate('401234', '12345678', 'Anil "Neil" Patel, Esq.', '£500'),
      customers: [{ given_name: 'Anil "Neil"', family_name: 'Patel', email: 'anil@example.org' }],
      supply_addresses: [
        {
          supply_address1: '1 High St',
          supply_postcode: 'YO1 7HH',
          customer_at_supply_address_from_date: '2024-01-03',
        },
      ],
    },
    notes: [{ body: `Asked for 'paper bills'; said "no calls"`, createdAt: '2026-03-26T10:00:00+00:00' }],
    transactions: [
      ['100000000001', '2026-03-01', '52.10', 'CHARGE'],
      ['100000000002', '2026-03-15', '52.10', 'PAYMENT'],
    ],
    mandates: ['SAPDD-0000001'],
  },
  '000010000002': {
    payload: {
      external_account_number: '000010000002',
      import_supplier: 'ACME',
      account_type: 'DOMESTIC',
      billing_name: "Zoë O'Brien",
      billing_email: 'zoe@example.org',
      billing_address: { street_address: '2 "The Mews", Rear', postal_code: 'LS1 4AP', country: 'GB' },
      transfer_balance: 0,
      metadata: mandate('208965', '87654321', "Zoë O'Brien", '£1,000'),
      customers: [{ given_name: 'Zoë', family_name: "O'Brien", email: 'zoe@example.org' }],
      supply_addresses: [
        {
          supply_address1: '2 "The Mews", Rear',
          supply_postcode: 'LS1 4AP',
          customer_at_supply_address_from_date: '2025-02-28',
        },
      ],
    },
    notes: [{ body: 'Moved in, 28 Feb', createdAt: '2026-11-01T09:30:00+00:00' }],
    transactions: [],
    mandates: ['SAPDD-0000002'],
  },
  '000010000003': {
    payload: {
      external_account_number: '000010000003',
      import_supplier: 'ACME',
      account_type: 'DOMESTIC',
      billing_name: 'José Núñez',
      billing_email: 'jose@example.org',
      billing_address: { street_address: '3 Low St', postal_code: 'HU1 1AA', country: 'GB' },
      transfer_balance: -3,
      metadata: mandate('309634', '55667788', 'José Núñez', '£250'),
      customers: [{ given_name: 'José', family_name: 'Núñez', email: 'jose@example.org' }],
      supply_addresses: [
        {
          supply_address1: '3 Low St',
          supply_postcode: 'HU1 1AA',
          customer_at_supply_address_from_date: '2023-06-15',
        },
      ],
    },
    notes: [],
    transactions: [['100000000003', '2026-03-01', '12.00', 'CHARGE']],
    mandates: ['SAPDD-0000004'],
  },
};

describe('an SAP extract in its own formats', () => {
  it('reads every value of every line exactly as it stands (validate --show)', async () => {
    const run = await runMigrate(['validate', dir, '--show', Object.keys(LEGACY).join(',')]);
    expect(run.code, run.stderr).toBe(0);
    const accounts = run.stdout.split(/\nAccount /).slice(1);
    expect(accounts).toHaveLength(3);
    for (const [index, [number, rows]] of Object.entries(LEGACY).entries()) {
      const shown = accounts[index] ?? '';
      expect(shown.split('\n')[0]).toBe(number);
      const read = shown.slice(shown.indexOf('  rows read:\n') + '  rows read:\n'.length, shown.indexOf('  records'));
      expect(read, number).toBe(rowsRead(rows));
    }
  });

  it('pushes what the sandbox must hold, with every value of the legacy files', async () => {
    const run = await push(sandbox, dir, join(root, 'state'));
    expect(run.code, run.stderr).toBe(0);
    expect(held(sandbox)).toEqual(EXPECTED);
  });

  it('writes with shape --out an export that pushes the same', async () => {
    const out = join(root, 'shaped');
    const shaped = await runMigrate(['shape', dir, '--out', out]);
    expect(shaped.code, shaped.stderr).toBe(0);
    expect(readFileSync(join(out, 'payment_instructions.csv'), 'utf8')).toBe(
      'VKONT,reference,_file,_line\n' +
        `000010000001,SAPDD-0000001,${SAP_FILES.mandates},1\n` +
        `000010000002,SAPDD-0000002,${SAP_FILES.mandates},2\n` +
        `000010000003,SAPDD-0000004,${SAP_FILES.mandates},4\n`,
    );
    const run = await push(shapedSandbox, out, join(root, 'state-shaped'));
    expect(run.code, run.stderr).toBe(0);
    expect(held(shapedSandbox)).toEqual(EXPECTED);
  });
});

/** What a sandbox holds, account by account, in the shape of EXPECTED. */
function held(sandbox: RunningSandbox): unknown {
  return Object.fromEntries(
    sandbox.inspect.accounts('ACME').map((account) => [
      account.externalAccountNumber,
      {
        payload: account.payload,
        notes: account.notes.filter((note) => !note.bySandbox).map(({ body, createdAt }) => ({ body, createdAt })),
        transactions: account.transactions.map((each) => [
          each.transactionId,
          each.submittedDate,
          each.amount,
          each.type,
        ]),
        mandates: account.paymentInstructions.map((instruction) => instruction.reference),
      },
    ]),
  );
}

describe('a bad line of an SAP file is named at its file and line (exit 2)', () => {
  const variant = (name: string, change: Parameters<typeof writeSapExport>[1], config?: object): string => {
    const at = writeSapExport(join(root, name), change);
    if (config) writeFileSync(join(at, 'migrate.config.json'), JSON.stringify(config));
    return at;
  };
  const stderrOf = async (at: string): Promise<string> => {
    const run = await runMigrate(['validate', at]);
    expect(run.code, run.stderr).toBe(2);
    return run.stderr.trim();
  };

  it('a quote in an unquoted download read with quoting on', async () => {
    const { quote: _off, ...accounts } = SAP_CONFIG.sources.sap_accounts;
    const at = variant('quoted', {}, { ...SAP_CONFIG, sources: { ...SAP_CONFIG.sources, sap_accounts: accounts } });
    expect(await stderrOf(at)).toBe(
      `migrate: ${SAP_FILES.accounts}:2: cannot be parsed as CSV: a quote " appears inside an unquoted field, or ` +
        'after a closing quote; quote the field and double its inner quotes (""). A file whose fields are never ' +
        'quoted (a quote is a character of the value, as in SAP downloads) reads with "quote": false in ' +
        `sources.sap_accounts; one quoted with another character, with "quote": "'".`,
    );
  });

  it("a field quoted with ' that is never closed", async () => {
    const notes = NOTE_LINES.map((line) => line.replace("'Moved in, 28 Feb'", "'Moved in, 28 Feb"));
    expect(await stderrOf(variant('unclosed', { notes }))).toBe(
      `migrate: ${SAP_FILES.notes}:3: cannot be parsed as CSV: a quoted field of the row starting on this line is ` +
        "never closed (a missing closing quote '); the rest of the file would be read as one cell. A file whose " +
        'fields are never quoted (a quote is a character of the value, as in SAP downloads) reads with "quote": ' +
        'false in sources.sap_notes.',
    );
  });

  it('a line of a header-less file with another number of cells than its named columns', async () => {
    const postings = POSTING_LINES.map((line) => line.replace('|-52.10|DDR', '|-52.10DDR'));
    expect(await stderrOf(variant('cells', { postings }))).toBe(
      `migrate: ${SAP_FILES.postings}:2: the row has 4 cells but sources.sap_postings.columns in the mapping file ` +
        'names 5 (an unquoted delimiter in a value, or the wrong delimiter?); the source cannot be loaded until it ' +
        'is mended.',
    );
  });

  it('a fixed-width line that ends inside a column', async () => {
    // 40 characters, é one of them (one byte in windows-1252): the line ends inside HOLDER.
    const mandates = MANDATE_LINES.map((line, index) => (index === 2 ? line.slice(0, 40) : line));
    expect(mandates[2]).toHaveLength(40);
    expect(await stderrOf(variant('short', { mandates }))).toBe(
      `migrate: ${SAP_FILES.mandates}:3: the line is 40 characters long and ends inside HOLDER (characters 27 to ` +
        '56); a line holds each column of the layout (sources.sap_mandates.columns in the mapping file) in full, or ' +
        'ends before a column starts (the columns that start past its end are then NULL). Check that the line is ' +
        "whole and that the source's encoding and layout are the file's.",
    );
  });

  it('a layout whose columns overlap, or that starts before the line or has no width, in the mapping file', async () => {
    const columns = SAP_CONFIG.sources.sap_mandates.columns.map((column) =>
      column.name === 'BANK_ACCOUNT' ? { ...column, start: 17 } : column,
    );
    const overlap = { ...SAP_CONFIG.sources.sap_mandates, columns };
    const at = variant('overlap', {}, { ...SAP_CONFIG, sources: { ...SAP_CONFIG.sources, sap_mandates: overlap } });
    expect(await stderrOf(at)).toBe(
      `migrate: ${join(at, 'migrate.config.json')}: sources.sap_mandates.columns.2: BANK_ACCOUNT (characters 17 ` +
        'to 24) overlaps SORT_CODE (characters 13 to 18).',
    );
    const zero = SAP_CONFIG.sources.sap_mandates.columns.map((column, index) =>
      index === 0 ? { ...column, start: 0 } : index === 6 ? { ...column, width: 0 } : column,
    );
    const bad = { ...SAP_CONFIG.sources.sap_mandates, columns: zero };
    const other = variant('zero', {}, { ...SAP_CONFIG, sources: { ...SAP_CONFIG.sources, sap_mandates: bad } });
    expect(await stderrOf(other)).toBe(
      `migrate: ${join(other, 'migrate.config.json')}: sources.sap_mandates.columns.0.start: start is the ` +
        "column's first character, a whole number counted from 1 (the line's first character is 1); " +
        'sources.sap_mandates.columns.6.width: width is a whole number of characters, 1 or more',
    );
  });
});

describe('a fixed-width file whose first line names the columns', () => {
  // SAP's titles, as a download writes them above the data: shorter than the layout, ending inside HOLDER.
  const TITLES = 'VKONT       BLZ   KONTO   KONTOINHABER';
  const titled = (name: string, header?: boolean): string => {
    const at = writeSapExport(join(root, name), { mandates: [TITLES, ...MANDATE_LINES] });
    const mandates = { ...SAP_CONFIG.sources.sap_mandates, ...(header === undefined ? {} : { header }) };
    const config = { ...SAP_CONFIG, sources: { ...SAP_CONFIG.sources, sap_mandates: mandates } };
    writeFileSync(join(at, 'migrate.config.json'), JSON.stringify(config));
    return at;
  };

  it('is skipped with "header": true, every record at its own line', async () => {
    const out = join(root, 'titled-out');
    const run = await runMigrate(['shape', titled('titled', true), '--out', out]);
    expect(run.code, run.stderr).toBe(0);
    expect(readFileSync(join(out, 'payment_instructions.csv'), 'utf8')).toBe(
      'VKONT,reference,_file,_line\n' +
        `000010000001,SAPDD-0000001,${SAP_FILES.mandates},2\n` +
        `000010000002,SAPDD-0000002,${SAP_FILES.mandates},3\n` +
        `000010000003,SAPDD-0000004,${SAP_FILES.mandates},5\n`,
    );
    const shown = await runMigrate(['validate', titled('titled-show', true), '--show', '000010000001']);
    expect(shown.code, shown.stderr).toBe(0);
    // The same values as without the titles, the mandate one line further down.
    const mandateAt = (at: string): string => at.replace(`${SAP_FILES.mandates}:1 `, `${SAP_FILES.mandates}:2 `);
    const rows = (LEGACY['000010000001'] ?? []).map(([at, row]): [string, Row] => [mandateAt(at), row]);
    expect(rows.map(([at]) => at)).toContain(`${SAP_FILES.mandates}:2 (sap_mandates)`);
    expect(shown.stdout).toContain(`  rows read:\n${rowsRead(rows)}  records`);
  });

  it('without it, stops at line 1 naming the setting (exit 2)', async () => {
    const run = await runMigrate(['validate', titled('untitled')]);
    expect(run.code, run.stderr).toBe(2);
    expect(run.stderr.trim()).toBe(
      `migrate: ${SAP_FILES.mandates}:1: the line is 38 characters long and ends inside HOLDER (characters 27 to ` +
        '56); a line holds each column of the layout (sources.sap_mandates.columns in the mapping file) in full, or ' +
        'ends before a column starts (the columns that start past its end are then NULL). Check that the line is ' +
        "whole and that the source's encoding and layout are the file's. A first line that names the columns is " +
        'skipped with "header": true beside sources.sap_mandates.columns.',
    );
  });
});

// The layout's sum: the file's lines are as long as the layout says, in characters (é and £ one each).
it('writes mandate lines of the layout, in characters', () => {
  const bytes = readFileSync(join(dir, SAP_FILES.mandates));
  const lines = bytes.toString('latin1').split('\r\n');
  expect(lines.map((line) => line.length)).toEqual([80, 88, 88, 80, 0]);
  expect(bytes.includes(Buffer.from([0xa3]))).toBe(true); // £ in windows-1252
});

// docs/from-a-legacy-system.md "Files in SAP's formats" shows the sources this test reads, as they are.
it("is the guide's example", () => {
  const page = readFileSync(join(import.meta.dirname, '..', '..', 'docs', 'from-a-legacy-system.md'), 'utf8');
  const section = page.slice(page.indexOf("## Files in SAP's formats"));
  const block = /```json\n([\s\S]*?)```/.exec(section)?.[1] ?? '';
  expect(JSON.parse(`{${block}}`)).toEqual({ sources: SAP_CONFIG.sources });
});
