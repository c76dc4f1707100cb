import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.js';
import { push, ROOT } from './helpers.js';
import { afterOriginLine } from '../run-origin-line.js';

// A legacy export shaped by SQL, through the real binary: validate names every problem at the legacy file and line
// (and the legacy column a view passes through), push sends the shaped records, and the shaped export that
// `migrate shape --out` writes pushes to the same payloads.

const LEGACY = join(ROOT, 'test', 'shape', 'legacy');
const ACCOUNTS_FILE = 'CIS_ACCOUNTS_20261126.csv';

let root: string;
let sandboxes: RunningSandbox[];
beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'shape-e2e-'));
  sandboxes = await Promise.all([startSandbox({ processingMs: 5 }), startSandbox({ processingMs: 5 })]);
});
afterAll(async () => {
  await Promise.all(sandboxes.map((sandbox) => sandbox.close()));
  rmSync(root, { recursive: true, force: true });
});

function migrate(args: string[]): { code: number | null; stdout: string; stderr: string } {
  const run = spawnSync(process.execPath, [join(ROOT, 'bin', 'migrate.js'), ...args], {
    cwd: ROOT,
    encoding: 'utf8',
    env: { ...process.env, NO_COLOR: '1' },
  });
  return { code: run.status, stdout: run.stdout, stderr: afterOriginLine(run.stderr) };
}

/** A copy of the legacy fixture with one text replaced in a file (a planted error). */
function legacyWith(name: string, file: string, from: string, to: string): string {
  const dir = join(root, name);
  cpSync(LEGACY, dir, { recursive: true });
  const path = join(dir, file);
  const text = readFileSync(path, 'latin1');
  expect(text).toContain(from);
  writeFileSync(path, text.replace(from, to), 'latin1');
  return dir;
}

interface JsonError {
  file: string;
  line: number;
  column: string | null;
  attr: string | null;
  external_account_number: string;
  code: string;
}

describe('validate of a shaped legacy export', () => {
  it('reads the legacy files through the shape: every live account valid, closed ones left behind', () => {
    const run = migrate(['validate', LEGACY, '--json']);
    expect(run.code, run.stderr).toBe(0);
    const report = JSON.parse(run.stdout) as { accounts: { total: number; valid: number } };
    expect(report.accounts).toMatchObject({ total: 3, valid: 3 });
  });

  it('names a problem at the legacy file and line, and at the legacy column the view passes through', () => {
    const dir = legacyWith('bad-email', ACCOUNTS_FILE, 'eve@example.org', 'eve@@example');
    const run = migrate(['validate', dir, '--json']);
    expect(run.code, run.stderr).toBe(5);
    const errors = (JSON.parse(run.stdout) as { errors: JsonError[] }).errors;
    // The accounts view passes EMAIL_1 through; the customers view unions two holders' columns, so names none.
    expect(errors.map((error) => [error.file, error.line, error.column, error.attr, error.code])).toEqual([
      [ACCOUNTS_FILE, 7, null, 'customers.0.email', 'invalid_email'],
      [ACCOUNTS_FILE, 7, 'EMAIL_1', 'billing_email', 'invalid_email'],
    ]);
  });

  it('names a value the view computes at its legacy line and field, with no column', () => {
    const dir = legacyWith('bad-phone', ACCOUNTS_FILE, '07911 123402', '07911 12');
    const run = migrate(['validate', dir, '--errors-csv', join(root, 'bad-phone.csv')]);
    expect(run.code, run.stderr).toBe(5);
    const rows = parse(readFileSync(join(root, 'bad-phone.csv'), 'utf8'), { columns: true }) as Array<
      Record<string, string>
    >;
    expect(rows.map((row) => [row['file'], row['line'], row['column'], row['attr']])).toEqual([
      [ACCOUNTS_FILE, '4', '', 'customers.0.mobile'],
    ]);
  });

  it('reports two rows of the accounts view with one number at both legacy lines', () => {
    // Without its one-row-per-account rule, the accounts view has a dual-fuel account twice.
    const once = 'QUALIFY row_number() OVER (PARTITION BY ACCOUNT_NO ORDER BY _line) = 1;';
    const dir = legacyWith('twice', 'shape.sql', once, ';');
    const run = migrate(['validate', dir]);
    expect(run.code, run.stderr).toBe(5);
    expect(run.stdout).toMatch(
      /CIS_ACCOUNTS_20261126\.csv:3 ACCOUNT_NO {2}duplicate_external_account_number {2}external_account_number 00001001 is already on line 2/,
    );
  });

  it('refuses a shape file that reads outside its tables (exit 2, at its line)', () => {
    const dir = legacyWith('outside', 'shape.sql', 'FROM cis_notes AS n', "FROM read_csv('/etc/passwd') AS n");
    const run = migrate(['validate', dir]);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/^migrate: shape\.sql:\d+:\d+: refused: a shape file may only build views/);
    expect(run.stderr).not.toMatch(/\n\s+at /);
  });

  it('refuses an accounts view without rows, unless --allow-no-accounts', () => {
    const dir = legacyWith(
      'no-accounts',
      'shape.sql',
      "WHERE STATUS = 'LIVE'\nQUALIFY",
      "WHERE STATUS = 'Live'\nQUALIFY",
    );
    const run = migrate(['validate', dir]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('migrate: shape.sql: its accounts view holds no row');
    const allowed = migrate(['validate', dir, '--allow-no-accounts']);
    expect(allowed.stderr).not.toContain('holds no row');
    expect(allowed.code).toBe(5);
  });

  it('refuses a view with a column that is no field of its kind', () => {
    const dir = legacyWith('undocumented', 'shape.sql', 'EMAIL_1 AS billing_email', 'EMAIL_1 AS billing_mail');
    const run = migrate(['validate', dir]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(
      'the view accounts has columns that are not documented fields of accounts: billing_mail.',
    );
  });
});

describe('validate --show', () => {
  it('prints the legacy rows, the shaped records and the requests push would send, terminal-safe', () => {
    const dir = legacyWith('show', ACCOUNTS_FILE, '"Eve"', '"E\u001b[31mve"');
    const run = migrate(['validate', dir, '--show', '00001001,00001004']);
    expect(run.code, run.stderr).toBe(0);
    const [first, second] = run.stdout.split(/\nAccount /).slice(1) as [string, string];
    // The legacy row as the file holds it (+1250: the customer owes), the shaped record, and the payload's sign.
    expect(first).toContain(`${ACCOUNTS_FILE}:2 (cis_accounts)\n      ACCOUNT_NO="00001001"`);
    expect(first).toContain('BALANCE_PENCE="1250"');
    expect(first).toMatch(/records the shape made of them:\n {4}CIS_ACCOUNTS_20261126\.csv:2 \(accounts\)/);
    expect(first).toMatch(
      /POST \/v2\/data-import\/accounts\/\n {6}\{\n {8}"payload": \{[\s\S]*"transfer_balance": -12\.5,/,
    );
    expect(first).toMatch(/POST \/v1\/data-import\/notes\/create\/[\s\S]*"created_at": "2026-03-26T10:00:00Z"/);
    // A control character in the legacy data is shown escaped, never sent raw to the terminal.
    expect(second).toContain('FORENAME_1="E\\u001b[31mve"');
    expect(run.stdout).not.toContain('\u001b');
  });

  it("works for an export in the tool's own layout", () => {
    const run = migrate(['validate', join(ROOT, 'fixtures', 'legacy'), '--show', 'LEG001']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/accounts\.csv:2 \(accounts\)\n {6}AccountRef="LEG001"[\s\S]*BalancePence="-2550"/);
    expect(run.stdout).toMatch(/"transfer_balance": -25\.5/);
  });
});

describe('push of a shaped legacy export, and of the export migrate shape writes', () => {
  it('sends the same payloads and records from both', async () => {
    const [direct, viaShaped] = sandboxes as [RunningSandbox, RunningSandbox];
    const first = await push(direct, LEGACY, join(root, 'state-direct'));
    expect(first.code, first.stderr).toBe(0);
    const out = join(root, 'shaped');
    const shaped = migrate(['shape', LEGACY, '--out', out]);
    expect(shaped.code, shaped.stderr).toBe(0);
    expect(readFileSync(join(out, 'accounts.csv'), 'utf8').split('\n')[0]).toBe(
      'external_account_number,billing_name,billing_email,billing_address.street_address,billing_address.postal_code,' +
        'transfer_balance,_file,_line',
    );
    const second = await push(viaShaped, out, join(root, 'state-shaped'));
    expect(second.code, second.stderr).toBe(0);
    const held = (sandbox: RunningSandbox) =>
      sandbox.inspect
        .accounts('ACME')
        .map((account) => ({
          number: account.externalAccountNumber,
          payload: account.payload,
          notes: account.notes.map(({ body, createdAt }) => ({ body, createdAt })),
        }))
        .sort((a, b) => a.number.localeCompare(b.number));
    const sent = held(direct);
    expect(sent.map((account) => account.number)).toEqual(['00001001', '00001002', '00001004']);
    expect(held(viaShaped)).toEqual(sent);
    // The legacy sign inverted (+ means the customer owes), joint holders as two customers, stripped zeros repaired.
    const joint = sent[1]?.payload as { transfer_balance: number; customers: Array<{ given_name: string }> };
    expect(joint.transfer_balance).toBe(3);
    expect(joint.customers.map((customer) => customer.given_name)).toEqual(['Ann', 'Bob']);
    expect((sent[0]?.payload as { transfer_balance: number }).transfer_balance).toBe(-12.5);
    expect(sent[0]?.notes).toEqual([{ body: 'Prefers letters; "no calls"', createdAt: '2026-03-26T10:00:00Z' }]);
  });

  it("names a record the service refuses at its legacy line in the ledger's fix-data.csv", async () => {
    // Without its filter, the notes view lets through a note of the closed account, which exists nowhere.
    const live = "WHERE lpad(\"Account No\", 8, '0') IN (SELECT ACCOUNT_NO FROM cis_accounts WHERE STATUS = 'LIVE')";
    const dir = legacyWith('closed-note', 'shape.sql', live, '');
    const state = join(root, 'state-closed-note');
    const run = await push(sandboxes[0] as RunningSandbox, dir, state);
    expect(run.code, run.stderr).toBe(5);
    const out = join(root, 'closed-note-report');
    const report = migrate(['report', '--state', state, '--out', out]);
    expect(report.code, report.stderr).toBe(0);
    const rows = parse(readFileSync(join(out, 'fix-data.csv'), 'utf8'), { columns: true }) as Array<
      Record<string, string>
    >;
    expect(rows.map((row) => [row['external_account_number'], row['file'], row['line'], row['code']])).toEqual([
      ['00001003', 'CIS_NOTES.csv', '4', 'account_not_found'],
    ]);
  });

  it('refuses an --out inside the export directory, or one that is not empty', () => {
    const inside = migrate(['shape', LEGACY, '--out', join(LEGACY, 'shaped')]);
    expect(inside.code).toBe(2);
    expect(inside.stderr).toContain('is inside the export directory');
    const full = join(root, 'full');
    cpSync(LEGACY, full, { recursive: true });
    const notEmpty = migrate(['shape', LEGACY, '--out', full]);
    expect(notEmpty.code).toBe(2);
    expect(notEmpty.stderr).toContain('is not empty');
  });
});
