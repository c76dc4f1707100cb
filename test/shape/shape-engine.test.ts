import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { InputError } from '../../src/errors.js';
import { openShape, type ShapedExport, type ShapeSource } from '../../src/shape/index.js';

// The shaping stage with a real DuckDB: sources loaded by the tool's readers, the lock, the shape file's errors named
// at their place, and views read in account order with their legacy lines.

const roots: string[] = [];
afterAll(() => roots.forEach((root) => rmSync(root, { recursive: true, force: true })));

const SOURCE: ShapeSource = {
  table: 'legacy',
  glob: 'LEGACY_*.csv',
  several: false,
  format: undefined,
  encoding: 'utf8',
  delimiter: ',',
  header: true,
};

const VIEW =
  'CREATE VIEW accounts AS SELECT ACC AS external_account_number, NAME AS billing_name, _file, _line FROM legacy;\n';

function exportDir(files: Record<string, string | Buffer>): string {
  const dir = mkdtempSync(join(tmpdir(), 'shape-unit-'));
  roots.push(dir);
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

function open(dir: string, sql: string, sources: ShapeSource[] = [SOURCE]): Promise<ShapedExport> {
  writeFileSync(join(dir, 'shape.sql'), sql);
  return openShape({
    exportDir: dir,
    shapeFile: join(dir, 'shape.sql'),
    shapeName: 'shape.sql',
    sources,
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

async function rowsOf(shaped: ShapedExport, kind = 'accounts', key = 'external_account_number') {
  const view = shaped.views.find((each) => each.kind === kind);
  if (!view) throw new Error(`no view ${kind}`);
  const rows = [];
  for await (const batch of shaped.rows(view, key)) rows.push(...batch);
  return rows;
}

const LEGACY = 'ACC,NAME\r\n A-2,"Zoë\r\nSmith"\r\nA-1,Bob\r\nA-10,\r\n';

describe('loading sources', () => {
  it('loads every cell as text with _file and _line, read as the tool reads files (BOM, CRLF, quoted newlines)', async () => {
    const dir = exportDir({ 'LEGACY_1.csv': `\ufeff${LEGACY}` });
    const shaped = await open(dir, VIEW);
    try {
      expect(shaped.sources).toEqual([{ table: 'legacy', files: ['LEGACY_1.csv'], columns: ['ACC', 'NAME'], rows: 3 }]);
      // Ordered by the trimmed number in byte order (A-1 < A-10 < A-2), an empty cell NULL (read as ''), each row
      // with the line where its record starts.
      expect(await rowsOf(shaped)).toEqual([
        { file: 'LEGACY_1.csv', line: 4, cells: ['A-1', 'Bob'] },
        { file: 'LEGACY_1.csv', line: 5, cells: ['A-10', ''] },
        { file: 'LEGACY_1.csv', line: 2, cells: [' A-2', 'Zoë\r\nSmith'] },
      ]);
      expect(shaped.views[0]?.passThrough).toEqual({
        table: 'legacy',
        columns: { external_account_number: 'ACC', billing_name: 'NAME' },
        references: {
          external_account_number: { table: 'legacy', column: 'ACC' },
          billing_name: { table: 'legacy', column: 'NAME' },
        },
      });
    } finally {
      await shaped.close();
    }
  });

  it('reads windows-1252 and appends the files of a "files" source in name order', async () => {
    const dir = exportDir({
      'LEGACY_2.csv': Buffer.from('ACC,NAME\r\nA-3,Caf\xe9\r\n', 'latin1'),
      'LEGACY_1.csv': Buffer.from('ACC,NAME\r\nA-4,Zo\xeb\r\n', 'latin1'),
    });
    const shaped = await open(dir, VIEW, [{ ...SOURCE, several: true, encoding: 'windows-1252' }]);
    try {
      expect(shaped.sources[0]?.files).toEqual(['LEGACY_1.csv', 'LEGACY_2.csv']);
      expect(await rowsOf(shaped)).toEqual([
        { file: 'LEGACY_2.csv', line: 2, cells: ['A-3', 'Café'] },
        { file: 'LEGACY_1.csv', line: 2, cells: ['A-4', 'Zoë'] },
      ]);
    } finally {
      await shaped.close();
    }
  });

  it('loads JSON records, numbers as written and objects as JSON text', async () => {
    const dir = exportDir({
      'legacy.ndjson': '{"ACC": "A-1", "BAL": 1.10, "TAGS": {"n": 90000000000000000001}}\n{"ACC": "A-2"}\n',
    });
    const sql =
      'CREATE VIEW accounts AS SELECT ACC AS external_account_number, BAL AS transfer_balance, ' +
      'TAGS AS metadata, _file, _line FROM legacy;';
    const shaped = await open(dir, sql, [{ ...SOURCE, glob: '*.ndjson' }]);
    try {
      expect(await rowsOf(shaped)).toEqual([
        { file: 'legacy.ndjson', line: 1, cells: ['A-1', '1.10', '{"n":90000000000000000001}'] },
        { file: 'legacy.ndjson', line: 2, cells: ['A-2', '', ''] },
      ]);
    } finally {
      await shaped.close();
    }
  });

  it('names what the directory holds when a glob matches no file, or several where one is expected', async () => {
    const dir = exportDir({ 'LEGACY_1.csv': LEGACY, 'LEGACY_2.csv': LEGACY });
    const none = await refusal(open(dir, VIEW, [{ ...SOURCE, glob: 'CIS_*.csv' }]));
    expect(none.message).toMatch(
      /sources\.legacy: the glob "CIS_\*\.csv" matches no file .* LEGACY_1\.csv, LEGACY_2\.csv/,
    );
    const two = await refusal(open(dir, VIEW));
    expect(two.message).toContain('matches 2 files (LEGACY_1.csv, LEGACY_2.csv) where "file" expects one');
    expect(two.exitCode).toBe(2);
  });

  it('refuses a row with more cells than the header, at its line, with the reader checks of the tool', async () => {
    const dir = exportDir({ 'LEGACY_1.csv': 'ACC,NAME\nA-1,Bob\nA-2,Ann,extra\n' });
    const error = await refusal(open(dir, VIEW));
    expect(error.message).toMatch(/^LEGACY_1\.csv:3: the row has 3 cells but the header has 2 columns/);
    const broken = exportDir({ 'LEGACY_1.csv': 'ACC,NAME\nA-1,"Bob\n' });
    expect((await refusal(open(broken, VIEW))).message).toMatch(/^LEGACY_1\.csv:2: cannot be parsed as CSV/);
  });
});

describe('the lock: a shape file reads and writes nothing but its tables', () => {
  const attempts: Array<[string, string, RegExp]> = [
    [
      'read_csv',
      "CREATE VIEW x AS SELECT * FROM read_csv('/etc/passwd');",
      /shape\.sql:2:32: refused: .*Cannot access file "\/etc\/passwd"/,
    ],
    [
      'COPY ... TO',
      "COPY legacy TO '/tmp/out.csv';",
      /shape\.sql:2:1: (COPY is refused|refused): a shape file may only build views.*\/tmp\/out\.csv/,
    ],
    ['INSTALL', 'INSTALL httpfs;', /shape\.sql:2:1: LOAD is refused/],
    ['LOAD', "LOAD '/tmp/evil.duckdb_extension';", /shape\.sql:2:1: LOAD is refused/],
    ['ATTACH', "ATTACH ':memory:' AS other;", /shape\.sql:2:1: ATTACH is refused/],
    ['SET', "SET memory_limit = '8GB';", /shape\.sql:2:1: SET is refused|VARIABLE SET is refused/],
    [
      'a setting through a function',
      "SELECT * FROM read_text('/etc/hostname');",
      /refused: .*disabled by configuration/,
    ],
  ];
  for (const [what, statement, message] of attempts)
    it(`refuses ${what}`, async () => {
      const dir = exportDir({ 'LEGACY_1.csv': LEGACY });
      const error = await refusal(open(dir, `-- ${what}\n${statement}\n${VIEW}`));
      expect(error.message).toMatch(message);
      expect(error.exitCode).toBe(2);
    });

  it('leaves the configuration locked: a setting cannot be changed back', async () => {
    const dir = exportDir({ 'LEGACY_1.csv': LEGACY });
    const error = await refusal(open(dir, "SELECT set_config('enable_external_access', 'true');\n" + VIEW));
    expect(error.message).toMatch(/^shape\.sql:1:\d+: /);
  });
});

describe('the shape file', () => {
  it('names an SQL error at shape.sql:line:column with the engine message', async () => {
    const dir = exportDir({ 'LEGACY_1.csv': LEGACY });
    const sql = `-- first; a comment\n${VIEW}CREATE VIEW customers AS\nSELECT ACC AS external_account_number,\n  NOPE, _file, _line FROM legacy;\n`;
    const error = await refusal(open(dir, sql));
    expect(error.message).toMatch(/^shape\.sql:5:3: Binder Error: Referenced column "NOPE" not found/);
  });

  it('names a syntax error in a later statement on its own line', async () => {
    const dir = exportDir({ 'LEGACY_1.csv': LEGACY });
    const error = await refusal(open(dir, `${VIEW}\nCREATE VIEW notes AS SELEC 1;`));
    expect(error.message).toMatch(/^shape\.sql:3:\d+: Parser Error: syntax error at or near "SELEC"/);
  });

  it('needs an accounts view, and _file and _line in every view', async () => {
    const dir = exportDir({ 'LEGACY_1.csv': LEGACY });
    const none = await refusal(open(dir, 'CREATE VIEW customers AS SELECT ACC, _file, _line FROM legacy;'));
    expect(none.message).toMatch(/^shape\.sql: makes no accounts view/);
    const bare = await refusal(open(dir, 'CREATE VIEW accounts AS SELECT ACC AS external_account_number FROM legacy;'));
    expect(bare.message).toContain('the view accounts has no _file column');
  });

  it('names a value the view cannot compute at the view', async () => {
    const dir = exportDir({ 'LEGACY_1.csv': 'ACC,BAL\nA-1,12\nA-2,twelve\n' });
    const shaped = await open(
      dir,
      'CREATE VIEW accounts AS SELECT ACC AS external_account_number, CAST(BAL AS INTEGER) AS transfer_balance, _file, _line FROM legacy;',
    );
    try {
      const error = await refusal(rowsOf(shaped));
      expect(error.message).toMatch(
        /^shape\.sql:1 \(view accounts\): the view cannot be read: Conversion Error.*twelve.*try_cast/,
      );
      // The engine quotes the value and its column: the legacy row holding it is named.
      expect(error.message).toContain('The value "twelve" is in LEGACY_1.csv:3 (BAL).');
    } finally {
      await shaped.close();
    }
  });

  it('tells pass-through columns from computed ones, through joins and unions', async () => {
    const dir = exportDir({ 'LEGACY_1.csv': LEGACY });
    const sql =
      VIEW +
      'CREATE VIEW customers AS SELECT l.ACC AS external_account_number, upper(l.NAME) AS given_name, m.NAME AS family_name, ' +
      'l._file, l._line FROM legacy l JOIN legacy m ON l.ACC = m.ACC;\n' +
      'CREATE VIEW notes AS SELECT ACC AS external_account_number, NAME AS body, _file, _line FROM legacy ' +
      'UNION ALL SELECT ACC, ACC, _file, _line FROM legacy;';
    const shaped = await open(dir, sql);
    try {
      const passed = Object.fromEntries(shaped.views.map((view) => [view.kind, view.passThrough.columns]));
      expect(passed).toEqual({
        accounts: { external_account_number: 'ACC', billing_name: 'NAME' },
        // family_name comes from another row (m) than the one _file names: not this line's column.
        customers: { external_account_number: 'ACC' },
        notes: { external_account_number: 'ACC' },
      });
      // ... but a column of a source table all the same: with the rows a record names, the row that holds it.
      expect(shaped.views[1]?.passThrough.references).toEqual({
        external_account_number: { table: 'legacy', column: 'ACC' },
        family_name: { table: 'legacy', column: 'NAME' },
      });
    } finally {
      await shaped.close();
    }
  });
});
