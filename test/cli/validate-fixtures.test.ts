import { parse } from 'csv-parse/sync';
import { readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { ErrorRow } from '../../src/commands/validate/validation-report.js';
import { build, migrate, root } from './validate-helpers.js';

// The real binary against the three fixture exports.

const fixture = (name: string): string => path.join(root, 'fixtures', name);
const key = (row: Omit<ErrorRow, 'message'>): string =>
  JSON.stringify([row.file, row.line, row.column, row.attr, row.external_account_number, row.code]);

beforeAll(build);

describe('migrate validate on the fixtures', () => {
  it('passes fixtures/sample clean: exit 0, every account valid', () => {
    const result = migrate(['validate', fixture('sample'), '--json']);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({
      // No run configuration here, and validate without --remote asks no service.
      run_config: null,
      service_url: null,
      ok: true,
      accounts: { total: 50, valid: 50, invalid: 0 },
      duplicate_notes: 0,
      files: expect.any(Array) as unknown,
      links: [],
      not_read: [],
      // An export in the tool's own layout is its own sources: every row of fixtures/sample reaches a record.
      control_totals: expect.objectContaining({ unused_rows: { count: 0, first: [] } }) as unknown,
      errors: [],
    });
  });

  it('passes fixtures/legacy clean with its mapping file (found in the export directory)', () => {
    const result = migrate(['validate', fixture('legacy')]);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('8 account(s): 8 valid, 0 invalid; 0 error(s).');
    expect(result.stdout).toContain(`with mapping ${path.join(fixture('legacy'), 'migrate.config.json')}`);
  });

  it('refuses fixtures/legacy without its mapping file: its windows-1252 accounts file is not UTF-8 (exit 2)', () => {
    const empty = path.join(os.tmpdir(), `migrate-empty-config-${process.pid}.json`);
    writeFileSync(empty, '{}');
    try {
      const result = migrate(['validate', fixture('legacy'), '--config', empty]);
      expect(result.code).toBe(2);
      expect(result.stderr).toBe(
        'migrate: accounts.csv:2: is not valid utf8 text. If the export uses another encoding (latin1, windows-1252), set "encoding" in the mapping file.\n',
      );
    } finally {
      rmSync(empty, { force: true });
    }
  });

  it('reports exactly the planted errors of fixtures/invalid: file, line, column, attr, account and code', () => {
    const result = migrate(['validate', fixture('invalid'), '--json']);
    expect(result.code).toBe(5);
    const report = JSON.parse(result.stdout) as {
      ok: boolean;
      accounts: { total: number; valid: number; invalid: number };
      errors: ErrorRow[];
    };
    const expected = (
      JSON.parse(readFileSync(path.join(fixture('invalid'), 'expectations.json'), 'utf8')) as { errors: ErrorRow[] }
    ).errors;
    expect(report.ok).toBe(false);
    expect(report.errors.map(key).sort()).toEqual(expected.map(key).sort());
    for (const error of report.errors) expect(error.message.length).toBeGreaterThan(10);
    const accounts = new Set(
      readFileSync(path.join(fixture('invalid'), 'accounts.csv'), 'utf8')
        .split('\n')
        .slice(1)
        .filter(Boolean)
        .map((line) => line.split(',')[0]),
    );
    const invalid = new Set(
      expected
        .map((error) => error.external_account_number)
        .filter((number): number is string => number !== null && accounts.has(number)),
    );
    expect(report.accounts).toEqual({
      total: accounts.size,
      valid: accounts.size - invalid.size,
      invalid: invalid.size,
    });
  });

  it('prints a readable report grouped by account, with counts per code', () => {
    const result = migrate(['validate', fixture('invalid')]);
    expect(result.code).toBe(5);
    expect(result.stdout).toContain(
      'Account INV-PHONE:\n  customers.csv:3 mobile (customers.0.mobile)  invalid_phone_number  abcde is not a valid phone number',
    );
    expect(result.stdout).toContain('Export files:\n  accounts.csv:1 legacy_flag  unknown_column');
    // Every file-level problem under one heading, those of an account too (its message names it).
    expect(result.stdout.match(/^Export files:$/gm)).toHaveLength(1);
    expect(result.stdout).toMatch(
      /^Export files:\n( {2}.*\n)* {2}customers\.csv:11 external_account_number {2}account_not_in_accounts_file {2}account INV-GHOST is not/m,
    );
    expect(result.stdout).toMatch(
      /1 post-import record\(s\) for 1 account\(s\) not in this export \(INV-LATER\): allowed/,
    );
    expect(result.stdout).toMatch(/\n\s+2 {2}account_not_in_accounts_file\n/);
    expect(result.stdout).toContain('NOT OK');
  });

  it('writes --errors-csv with the same rows as --json, readable by its owner only', () => {
    const file = path.join(os.tmpdir(), `migrate-errors-${process.pid}.csv`);
    try {
      const result = migrate(['validate', fixture('invalid'), '--json', '--errors-csv', file]);
      expect(result.code).toBe(5);
      expect(statSync(file).mode & 0o777).toBe(0o600);
      const rows = parse(readFileSync(file), { columns: true }) as Array<Record<string, string>>;
      const json = (JSON.parse(result.stdout) as { errors: ErrorRow[] }).errors;
      expect(
        rows.map((row) => ({
          ...row,
          line: Number(row['line']),
          column: row['column'] || null,
          attr: row['attr'] || null,
          external_account_number: row['external_account_number'] || null,
        })),
      ).toEqual(json);
    } finally {
      rmSync(file, { force: true });
    }
  });
});
