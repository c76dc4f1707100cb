import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.js';
import { push, ROOT } from './helpers.js';
import { afterOriginLine } from '../run-origin-line.js';

// A shape whose views keep the legacy key as it is (`SELECT ACCOUNT_NO, ...`) while the mapping file renames it to
// external_account_number, in every view (accounts, customers, supply addresses, and notes under a computed name):
// validate, validate --show, push and `shape --out` read it as they read the views that select
// `AS external_account_number`, and push the same payloads and notes.

const LEGACY = join(ROOT, 'test', 'shape', 'legacy');

let root: string;
let renamed: string;
let sandboxes: RunningSandbox[];

function migrate(args: string[]): { code: number | null; stdout: string; stderr: string } {
  const run = spawnSync(process.execPath, [join(ROOT, 'bin', 'migrate.js'), ...args], {
    cwd: ROOT,
    encoding: 'utf8',
    env: { ...process.env, NO_COLOR: '1' },
  });
  return { code: run.status, stdout: run.stdout, stderr: afterOriginLine(run.stderr) };
}

/** The legacy fixture with every view keyed by a legacy column name that the mapping file renames. */
function withRenamedKeys(dir: string): string {
  cpSync(LEGACY, dir, { recursive: true });
  const shape = readFileSync(join(dir, 'shape.sql'), 'utf8')
    .replaceAll('ACCOUNT_NO AS external_account_number', 'ACCOUNT_NO')
    .replace('ORDER BY external_account_number, holder', 'ORDER BY ACCOUNT_NO, holder')
    .replace(`lpad("Account No", 8, '0') AS external_account_number`, `lpad("Account No", 8, '0') AS NOTE_ACCOUNT`);
  expect(shape).not.toContain('external_account_number');
  writeFileSync(join(dir, 'shape.sql'), shape);
  const config = JSON.parse(readFileSync(join(dir, 'migrate.config.json'), 'utf8')) as {
    mapping: Record<string, Record<string, unknown>>;
  };
  const key = { ACCOUNT_NO: 'external_account_number' };
  config.mapping = {
    accounts: { ...config.mapping['accounts'], rename: key },
    customers: { rename: key },
    supply_addresses: { ...config.mapping['supply_addresses'], rename: key },
    notes: { rename: { NOTE_ACCOUNT: 'external_account_number' } },
  };
  writeFileSync(join(dir, 'migrate.config.json'), JSON.stringify(config, null, 2));
  return dir;
}

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'shape-renamed-key-'));
  renamed = withRenamedKeys(join(root, 'renamed'));
  sandboxes = await Promise.all([0, 1, 2].map(() => startSandbox({ processingMs: 5 })));
});
afterAll(async () => {
  await Promise.all(sandboxes.map((sandbox) => sandbox.close()));
  rmSync(root, { recursive: true, force: true });
});

const held = (sandbox: RunningSandbox) =>
  sandbox.inspect
    .accounts('ACME')
    .map((account) => ({
      number: account.externalAccountNumber,
      payload: account.payload,
      notes: account.notes.map(({ body, createdAt }) => ({ body, createdAt })),
    }))
    .sort((a, b) => a.number.localeCompare(b.number));

describe('a view key renamed by the mapping file', () => {
  it('validates: every live account valid', () => {
    const run = migrate(['validate', renamed, '--json']);
    expect(run.code, run.stderr).toBe(0);
    const report = JSON.parse(run.stdout) as { accounts: { total: number; valid: number } };
    expect(report.accounts).toMatchObject({ total: 3, valid: 3 });
  });

  it('names an error in a non-account view at its legacy line and its account', () => {
    const dir = withRenamedKeys(join(root, 'bad-note'));
    const notes = join(dir, 'CIS_NOTES.csv');
    writeFileSync(notes, readFileSync(notes, 'utf8').replace('"Joint account"', '""'));
    const run = migrate(['validate', dir, '--json']);
    expect(run.code, run.stderr).toBe(5);
    const errors = (JSON.parse(run.stdout) as { errors: Array<Record<string, unknown>> }).errors;
    expect(errors.map((error) => [error['file'], error['line'], error['external_account_number']])).toEqual([
      ['CIS_NOTES.csv', 3, '00001002'],
    ]);
  });

  it('shows the legacy rows and the records of an account (validate --show)', () => {
    const run = migrate(['validate', renamed, '--show', '00001002']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/records the shape made of them:\n {4}CIS_ACCOUNTS_20261126\.csv:4 \(accounts\)/);
    expect(run.stdout).toContain('CIS_NOTES.csv:3 (notes)\n      NOTE_ACCOUNT="00001002"');
    expect(run.stdout).toMatch(/\(customers\)\n {6}ACCOUNT_NO="00001002"[\s\S]*given_name="Bob"/);
    expect(run.stdout).toMatch(/"external_account_number": "00001002"/);
  });

  it('pushes, and the export shape --out writes pushes, the payloads of the views that select the key by name', async () => {
    const [original, direct, viaShaped] = sandboxes as [RunningSandbox, RunningSandbox, RunningSandbox];
    const first = await push(original, LEGACY, join(root, 'state-original'));
    expect(first.code, first.stderr).toBe(0);
    const second = await push(direct, renamed, join(root, 'state-renamed'));
    expect(second.code, second.stderr).toBe(0);
    const out = join(root, 'shaped');
    const shaped = migrate(['shape', renamed, '--out', out]);
    expect(shaped.code, shaped.stderr).toBe(0);
    expect(readFileSync(join(out, 'accounts.csv'), 'utf8').split('\n').slice(0, 2)).toEqual([
      'ACCOUNT_NO,billing_name,billing_email,billing_address.street_address,billing_address.postal_code,' +
        'transfer_balance,_file,_line',
      '00001001,Mr José Núñez,jose@example.org,1 High St,YO1 7HH,-12.5,CIS_ACCOUNTS_20261126.csv,2',
    ]);
    expect(readFileSync(join(out, 'notes.csv'), 'utf8').split('\n')[0]).toBe(
      'NOTE_ACCOUNT,body,created_at,_file,_line',
    );
    const third = await push(viaShaped, out, join(root, 'state-shaped'));
    expect(third.code, third.stderr).toBe(0);
    const sent = held(original);
    expect(sent.map((account) => account.number)).toEqual(['00001001', '00001002', '00001004']);
    expect(sent.flatMap((account) => account.notes)).toHaveLength(2);
    expect(held(direct)).toEqual(sent);
    expect(held(viaShaped)).toEqual(sent);
  });

  it('refuses a view whose key is neither selected nor renamed, before shape --out writes anything', () => {
    const dir = withRenamedKeys(join(root, 'no-rename'));
    const config = JSON.parse(readFileSync(join(dir, 'migrate.config.json'), 'utf8')) as {
      mapping: Record<string, Record<string, unknown>>;
    };
    delete config.mapping['notes'];
    writeFileSync(join(dir, 'migrate.config.json'), JSON.stringify(config));
    const message =
      'migrate: shape.sql: the view notes has no external_account_number column (every record needs it to join its ' +
      'account); select it, or rename a column to it under mapping.notes.rename in the mapping file.';
    const run = migrate(['validate', dir]);
    expect(run.code).toBe(2);
    expect(run.stderr.trim()).toBe(message);
    const out = join(root, 'no-rename-out');
    const shaped = migrate(['shape', dir, '--out', out]);
    expect(shaped.code).toBe(2);
    // After the line that says the shape file runs: the refusal, and nothing else.
    expect(shaped.stderr.trim().split('\n').at(-1)).toBe(message);
    expect(existsSync(out)).toBe(false);
  });
});
