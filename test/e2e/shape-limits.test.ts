import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runMigrate } from './run-push.js';

// The shape engine's memory and temporary disk as operator settings, through the real binary: a shape that cannot
// fit stops with exit 2 naming the view, the setting, its value and where it came from, how to raise it and the
// guide's section (docs/from-a-legacy-system.md "SQL that scales"), never the engine's text alone nor a source file of
// the tool; the engine's files are gone afterwards. And the guide's claim itself: on the same export and memory, the
// supply points grouped with list() run out, numbered and placed side by side they spill and pass, with the same
// rows.

const ACCOUNTS = 40_000;

/** Two supply point rows per account, a whole file apart (the CIS's supply point order). */
function legacyAccounts(): string {
  const lines = ['ACCOUNT_NO,FUEL,MPXN,SERIAL,NAME'];
  for (const fuel of ['ELEC', 'GAS'])
    for (let index = 0; index < ACCOUNTS; index += 1) {
      const number = String(index).padStart(8, '0');
      const mpxn = fuel === 'ELEC' ? `12${number}001` : `9${number}`;
      lines.push(`${number},${fuel},${mpxn},${fuel[0]}${number}-${'x'.repeat(40)},Name ${index}`);
    }
  return `${lines.join('\n')}\n`;
}

const POINT = "{'fuel': FUEL, 'mpxn': MPXN, 'serial': SERIAL}";

const SHAPES = {
  // The supply points grouped with list(): its states stay in memory, whatever the limit.
  list: `CREATE VIEW accounts AS
SELECT ACCOUNT_NO AS external_account_number, min(NAME) AS billing_name,
  to_json(list(${POINT} ORDER BY FUEL))::VARCHAR AS metadata, min(_file) AS _file, min(_line) AS _line
FROM accounts_file GROUP BY ACCOUNT_NO;
`,
  // Numbered by a window and placed side by side by position: both spill.
  positions: `CREATE VIEW numbered AS
SELECT *, row_number() OVER (PARTITION BY ACCOUNT_NO ORDER BY FUEL, _line) AS point FROM accounts_file;
CREATE VIEW accounts AS
SELECT ACCOUNT_NO AS external_account_number, min(NAME) AS billing_name,
  to_json(list_filter([max(CASE WHEN point = 1 THEN ${POINT} END), max(CASE WHEN point = 2 THEN ${POINT} END)],
                      point -> point IS NOT NULL))::VARCHAR AS metadata,
  min(_file) AS _file, min(_line) AS _line
FROM numbered GROUP BY ACCOUNT_NO;
`,
  // A team's check over the supply points grouped with list(), beside an accounts view that fits.
  checkList: `CREATE VIEW accounts AS
SELECT ACCOUNT_NO AS external_account_number, NAME AS billing_name, _file, _line FROM accounts_file WHERE FUEL = 'ELEC';
CREATE VIEW check_meters AS
SELECT ACCOUNT_NO AS external_account_number, min(_file) AS _file, min(_line) AS _line,
  'meters ' || to_json(list(${POINT}))::VARCHAR AS message
FROM accounts_file GROUP BY ACCOUNT_NO HAVING count(*) > 2;
`,
  // A join that lost its condition: 1.6 billion rows.
  crossJoin: `CREATE VIEW accounts AS
SELECT a.ACCOUNT_NO AS external_account_number, b.NAME AS billing_name, a._file, a._line
FROM accounts_file AS a, accounts_file AS b;
`,
};

let root: string;
let accounts: string;
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'shape-limits-'));
  accounts = legacyAccounts();
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** A legacy export with one of the shapes, and an empty TMPDIR of its own (to see the engine's files go). */
function exportWith(name: keyof typeof SHAPES): { dir: string; temp: string } {
  const dir = mkdtempSync(join(root, `${name}-`));
  const temp = join(dir, 'tmp');
  mkdirSync(temp);
  writeFileSync(join(dir, 'ACCOUNTS.csv'), accounts);
  writeFileSync(join(dir, 'shape.sql'), SHAPES[name]);
  writeFileSync(
    join(dir, 'migrate.config.json'),
    JSON.stringify({
      import_supplier: 'ACME',
      sources: { accounts_file: { file: 'ACCOUNTS.csv' } },
      shape: 'shape.sql',
    }),
  );
  return { dir, temp };
}

describe('the shape engine past its limits', () => {
  it('a list() aggregate that cannot fit in --shape-memory stops with exit 2, the setting and how to raise it', async () => {
    const { dir, temp } = exportWith('list');
    const run = await runMigrate(['shape', dir, '--out', join(root, 'list-out'), '--shape-memory', '32MB'], {
      TMPDIR: temp,
    });
    expect(run.code, run.stderr).toBe(2);
    expect(run.stderr).toContain(
      'migrate: shape.sql:1 (view accounts): the shape engine ran out of memory: it may use 32MB ' +
        '(--shape-memory 32MB). Either give more with --shape-memory 64MB (or shape_memory in the run ' +
        'configuration, or MIGRATE_SHAPE_MEMORY), or write the SQL in the forms that spill to disk instead of holding ' +
        'the whole table in memory: docs/from-a-legacy-system.md "SQL that scales".',
    );
    expect(run.stderr).not.toMatch(/src\/|memory_limit|PRAGMA|\n\s+at /);
    expect(readdirSync(temp)).toEqual([]);
  });

  it("a team's check view that cannot fit stops the same way, named at its view", async () => {
    const { dir, temp } = exportWith('checkList');
    const run = await runMigrate(['validate', dir, '--shape-memory', '32MB'], { TMPDIR: temp });
    expect(run.code, run.stderr).toBe(2);
    expect(run.stderr).toContain(
      'migrate: shape.sql:3 (view check_meters): the shape engine ran out of memory: it may use 32MB ' +
        '(--shape-memory 32MB). Either give more with --shape-memory 64MB (or shape_memory in the run ' +
        'configuration, or MIGRATE_SHAPE_MEMORY), or write the SQL in the forms that spill to disk instead of holding ' +
        'the whole table in memory: docs/from-a-legacy-system.md "SQL that scales".',
    );
    expect(run.stderr).not.toMatch(/src\/|memory_limit|PRAGMA|\n\s+at /);
    expect(readdirSync(temp)).toEqual([]);
  });

  it('says where the value came from: the environment, the run configuration', async () => {
    const { dir } = exportWith('list');
    const env = await runMigrate(['validate', dir], { MIGRATE_SHAPE_MEMORY: '32MB' });
    expect(env.code, env.stderr).toBe(2);
    expect(env.stderr).toContain('it may use 32MB (MIGRATE_SHAPE_MEMORY=32MB)');
    const runConfig = join(root, 'migrate.run.json');
    writeFileSync(runConfig, JSON.stringify({ shape_memory: '32MB' }));
    const file = await runMigrate(['validate', dir, '--run-config', runConfig]);
    expect(file.code, file.stderr).toBe(2);
    expect(file.stderr).toContain('it may use 32MB (shape_memory 32MB in the run configuration)');
  });

  it('the same supply points numbered and placed side by side spill, and shape the same rows in that memory', async () => {
    const { dir: listed } = exportWith('list');
    const { dir: placed } = exportWith('positions');
    const roomy = await runMigrate(['shape', listed, '--out', join(root, 'roomy'), '--shape-memory', '1GB']);
    expect(roomy.code, roomy.stderr).toBe(0);
    const tight = await runMigrate(['shape', placed, '--out', join(root, 'tight'), '--shape-memory', '32MB']);
    expect(tight.code, tight.stderr).toBe(0);
    const rows = (out: string): string => readFileSync(join(root, out, 'accounts.csv'), 'utf8');
    expect(rows('tight').split('\n')).toHaveLength(ACCOUNTS + 2);
    expect(rows('tight')).toBe(rows('roomy'));
  });

  it('a view that grows without end stops at --shape-temp-limit, exit 2, and leaves nothing in TMPDIR', async () => {
    const { dir, temp } = exportWith('crossJoin');
    const run = await runMigrate(
      ['shape', dir, '--out', join(root, 'cross-out'), '--shape-memory', '64MB', '--shape-temp-limit', '50MB'],
      { TMPDIR: temp },
    );
    expect(run.code, run.stderr).toBe(2);
    expect(run.stderr).toContain(
      `migrate: shape.sql:1 (view accounts): the shape engine's temporary files reached their limit of 50MB in ` +
        `${temp} (--shape-temp-limit 50MB). Where that disk has room, give more with --shape-temp-limit 100MB (or ` +
        'shape_temp_limit in the run configuration, or MIGRATE_SHAPE_TEMP_LIMIT); else point TMPDIR at a larger disk.',
    );
    expect(run.stderr).toContain('docs/from-a-legacy-system.md "SQL that scales"');
    expect(readdirSync(temp)).toEqual([]);
  });
});
