import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { build, cleanup, exportDir, migrate } from '../cli/validate-helpers.js';

// Hostile exports (docs/limits.md): each ends with exit 2 and one sentence naming the file and
// line, never an internal error; for validate and push, with the CSV parsing thread and without.

const HEADER = 'external_account_number,account_type,billing_address.country,account_billing_options.period_length';
const ACCOUNTS = `${HEADER}\nA-1,DOMESTIC,GB,MONTHLY\nA-2,DOMESTIC,GB,MONTHLY\n`;
const big = (chars: number): string => 'x'.repeat(chars);

let state: string;
beforeAll(() => {
  build();
  state = mkdtempSync(path.join(os.tmpdir(), 'migrate-hostile-state-'));
});
afterAll(() => {
  cleanup();
  rmSync(state, { recursive: true, force: true });
});

const paths = [
  { name: 'the CSV parsing thread', env: { MIGRATE_SUPPLIER: 'ACME' } },
  { name: 'MIGRATE_CSV_THREAD=0', env: { MIGRATE_SUPPLIER: 'ACME', MIGRATE_CSV_THREAD: '0' } },
];

/** validate and push (which must stop before sending anything: the service URL is unreachable). */
function expectRefused(dir: string, env: NodeJS.ProcessEnv, message: RegExp): void {
  const runs = [
    migrate(['validate', dir], { env }),
    migrate(['push', dir, '--state', path.join(state, path.basename(dir)), '--base-url', 'http://127.0.0.1:9'], {
      env: { ...env, MIGRATE_API_KEY: 'sandbox-api-key' },
    }),
  ];
  for (const result of runs) {
    expect(result.stderr).not.toMatch(/internal error|\n\s+at /);
    expect(result.stderr).toMatch(message);
    expect(result.code).toBe(2);
  }
}

describe.each(paths)('hostile input, $name', ({ env }) => {
  it('a field larger than the record limit (notes.csv, out of order so that it is sorted too)', () => {
    const dir = exportDir({
      'accounts.csv': ACCOUNTS,
      'notes.csv': `external_account_number,body\nA-2,hello\nA-1,"${big(6_000_000)}"\nA-1,bye\n`,
    });
    expectRefused(dir, env, /^migrate: notes\.csv:3: .*longer than the limit of 4 MiB per record/m);
  });

  it('a JSON value and an NDJSON line larger than the record limit', () => {
    const record = `{"external_account_number":"A-1","account_type":"DOMESTIC","metadata":"${big(6_000_000)}"}`;
    expectRefused(
      exportDir({ 'accounts.json': `[\n{"external_account_number":"A-0"},\n${record}]` }),
      env,
      /^migrate: accounts\.json:3: record 2 is longer than the limit of 4 MiB per record/m,
    );
    expectRefused(
      exportDir({
        'accounts.csv': ACCOUNTS,
        'notes.ndjson': `{"external_account_number":"A-1","body":"x"}\n${record}\n`,
      }),
      env,
      /^migrate: notes\.ndjson:2: line 2 is longer than the limit of 4 MiB per record/m,
    );
  });

  it('a ";" or tab delimited header: the message says how to set the delimiter', () => {
    expectRefused(
      exportDir({ 'accounts.csv': ACCOUNTS.replaceAll(',', ';') }),
      env,
      /accounts\.csv:1: its header is separated by ";", not by ","; set the delimiter in the mapping file .*\{"mapping": \{"accounts": \{"delimiter": ";"\}\}\}/,
    );
    expectRefused(
      exportDir({ 'accounts.csv': ACCOUNTS.replaceAll(',', '\t') }),
      env,
      /accounts\.csv:1: its header is separated by tabs, .*"delimiter": "\\t"/,
    );
  });

  it('UTF-16 without a byte-order mark is refused with a message naming UTF-16', () => {
    expectRefused(
      exportDir({ 'accounts.csv': Buffer.from(ACCOUNTS, 'utf16le') }),
      env,
      /accounts\.csv:1: looks like UTF-16 text without a byte-order mark/,
    );
  });

  it('UTF-16 with a byte-order mark, little and big endian, CSV and JSON, is read', () => {
    const le = (text: string): Buffer => Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')]);
    const be = (text: string): Buffer =>
      Buffer.concat([Buffer.from([0xfe, 0xff]), Buffer.from(text, 'utf16le').swap16()]);
    const notes = 'external_account_number,body\nA-1,Café crème, déjà vu\n'.replace(
      'Café crème, déjà vu',
      '"Café crème, déjà vu"',
    );
    for (const encode of [le, be]) {
      const dir = exportDir({
        'accounts.csv': encode(ACCOUNTS),
        'notes.csv': encode(notes),
        'transactions.ndjson': encode('{"external_account_number":"A-2","transaction_id":"T-1"}\n'),
      });
      const result = migrate(['validate', dir, '--json'], { env });
      const report = JSON.parse(result.stdout) as { accounts: { total: number }; errors: Array<{ code: string }> };
      expect(report.accounts.total).toBe(2);
      // The transaction lacks its required fields: the file was decoded and its record read.
      expect(report.errors.map((error) => error.code)).not.toContain('unknown_column');
      expect(report.errors.length).toBeGreaterThan(0);
      expect(result.stderr).toBe('');
    }
  });
});

describe('200,000 unknown columns', () => {
  it('give ten problems and one grouped problem, for CSV and NDJSON', () => {
    // Read in one linear pass: a reading quadratic in the columns would take many minutes and meet the test's time-out
    // (no duration is asserted: the machine's speed decides nothing).
    const columns = Array.from({ length: 200_000 }, (_, n) => `c${n}`);
    const row = `A-1,DOMESTIC,GB,MONTHLY,${columns.map(() => '').join(',')}`;
    const wide = { external_account_number: 'A-1', ...Object.fromEntries(columns.map((column) => [column, 1])) };
    const exports: Array<Record<string, string>> = [
      { 'accounts.csv': `${HEADER},${columns.join(',')}\n${row}\n` },
      { 'accounts.csv': ACCOUNTS, 'notes.ndjson': `${JSON.stringify(wide)}\n` },
    ];
    for (const files of exports) {
      const result = migrate(['validate', exportDir(files), '--json'], { env: { MIGRATE_SUPPLIER: 'ACME' } });
      const errors = (JSON.parse(result.stdout) as { errors: Array<{ code: string; message: string }> }).errors;
      const unknown = errors.filter((error) => error.code === 'unknown_column');
      expect(unknown).toHaveLength(11);
      expect(unknown[10]?.message).toMatch(
        /^199990 more columns are not documented columns of \w+ files \("c10", "c11"/,
      );
      expect(result.code).toBe(5);
    }
  });
});
