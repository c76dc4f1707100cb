import Database from 'better-sqlite3';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadMigrateConfig } from '../../src/config/index.js';
import { InputError } from '../../src/errors.js';
import { openExportInOrder } from '../../src/intake/export-in-order.js';
import {
  openExport,
  type ExportEntry,
  type ExportReader,
  type JoinMode,
  type SourceIssue,
} from '../../src/intake/index.js';
import { compareKeys } from '../../src/sources/key-order.js';
import { jsonReport, textReport } from '../../src/commands/validate/validation-report.js';
import { validateExport, type ExportValidation } from '../../src/intake/validate-export.js';

// The streaming join (files sorted by external account number, no scratch file) must give
// exactly what the scratch join gives, and must stop, never guess, at a record out of order.

const base = mkdtempSync(path.join(os.tmpdir(), 'migrate-stream-test-'));
afterAll(() => rmSync(base, { recursive: true, force: true }));

function exportDir(files: Record<string, string>): string {
  const dir = mkdtempSync(path.join(base, 'export-'));
  for (const [name, content] of Object.entries(files)) writeFileSync(path.join(dir, name), content);
  return dir;
}

async function all<T>(items: AsyncIterable<T>): Promise<T[]> {
  const list: T[] = [];
  for await (const item of items) list.push(item);
  return list;
}

async function readAll(
  dir: string,
  join: JoinMode,
  scratchDir?: string,
): Promise<{ entries: ExportEntry[]; reader: ExportReader; fileIssues: SourceIssue[] }> {
  const config = await loadMigrateConfig({ cwd: dir, exportDir: dir, env: { MIGRATE_SUPPLIER: 'ACME' } });
  const reader = await openExport(dir, config, { join, today: '2026-11-22', ...(scratchDir ? { scratchDir } : {}) });
  try {
    const entries = await all(reader.entries());
    return { entries, reader, fileIssues: await all(reader.fileIssues) };
  } finally {
    await reader.close();
  }
}

/** What a validation puts in its reports, read back from the report generators. */
async function reports(validation: ExportValidation): Promise<{ json: { errors: unknown[] }; text: string }> {
  return {
    json: JSON.parse((await all(jsonReport(validation))).join('')) as { errors: unknown[] },
    text: (await all(textReport(validation))).join(''),
  };
}

const ACCOUNTS =
  'external_account_number,account_type,billing_address.country,account_billing_options.period_length,colour\n';
const CUSTOMERS = 'external_account_number,given_name,family_name,mobile\n';
const NOTES = 'external_account_number,body\n';

/** Sorted files with every file-level problem the join reports: unknown column, no key, duplicate account, customer without account, orphan notes, JSON keys. */
const SORTED = {
  'accounts.csv': `${ACCOUNTS}A1,DOMESTIC,GB,MONTHLY,red\nA2,DOMESTIC,GB,MONTHLY,\nA2,BUSINESS,GB,MONTHLY,\n,DOMESTIC,GB,MONTHLY,\nA4,DOMESTIC,GB,MONTHLY,\n`,
  'customers.csv': `${CUSTOMERS}A1,Ada,One,+447911123456\nA1,Bob,One,07911\nA3,Cy,Three,\nA4,Di,Four,\n`,
  'notes.csv': `${NOTES}A0,before every account\nA1,first\nA1,second\n,no key\nA3,orphan\nA9,after every account\n`,
  'transactions.ndjson':
    '{"external_account_number":"A1","transaction_id":"T1","transaction_date":"2026-11-01","amount":5,"type":"CHARGE","size":"L"}\n{"external_account_number":"A4","transaction_id":"T1","transaction_date":"2026-11-01","amount":5,"type":"CHARGE"}\n',
};

describe('streaming join', () => {
  it("gives exactly the scratch join's entries, summary and file issues on sorted files, without a scratch file", async () => {
    const dir = exportDir(SORTED);
    const staged = await readAll(dir, 'scratch');
    const scratchDir = mkdtempSync(path.join(base, 'scratch-'));
    const streamed = await readAll(dir, 'streaming', scratchDir);
    expect(readdirSync(scratchDir)).toEqual([]);
    expect(streamed.entries).toEqual(staged.entries);
    expect(streamed.reader.summary).toEqual(staged.reader.summary);
    expect(streamed.fileIssues).toEqual(staged.fileIssues);
    // The case covers what it claims to cover.
    expect(
      streamed.entries.map((entry) =>
        entry.kind === 'account' ? entry.account.externalAccountNumber : `orphan ${entry.items.externalAccountNumber}`,
      ),
    ).toEqual(['orphan A0', 'A1', 'A2', 'orphan A3', 'A4', 'orphan A9']);
    expect(streamed.fileIssues.map((issue) => [issue.file, issue.line, issue.code])).toEqual([
      ['accounts.csv', 1, 'unknown_column'],
      ['accounts.csv', 5, 'missing_external_account_number'],
      ['customers.csv', 4, 'account_not_in_accounts_file'],
      ['notes.csv', 5, 'missing_external_account_number'],
      ['transactions.ndjson', 1, 'unknown_column'],
    ]);
    expect(streamed.reader.summary).toMatchObject({
      accounts: 3,
      orphanAccounts: 3,
      records: { accounts: 4, customers: 3, notes: 5, transactions: 2 },
    });
  });

  it('stops at a record out of order (a file that changed after its order was proven), naming the file, line and keys', async () => {
    const dir = exportDir({ ...SORTED, 'customers.csv': `${CUSTOMERS}A1,Ada,One,\nA4,Di,Four,\nA1,Bob,One,\n` });
    const error = await readAll(dir, 'streaming').catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(InputError);
    expect(error).toMatchObject({ file: 'customers.csv', line: 4, code: 'input_changed_while_read' });
    expect((error as Error).message).toContain('external_account_number A1 comes after A4');
  });

  it('can be left part way and closed', async () => {
    const dir = exportDir(SORTED);
    const config = await loadMigrateConfig({ cwd: dir, exportDir: dir, env: { MIGRATE_SUPPLIER: 'ACME' } });
    const reader = await openExport(dir, config, { join: 'streaming' });
    for await (const entry of reader.entries()) if (entry.kind === 'account') break;
    await reader.close();
    await expect(async () => {
      for await (const entry of reader.entries()) void entry;
    }).rejects.toThrow('read once');
  });

  it('orders keys as SQLite does (UTF-8 bytes), including characters above U+FFFF', () => {
    const alphabet = ['A', 'a', '0', '-', 'é', '\u00ff', '\u0100', '\ue000', '\uffff', '\u{10000}', '\u{1f600}'];
    let seed = 7;
    const random = (): number => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const keys = Array.from({ length: 2000 }, () =>
      Array.from({ length: 1 + Math.floor(random() * 4) }, () => alphabet[Math.floor(random() * alphabet.length)]).join(
        '',
      ),
    );
    const db = new Database(':memory:');
    db.exec('CREATE TABLE k (key TEXT)');
    const insert = db.prepare('INSERT INTO k VALUES (?)');
    for (const key of keys) insert.run(key);
    const bySqlite = db.prepare('SELECT key FROM k ORDER BY key').pluck().all();
    db.close();
    expect([...keys].sort(compareKeys)).toEqual(bySqlite);
    expect([...keys].sort()).not.toEqual(bySqlite); // plain UTF-16 order differs: the case is real
  });
});

describe('validate: an export read in proven order', () => {
  const validate = async (dir: string, env: NodeJS.ProcessEnv): Promise<ExportValidation> => {
    const reader = await openExportInOrder(dir, await loadMigrateConfig({ cwd: dir, exportDir: dir, env }), {
      today: '2026-11-22',
    });
    try {
      return await validateExport(reader);
    } finally {
      await reader.close();
    }
  };

  it('sorts the files not in order before reading, with the same result as the scratch join and a note saying why', async () => {
    // Every file of SORTED but the JSON one (an export with a JSON file is staged whole), two of them scattered.
    const dir = exportDir({
      'accounts.csv': SORTED['accounts.csv'],
      'customers.csv': `${CUSTOMERS}A4,Di,Four,\nA1,Ada,One,+447911123456\nA3,Cy,Three,\nA1,Bob,One,07911\n`,
      'notes.csv': `${NOTES}A9,after every account\nA1,first\nA0,before every account\n,no key\nA1,second\nA3,orphan\n`,
    });
    const result = await validate(dir, { MIGRATE_SUPPLIER: 'ACME' });
    const config = await loadMigrateConfig({ cwd: dir, exportDir: dir, env: { MIGRATE_SUPPLIER: 'ACME' } });
    const staged = await openExport(dir, config, { today: '2026-11-22' });
    const expected = await validateExport(staged);
    await staged.close();
    expect(result.sorted).toEqual([
      { file: 'customers.csv', order: 'unsorted', line: 3, key: 'A1', previousKey: 'A4' },
      { file: 'notes.csv', order: 'unsorted', line: 3, key: 'A1', previousKey: 'A9' },
    ]);
    const [got, want] = [await reports(result), await reports(expected)];
    expect(got.json).toEqual(want.json);
    expect(got.text).toContain(
      'Sorted before reading: customers.csv (out of order at line 3), notes.csv (out of order at line 3): not ' +
        'in external_account_number order.',
    );
    expect(got.text.replace(/^Sorted before reading: .*\n/m, '')).toEqual(want.text);
    expect(got.json.errors.length).toBeGreaterThan(3);
  });

  it.each([
    [
      'validate',
      async (reader: ExportReader, onEntry: () => void) => (await validateExport(reader, { onEntry })).close(),
    ],
    [
      'a bare read of the entries, as push staging does',
      async (reader: ExportReader, onEntry: () => void) => {
        for await (const entry of reader.entries()) {
          void entry;
          onEntry();
        }
      },
    ],
  ])(
    'lets the event loop turn while it joins accounts whose records are all at hand (timers, signals, the progress bar): %s',
    async (_, consume) => {
      const numbers = Array.from({ length: 1000 }, (_, index) => `A${String(index).padStart(4, '0')}`);
      const dir = exportDir({
        'accounts.csv': `${ACCOUNTS}${numbers.map((key) => `${key},DOMESTIC,GB,MONTHLY,\n`).join('')}`,
      });
      const config = await loadMigrateConfig({ cwd: dir, exportDir: dir, env: { MIGRATE_SUPPLIER: 'ACME' } });
      // The scratch join reads its accounts back from SQLite synchronously: without turns, no
      // setImmediate callback runs between the first and the last account.
      const reader = await openExport(dir, config, { join: 'scratch', today: '2026-11-22' });
      let turns = 0;
      let entries = 0;
      let turnsAtLast = 0;
      let spinning = true;
      const spin = (): void => {
        turns += 1;
        if (spinning) setImmediate(spin);
      };
      try {
        await consume(reader, () => {
          entries += 1;
          if (entries === 1) setImmediate(spin);
          turnsAtLast = turns;
        });
      } finally {
        spinning = false;
        await reader.close();
      }
      expect(entries).toBe(1000);
      expect(turnsAtLast).toBeGreaterThanOrEqual(3);
    },
  );

  it('reads a sorted export once, with the same result as the scratch join', async () => {
    const dir = exportDir(SORTED);
    const result = await validate(dir, { MIGRATE_SUPPLIER: 'ACME' });
    const config = await loadMigrateConfig({ cwd: dir, exportDir: dir, env: { MIGRATE_SUPPLIER: 'ACME' } });
    const staged = await openExport(dir, config, { today: '2026-11-22' });
    const expected = await validateExport(staged);
    await staged.close();
    expect(result.sorted).toEqual([]);
    expect(await reports(result)).toEqual(await reports(expected));
    expect(result.accounts).toEqual(expected.accounts);
    expect(result.errors.first(5).map((issue) => issue.code)).toEqual([
      'unknown_column',
      'missing_external_account_number',
      'account_not_in_accounts_file',
      'missing_external_account_number',
      'unknown_column',
    ]);
  });
});
