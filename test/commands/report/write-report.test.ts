import {
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
  existsSync,
  readdirSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Ledger, type AccountState, type ItemState, type NewAccount } from '../../../src/ledger/index.js';
import { openLedgerSource } from '../../../src/commands/common/ledger-source.js';
import { REPORT_FILES, writeReport } from '../../../src/commands/report/write-report.js';

// `migrate report` over a ledger filled through the ledger's own write API: every state of an
// account and of a record lands in the file it belongs to, keyed by external account number.

let dir: string;
let state: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'report-'));
  state = join(dir, 'state');
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

type Row = Record<string, string>;
const csv = (out: string, name: string): Row[] =>
  parse(readFileSync(join(out, name), 'utf8'), { columns: true }) as Row[];

function account(ledger: Ledger, number: string, accountState: AccountState, line: number, supplier = 'ACME'): number {
  const row: NewAccount = {
    importSupplier: supplier,
    externalAccountNumber: number,
    state: accountState,
    payload: '{}',
    fingerprint: `f-${number}`,
    originFile: 'accounts.csv',
    originLine: line,
    origins: null,
  };
  return ledger.insertAccount(row, { step: 'stage' });
}

function item(
  ledger: Ledger,
  accountId: number,
  kind: 'note' | 'transaction' | 'payment_instruction',
  key: string,
  itemState: ItemState,
  line: number,
): number {
  return ledger.insertItem({
    accountId,
    kind,
    naturalKey: key,
    body: '{}',
    fingerprint: `f-${key}`,
    state: itemState,
    originFile: `${kind}s.csv`,
    originLine: line,
  });
}

/** A ledger with one account in every state that matters to the report, and records in every state. */
function fillLedger(): void {
  const ledger = Ledger.open(state);
  ledger.startRun('push', {});
  ledger.batch(() => {
    const done = account(ledger, 'DONE-1', 'done', 2);
    ledger.updateAccountNow(done, { platformAccountNumber: 'A-00000001', platformIdentifier: '101' });
    item(ledger, done, 'note', 'secret body\u001f2026-01-01', 'done', 2);
    item(ledger, done, 'transaction', 'T-1', 'done', 2);
    const invalid = account(ledger, 'BAD-1', 'invalid', 3);
    ledger.replaceIssues(invalid, [
      {
        code: 'invalid_phone_number',
        message: 'bad phone',
        attr: 'customers.0.mobile',
        file: 'customers.csv',
        line: 4,
        column: 'mobile',
        source: 'local',
      },
      {
        code: 'invalid_date',
        message: 'bad date',
        attr: 'transaction_date',
        file: 'transactions.csv',
        line: 7,
        column: 'transaction_date',
        source: 'local',
      },
    ]);
    ledger.updateAccountNow(invalid, {
      error: { code: 'invalid_phone_number', detail: 'bad phone', file: 'customers.csv', line: 4 },
    });
    // Held because of the issue listed with its account already: not repeated in fix-data.
    const held = item(ledger, invalid, 'transaction', 'T-BAD', 'held', 7);
    ledger.updateItemsNow([held], {
      error: {
        code: 'invalid_date',
        detail: 'bad date',
        file: 'transactions.csv',
        line: 7,
        column: 'transaction_date',
      },
    });
    const errored = account(ledger, 'ERR-1', 'errored', 5);
    ledger.updateAccountNow(errored, { error: { code: 'account_creation_failed', detail: 'could not be created' } });
    const processed = account(ledger, 'PART-1', 'processed', 6);
    ledger.updateAccountNow(processed, { platformAccountNumber: 'A-00000002' });
    const refused = item(ledger, processed, 'payment_instruction', 'FAIL-1', 'failed', 3);
    ledger.updateItemsNow([refused], {
      error: { code: 'payment_vendor_failed', detail: 'vendor says no', file: 'payment_instructions.csv', line: 3 },
    });
    const transient = item(ledger, processed, 'transaction', 'T-500', 'pending', 9);
    ledger.updateItemsNow([transient], { error: { code: 'server_error', detail: '500 after retries' } });
    item(ledger, processed, 'transaction', 'T-NEW', 'pending', 10);
    item(ledger, processed, 'note', 'body\u001f', 'sending', 11);
    const unknown = item(ledger, processed, 'payment_instruction', 'pm_lost', 'unknown', 4);
    ledger.updateItemsNow([unknown], { error: { code: 'outcome_unknown', detail: 'sent, no answer' } });
    const creating = account(ledger, 'CRE-1', 'creating', 7);
    ledger.updateAccountNow(creating, { error: { code: 'connection_reset', detail: 'reset after send' } });
    account(ledger, 'NEW-1', 'staged', 8);
    account(ledger, 'ORPHAN-1', 'unresolved', 0);
    account(ledger, 'OTHER-1', 'done', 2, 'OTHER');
  });
  ledger.close();
}

async function report(out: string, supplier?: string) {
  const source = openLedgerSource(state);
  try {
    return await writeReport(source, { ledgerLabel: state, outDir: out, supplier, pageSize: 2 });
  } finally {
    source.close();
  }
}

describe('migrate report files', () => {
  it('writes one accounts.csv row per account, keyed by external account number, across pages', async () => {
    fillLedger();
    const out = join(dir, 'out');
    const summary = await report(out);
    const rows = csv(out, REPORT_FILES.accounts);
    expect(rows.map((row) => row['external_account_number']).sort()).toEqual([
      'BAD-1',
      'CRE-1',
      'DONE-1',
      'ERR-1',
      'NEW-1',
      'ORPHAN-1',
      'OTHER-1',
      'PART-1',
    ]);
    const byNumber = new Map(rows.map((row) => [row['external_account_number'], row]));
    expect(byNumber.get('DONE-1')).toMatchObject({
      state: 'done',
      platform_account_number: 'A-00000001',
      platform_identifier: '101',
      items_done: '2',
      items_outstanding: '0',
    });
    expect(byNumber.get('PART-1')).toMatchObject({
      state: 'processed',
      platform_account_number: 'A-00000002',
      items_done: '0',
      items_outstanding: '5',
    });
    expect(byNumber.get('ERR-1')).toMatchObject({ state: 'errored', error_code: 'account_creation_failed' });
    expect(summary.files[REPORT_FILES.accounts]?.rows).toBe(8);
    expect(summary.accounts).toMatchObject({
      done: 2,
      invalid: 1,
      errored: 1,
      processed: 1,
      creating: 1,
      staged: 1,
      unresolved: 1,
    });
  });

  it('fix-data.csv names every data error with file and line, once', async () => {
    fillLedger();
    const out = join(dir, 'out');
    const summary = await report(out);
    // What needs action is counted as the file is written: its rows, and the accounts they name.
    expect(summary.fix_data).toEqual({ rows: 4, accounts: 3, done_with_refused_records: 0 });
    const rows = csv(out, REPORT_FILES.fixData).map(
      (row) =>
        `${row['external_account_number']} ${row['record']} ${row['file']}:${row['line']} ${row['column']} ${row['code']}`,
    );
    expect(rows.sort()).toEqual([
      'BAD-1 account customers.csv:4 mobile invalid_phone_number',
      'BAD-1 account transactions.csv:7 transaction_date invalid_date',
      'ERR-1 account accounts.csv:5  account_creation_failed',
      'PART-1 payment_instruction payment_instructions.csv:3  payment_vendor_failed',
    ]);
  });

  it('retry.csv holds what the next run retries, unknown-outcome.csv what a person must check', async () => {
    fillLedger();
    const out = join(dir, 'out');
    await report(out);
    const retry = csv(out, REPORT_FILES.retry).map(
      (row) => `${row['external_account_number']} ${row['record']} ${row['record_key']} ${row['state']} ${row['code']}`,
    );
    expect(retry.sort()).toEqual([
      'CRE-1 account  creating connection_reset',
      'ORPHAN-1 account  unresolved ',
      // A note is named by file and line, never by its body.
      'PART-1 note  sending ',
      'PART-1 transaction T-500 pending server_error',
    ]);
    const unknown = csv(out, REPORT_FILES.unknown);
    expect(unknown).toHaveLength(1);
    expect(unknown[0]).toMatchObject({
      external_account_number: 'PART-1',
      record: 'payment_instruction',
      record_key: 'pm_lost',
      code: 'outcome_unknown',
    });
    expect(readFileSync(join(out, REPORT_FILES.retry), 'utf8')).not.toContain('body');
  });

  it('limits every file to one import supplier with --supplier', async () => {
    fillLedger();
    const out = join(dir, 'out');
    await report(out, 'OTHER');
    expect(csv(out, REPORT_FILES.accounts).map((row) => row['external_account_number'])).toEqual(['OTHER-1']);
    expect(csv(out, REPORT_FILES.fixData)).toEqual([]);
    const summary = JSON.parse(readFileSync(join(out, REPORT_FILES.summary), 'utf8'));
    expect(summary).toMatchObject({
      import_supplier: 'OTHER',
      accounts: { done: 1 },
      top_error_codes: [],
      runs: [{ command: 'push', status: 'running' }],
    });
    await report(out, 'ACME');
    const acme = JSON.parse(readFileSync(join(out, REPORT_FILES.summary), 'utf8'));
    expect(acme.top_error_codes.map((entry: { code: string }) => entry.code).sort()).toEqual([
      'account_creation_failed',
      'connection_reset',
      'invalid_date',
      'invalid_phone_number',
      'outcome_unknown',
      'payment_vendor_failed',
      'server_error',
    ]);
  });

  it('creates the directory 0700 and every file 0600, replacing an old report whole (no partial files left)', async () => {
    fillLedger();
    const out = join(dir, 'fresh', 'out');
    await report(out);
    expect(statSync(out).mode & 0o777).toBe(0o700);
    for (const name of Object.values(REPORT_FILES)) expect(statSync(join(out, name)).mode & 0o777).toBe(0o600);
    const shared = join(dir, 'shared');
    mkdirSync(shared, { mode: 0o755 });
    writeFileSync(join(shared, REPORT_FILES.accounts), 'old', { mode: 0o644 });
    await report(shared);
    expect(statSync(join(shared, REPORT_FILES.accounts)).mode & 0o777).toBe(0o600);
    expect(readFileSync(join(shared, REPORT_FILES.accounts), 'utf8')).toContain('DONE-1');
    expect(readdirSync(shared).filter((name) => name.endsWith('.partial'))).toEqual([]);
  });

  it('says which directory has no ledger instead of creating one', () => {
    expect(() => openLedgerSource(join(dir, 'nothing'))).toThrow(/no ledger in .*nothing.*--state/);
    expect(existsSync(join(dir, 'nothing'))).toBe(false);
  });
});
