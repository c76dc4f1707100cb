import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadMigrateConfig } from '../../src/config/index.js';
import { InputError } from '../../src/errors.js';
import { openExport, type ExportEntry, type JoinMode, type SourceIssue } from '../../src/intake/index.js';
import type { KeyedRecord, OpenedFile } from '../../src/intake/read-export.js';
import type { FilePlan } from '../../src/mapping/record.js';
import { decodeRecord, encodeRecord, sortedFile } from '../../src/intake/sort-file.js';
import { compareKeys } from '../../src/sources/key-order.js';
import { findExportFiles } from '../../src/sources/index.js';
import { proveOrder } from '../../src/intake/order-proof.js';

// The external sort that lets the streaming join read unsorted files (sort-file.ts): the same
// records, in compareKeys order and file order within a key, however many runs, whatever the
// cells hold; nothing left on disk.

const base = mkdtempSync(path.join(os.tmpdir(), 'migrate-sort-test-'));
afterAll(() => rmSync(base, { recursive: true, force: true }));

let seed = 11;
const random = (): number => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
const pick = <T>(items: T[]): T => items[Math.floor(random() * items.length)] as T;

/** Records with awkward keys (above U+FFFF, U+E000-U+FFFF, control characters) and cells (separators, newlines, multi-byte text), some as JSON objects. */
function records(count: number): KeyedRecord[] {
  const keyParts = ['A', 'a', '0', '-', 'é', '\ue000', '\u{1f600}', '\u0001', '\u001f', ' '];
  const cells = [
    '',
    'plain',
    'two\nlines',
    'unit\u001fsep',
    'record\u001esep',
    'group\u001dsep',
    'ünïcødé',
    '€100',
    '"quoted"',
    'x'.repeat(300),
  ];
  return Array.from({ length: count }, (_, index) => {
    const key = Array.from({ length: 1 + Math.floor(random() * 3) }, () => pick(keyParts)).join('');
    const data =
      random() < 0.1
        ? { external_account_number: key, body: pick(cells), n: index }
        : Array.from({ length: 1 + Math.floor(random() * 4) }, () => pick(cells));
    return { key, line: index + 2, data };
  });
}

function sourceOf(list: KeyedRecord[], batch = 37): OpenedFile & { closed: boolean } {
  const file = {
    closed: false,
    plan: {} as FilePlan,
    records: (async function* () {
      for (let start = 0; start < list.length; start += batch) yield list.slice(start, start + batch);
    })(),
    close: async () => {
      file.closed = true;
      await file.records.return(undefined);
    },
  };
  return file;
}

async function drain(file: OpenedFile): Promise<KeyedRecord[]> {
  const out: KeyedRecord[] = [];
  for await (const batch of file.records) out.push(...batch);
  return out;
}

/** What the sort must give: compareKeys order, file order within a key (Array.prototype.sort is stable). */
const expected = (list: KeyedRecord[]): KeyedRecord[] => [...list].sort((a, b) => compareKeys(a.key, b.key));

describe('sortedFile', () => {
  it('encodes and decodes every record exactly', () => {
    for (const record of records(2000)) expect(decodeRecord(encodeRecord(record).text)).toEqual(record);
  });

  it('sorts in memory when the file fits in one run, and touches no disk', async () => {
    const list = records(500);
    const scratchDir = mkdtempSync(path.join(base, 'scratch-'));
    const file = sortedFile(sourceOf(list), scratchDir);
    expect(await drain(file)).toEqual(expected(list));
    await file.close();
    expect(readdirSync(scratchDir)).toEqual([]);
  });

  it.each([
    [
      'plain keys',
      8000,
      (list: KeyedRecord[]) =>
        list.map((record) => ({ ...record, key: `ACC-${record.key.codePointAt(0)}-${record.line % 97}` })),
    ],
    ['awkward keys', 8000, (list: KeyedRecord[]) => list],
    ['records larger than a run', 600, (list: KeyedRecord[]) => list],
  ])(
    'merges many runs from the scratch file into the same order (%s), leaving nothing behind',
    async (_, runBytes, keys) => {
      const list = keys(records(3000));
      const scratchDir = mkdtempSync(path.join(base, 'scratch-'));
      const file = sortedFile(sourceOf(list), scratchDir, runBytes);
      const sorted = await drain(file);
      expect(sorted).toEqual(expected(list));
      expect(sorted.length).toBe(3000);
      await file.close();
      expect(readdirSync(scratchDir)).toEqual([]);
    },
  );

  it('can be closed while it is still reading, and closes its source', async () => {
    const source = sourceOf(records(3000), 10);
    const file = sortedFile(source, base, 8000);
    await file.close();
    expect(source.closed).toBe(true);
  });

  it('throws the error of its source when it is read', async () => {
    const failing: OpenedFile = {
      plan: {} as FilePlan,
      records: (async function* () {
        yield records(10);
        throw new InputError(
          'customers.csv',
          12,
          'cannot be parsed as CSV: a quoted field is never closed.',
          'input_unparseable',
        );
      })(),
      close: async () => undefined,
    };
    const file = sortedFile(failing, base);
    await expect(drain(file)).rejects.toThrow('customers.csv:12: cannot be parsed as CSV');
    await file.close();
  });
});

const ACCOUNTS = 'external_account_number,account_type,billing_address.country,account_billing_options.period_length\n';
const CUSTOMERS = 'external_account_number,given_name,family_name,mobile\n';
const NOTES = 'external_account_number,body\n';

function exportDir(files: Record<string, string>): string {
  const dir = mkdtempSync(path.join(base, 'export-'));
  for (const [name, content] of Object.entries(files)) writeFileSync(path.join(dir, name), content);
  return dir;
}

async function readAll(
  dir: string,
  join: JoinMode,
  sortFiles?: Set<string>,
): Promise<{ entries: ExportEntry[]; issues: SourceIssue[]; summary: unknown }> {
  const config = await loadMigrateConfig({ cwd: dir, exportDir: dir, env: { MIGRATE_SUPPLIER: 'ACME' } });
  const reader = await openExport(dir, config, { join, today: '2026-11-22', ...(sortFiles ? { sortFiles } : {}) });
  try {
    const entries: ExportEntry[] = [];
    for await (const entry of reader.entries()) entries.push(entry);
    const issues: SourceIssue[] = [];
    for await (const issue of reader.fileIssues) issues.push(issue);
    return { entries, issues, summary: reader.summary };
  } finally {
    await reader.close();
  }
}

describe('the streaming join over files it sorts', () => {
  // Accounts sorted; customers and notes scattered, with a customer of no account, a note without a key and orphan notes.
  const SCATTERED = {
    'accounts.csv': `${ACCOUNTS}A1,DOMESTIC,GB,MONTHLY\nA2,DOMESTIC,GB,MONTHLY\nA3,DOMESTIC,GB,MONTHLY\nA4,DOMESTIC,GB,MONTHLY\n`,
    'customers.csv': `${CUSTOMERS}A3,Cy,Three,\nA1,Ada,One,+447911123456\nA9,Nobody,Nine,\nA1,Bob,One,07911\nA2,Di,Two,\n`,
    'notes.csv': `${NOTES}A4,fourth\nA0,orphan before\n,no key\nA1,first\nA4,fourth again\nA1,second\nA8,orphan after\n`,
  };

  it('the proof of order names every file out of order, with the first row out of order', async () => {
    const dir = exportDir(SCATTERED);
    const config = await loadMigrateConfig({ cwd: dir, exportDir: dir, env: { MIGRATE_SUPPLIER: 'ACME' } });
    const proof = await proveOrder((await findExportFiles(dir)).files, config);
    expect(proof.outOfOrder).toEqual([
      { file: 'customers.csv', order: 'unsorted', line: 3, key: 'A1', previousKey: 'A3' },
      { file: 'notes.csv', order: 'unsorted', line: 3, key: 'A0', previousKey: 'A4' },
    ]);
    expect([...proof.toSort].sort()).toEqual(['customers.csv', 'notes.csv']);
  });

  it("gives the scratch join's entries, summary and file issues", async () => {
    const dir = exportDir(SCATTERED);
    const staged = await readAll(dir, 'scratch');
    const sorted = await readAll(dir, 'streaming', new Set(['customers.csv', 'notes.csv']));
    expect(sorted.entries).toEqual(staged.entries);
    expect(sorted.summary).toEqual(staged.summary);
    expect(sorted.issues).toEqual(staged.issues);
    // The case covers what it claims: records of one account from several places in a file, in file order.
    const a1 = sorted.entries.find((entry) => entry.kind === 'account' && entry.account.externalAccountNumber === 'A1');
    expect(a1?.kind === 'account' ? a1.account.notes.map((note) => note.origin.line) : []).toEqual([5, 7]);
    expect(sorted.issues.map((issue) => [issue.file, issue.line, issue.code])).toEqual([
      ['customers.csv', 4, 'account_not_in_accounts_file'],
      ['notes.csv', 4, 'missing_external_account_number'],
    ]);
  });
});
