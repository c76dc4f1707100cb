import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { InputError } from '../../src/errors.js';
import { withTeamChecks } from '../../src/intake/team-check-issues.js';
import { IssueSpool } from '../../src/intake/issue-spool.js';
import type { ExportAccount, ExportEntry, OrphanItems, SourceIssue } from '../../src/mapping/types.js';
import { openShape, type CheckRow, type ShapedExport } from '../../src/shape/index.js';

// The team's own checks (check_<name> views) with a real DuckDB: their rows read with their legacy lines and
// severities, their mistakes named at their CREATE VIEW line; then put on the accounts they are about as the join
// hands them out.

const roots: string[] = [];
afterAll(() => roots.forEach((root) => rmSync(root, { recursive: true, force: true })));

const LEGACY = 'ACC,POSTCODE,DOB\nA-2,LS6 8NP,01/02/1980\nA-1,LS6 8N,xx\nA-10,,03/04/1990\n';
const ACCOUNTS = 'CREATE VIEW accounts AS SELECT ACC AS external_account_number, _file, _line FROM legacy;\n';

async function open(sql: string): Promise<ShapedExport> {
  const dir = mkdtempSync(join(tmpdir(), 'team-checks-'));
  roots.push(dir);
  writeFileSync(join(dir, 'LEGACY_1.csv'), LEGACY);
  writeFileSync(join(dir, 'shape.sql'), sql);
  return openShape({
    exportDir: dir,
    shapeFile: join(dir, 'shape.sql'),
    shapeName: 'shape.sql',
    sources: [
      {
        table: 'legacy',
        glob: 'LEGACY_*.csv',
        several: false,
        format: undefined,
        encoding: 'utf8',
        delimiter: ',',
        header: true,
      },
    ],
    memoryLimit: '64MB',
    tempRoot: dir,
  });
}

async function refusal(promise: Promise<unknown>): Promise<InputError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(InputError);
  return error as InputError;
}

async function keyedOf(shaped: ShapedExport): Promise<CheckRow[]> {
  const rows: CheckRow[] = [];
  for await (const batch of shaped.keyedChecks()) rows.push(...batch);
  return rows;
}

const POSTCODE =
  "CREATE VIEW check_postcode AS SELECT ACC AS external_account_number, _file, _line, 'POSTCODE ' || " +
  "coalesce(POSTCODE, '(empty)') || ' is not a UK postcode' AS message FROM legacy\n" +
  "WHERE NOT regexp_full_match(coalesce(POSTCODE, ''), '[A-Z]{1,2}[0-9][A-Z0-9]? [0-9][A-Z]{2}');\n";

describe('check views', () => {
  it('reads every row with its legacy line, in account order; severity error unless warning', async () => {
    const sql =
      ACCOUNTS +
      POSTCODE +
      "CREATE VIEW check_born AS SELECT _file, _line, 'no date of birth' AS message, 'Warning' AS severity " +
      "FROM legacy WHERE try_strptime(DOB, '%d/%m/%Y') IS NULL;";
    const shaped = await open(sql);
    try {
      expect(shaped.checks).toEqual(['check_born', 'check_postcode']);
      expect(await keyedOf(shaped)).toEqual([
        {
          code: 'check_postcode',
          key: 'A-1',
          file: 'LEGACY_1.csv',
          line: 3,
          severity: 'error',
          message: 'POSTCODE LS6 8N is not a UK postcode',
        },
        {
          code: 'check_postcode',
          key: 'A-10',
          file: 'LEGACY_1.csv',
          line: 4,
          severity: 'error',
          message: 'POSTCODE (empty) is not a UK postcode',
        },
      ]);
      expect(await shaped.keylessChecks()).toEqual([
        {
          code: 'check_born',
          key: undefined,
          file: 'LEGACY_1.csv',
          line: 3,
          severity: 'warning',
          message: 'no date of birth',
        },
      ]);
    } finally {
      await shaped.close();
    }
  });

  it('takes a severity it does not know as an error, and says so', async () => {
    const shaped = await open(
      `${ACCOUNTS}CREATE VIEW check_x AS SELECT ACC AS external_account_number, _file, _line, 'x' AS message, ` +
        "'info' AS severity FROM legacy WHERE ACC = 'A-1';",
    );
    try {
      expect(await keyedOf(shaped)).toEqual([
        expect.objectContaining({
          severity: 'error',
          message: 'x (severity "info" is neither error nor warning: taken as an error)',
        }),
      ]);
    } finally {
      await shaped.close();
    }
  });

  it('names a check view with other columns, without provenance, or that cannot be computed, at its line', async () => {
    const columns = await refusal(
      open(`${ACCOUNTS}\n\nCREATE VIEW check_x AS SELECT ACC, _file, _line, 'x' AS message FROM legacy;`),
    );
    expect(columns.message).toMatch(/^shape\.sql:4 \(view check_x\): a check view has the columns .* has acc besides/);
    const lineless = await refusal(
      open(`${ACCOUNTS}CREATE VIEW check_x AS SELECT _file, NULL AS _line, 'x' AS message FROM legacy;`),
    );
    expect(lineless.message).toMatch(/^shape\.sql:2 \(view check_x\): a row has no legacy _line/);
    const cast = await refusal(
      open(
        `${ACCOUNTS}CREATE VIEW check_x AS SELECT _file, _line, 'x' AS message FROM legacy\n` +
          "WHERE strptime(DOB, '%d/%m/%Y') > DATE '2000-01-01';",
      ),
    );
    expect(cast.message).toMatch(/^shape\.sql:2 \(view check_x\): the view cannot be read: .*"xx"/);
    expect(cast.message).toContain('The value "xx" is in LEGACY_1.csv:3 (DOB).');
  });
});

// --- putting the rows on the accounts -------------------------------------------------------------------------

function account(number: string, line: number): ExportEntry {
  const value: Partial<ExportAccount> = {
    externalAccountNumber: number,
    origin: { file: 'L.csv', line },
    origins: { '': { file: 'L.csv', line } },
    issues: [],
    notes: [{ value: {}, origin: { file: 'N.csv', line: line + 100 }, issues: [] }] as never,
    transactions: [],
    statements: [],
    paymentInstructions: [],
  };
  return { kind: 'account', account: value as ExportAccount };
}

function orphan(number: string, noteLine: number): ExportEntry {
  const items: Partial<OrphanItems> = {
    externalAccountNumber: number,
    notes: [{ value: {}, origin: { file: 'N.csv', line: noteLine }, issues: [] }] as never,
    transactions: [],
    statements: [],
    paymentInstructions: [],
  };
  return { kind: 'orphan', items: items as OrphanItems };
}

const row = (
  key: string | undefined,
  file: string,
  line: number,
  severity: CheckRow['severity'] = 'error',
): CheckRow => ({
  code: 'check_t',
  key,
  file,
  line,
  message: `at ${line}`,
  severity,
});

async function* batches(rows: CheckRow[]): AsyncGenerator<CheckRow[], void, undefined> {
  yield rows.slice(0, 1);
  yield rows.slice(1);
}

async function* listed(entries: ExportEntry[]): AsyncGenerator<ExportEntry> {
  yield* entries;
}

describe('check rows on the accounts', () => {
  it("puts errors in the issues and warnings in the warnings of their accounts; what fits none is the export's", async () => {
    const keyed = [
      row('A', 'L.csv', 2),
      row('A', 'L.csv', 9, 'warning'),
      row('B0', 'L.csv', 4),
      row('C', 'N.csv', 7),
      row('C', 'N.csv', 8),
      row('Z', 'L.csv', 5),
    ];
    const keyless = [row(undefined, 'N.csv', 103), row(undefined, 'N.csv', 7, 'warning'), row(undefined, 'X.csv', 1)];
    const unfit = new IssueSpool();
    const entries: ExportEntry[] = [];
    const shaped = { checks: ['check_t'], keyedChecks: () => batches(keyed), keylessChecks: async () => keyless };
    for await (const entry of withTeamChecks(listed([account('A', 2), account('B', 3), orphan('C', 7)]), shaped, unfit))
      entries.push(entry);
    const [a, b, c] = entries as [
      ExportEntry & { kind: 'account' },
      ExportEntry & { kind: 'account' },
      ExportEntry & { kind: 'orphan' },
    ];
    const lines = (issues: SourceIssue[] | undefined) => (issues ?? []).map((issue) => `${issue.file}:${issue.line}`);
    expect(lines(a.account.issues)).toEqual(['L.csv:2']);
    expect(lines(a.account.warnings)).toEqual(['L.csv:9']);
    // Found by the line of its note.
    expect(lines(b.account.issues)).toEqual(['N.csv:103']);
    expect(b.account.issues[0]?.externalAccountNumber).toBe('B');
    // An account not in the export: its note at the line is held back; a warning goes with the records.
    expect(lines(c.items.notes[0]?.issues)).toEqual(['N.csv:7']);
    expect(lines(c.items.warnings)).toEqual(['N.csv:7']);
    const rest: SourceIssue[] = [];
    for await (const issue of unfit) rest.push(issue);
    expect(rest.map((issue) => [issue.file, issue.line, issue.externalAccountNumber, issue.message])).toEqual([
      ['L.csv', 4, 'B0', 'at 4 (the check names account B0, which has no record in this export)'],
      ['N.csv', 8, 'C', 'at 8 (no record of account C in this export comes from this line)'],
      ['L.csv', 5, 'Z', 'at 5 (the check names account Z, which has no record in this export)'],
      ['X.csv', 1, '', 'at 1 (no record of this export comes from this line)'],
    ]);
    unfit.close();
  });
});
