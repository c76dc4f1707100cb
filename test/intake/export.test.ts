import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadMigrateConfig } from '../../src/config/index.js';
import { openExportInOrder } from '../../src/intake/export-in-order.js';
import {
  locateIssue,
  openExport,
  originsOfItems,
  type ExportAccount,
  type ExportEntry,
  type OrphanItems,
} from '../../src/intake/index.js';

// Every temporary directory of this file lives under one, removed at the end.
const base = mkdtempSync(path.join(os.tmpdir(), 'migrate-test-'));
afterAll(() => rmSync(base, { recursive: true, force: true }));

async function read(files: Record<string, string>, env: NodeJS.ProcessEnv = { MIGRATE_SUPPLIER: 'ACME' }) {
  const dir = mkdtempSync(path.join(base, 'migrate-export-'));
  for (const [name, content] of Object.entries(files)) writeFileSync(path.join(dir, name), content);
  const scratchDir = mkdtempSync(path.join(base, 'migrate-scratch-'));
  const config = await loadMigrateConfig({ cwd: dir, exportDir: dir, env });
  const reader = await openExport(dir, config, { scratchDir, today: '2026-11-22' });
  const entries: ExportEntry[] = [];
  for await (const entry of reader.entries()) entries.push(entry);
  const fileIssues = await all(reader.fileIssues);
  await reader.close();
  await expectSameWhenStreamed(dir, config, { entries, summary: reader.summary, fileIssues });
  const accounts = entries.flatMap((entry) => (entry.kind === 'account' ? [entry.account] : []));
  const orphans = entries.flatMap((entry) => (entry.kind === 'orphan' ? [entry.items] : []));
  return { reader, fileIssues, accounts, orphans, scratchLeft: readdirSync(scratchDir) };
}

async function all<T>(items: AsyncIterable<T>): Promise<T[]> {
  const list: T[] = [];
  for await (const item of items) list.push(item);
  return list;
}

/**
 * Every export read here is also read as push and validate read it (its order proven, the files not in order sorted
 * on disk): it must give exactly what the scratch join gave, whatever the order of its files.
 */
async function expectSameWhenStreamed(
  dir: string,
  config: Awaited<ReturnType<typeof loadMigrateConfig>>,
  staged: { entries: ExportEntry[]; summary: unknown; fileIssues: unknown },
): Promise<void> {
  const reader = await openExportInOrder(dir, config, { today: '2026-11-22' });
  const entries: ExportEntry[] = [];
  try {
    for await (const entry of reader.entries()) entries.push(entry);
    expect({ entries, summary: reader.summary, fileIssues: await all(reader.fileIssues) }).toEqual(staged);
  } finally {
    await reader.close();
  }
}

const ACCOUNT = 'external_account_number,account_type,billing_address.country,account_billing_options.period_length\n';
const SUPPLY = 'external_account_number,supply_address1,supply_postcode,customer_at_supply_address_from_date\n';

/** A customer and a supply address for each account: the parts no account may be created without. */
function parts(...keys: string[]): Record<string, string> {
  return {
    'customers.csv': `external_account_number,given_name,family_name\n${keys.map((key) => `${key},Ada,Lovelace\n`).join('')}`,
    'supply_addresses.csv': `${SUPPLY}${keys.map((key) => `${key},1 High St,LS1 1AA,2024-01-01\n`).join('')}`,
  };
}

describe('openExport: join, order, items', () => {
  it('joins customers and supply addresses that are not adjacent, keeping the order of their rows', async () => {
    const { accounts, reader, scratchLeft } = await read({
      'accounts.csv': `${ACCOUNT}B,DOMESTIC,GB,MONTHLY\nA,DOMESTIC,GB,MONTHLY\n`,
      'customers.csv': 'external_account_number,given_name,family_name\nA,First,One\nB,Only,Two\nA,Second,One\n',
      'supply_addresses.csv':
        'external_account_number,supply_address1,supply_postcode,customer_at_supply_address_from_date\nB,1 High St,LS1 1AA,2024-01-01\n',
    });
    expect(scratchLeft).toEqual([]);
    expect(reader.summary.records).toMatchObject({ accounts: 2, customers: 3, supply_addresses: 1 });
    const [a, b] = accounts as [ExportAccount, ExportAccount];
    expect(a.externalAccountNumber).toBe('A');
    expect(a.payload.customers).toEqual([
      { given_name: 'First', family_name: 'One' },
      { given_name: 'Second', family_name: 'One' },
    ]);
    expect(a.origins).toEqual({
      '': { file: 'accounts.csv', line: 3 },
      'customers.0': { file: 'customers.csv', line: 2 },
      'customers.1': { file: 'customers.csv', line: 4 },
    });
    expect(b.payload).toEqual({
      external_account_number: 'B',
      account_type: 'DOMESTIC',
      billing_address: { country: 'GB' },
      account_billing_options: { period_length: 'MONTHLY' },
      import_supplier: 'ACME',
      customers: [{ given_name: 'Only', family_name: 'Two' }],
      supply_addresses: [
        {
          supply_address1: '1 High St',
          supply_postcode: 'LS1 1AA',
          customer_at_supply_address_from_date: '2024-01-01',
        },
      ],
    });
    // A has no supply address: it cannot be created without one (the platform has no endpoint to add it later).
    expect(a.issues.map((issue) => [issue.file, issue.line, issue.attr, issue.code])).toEqual([
      ['accounts.csv', 3, 'supply_addresses', 'required'],
    ]);
    expect(b.issues).toEqual([]);
  });

  it('omits empty cells and never sends "" or null', async () => {
    const { accounts } = await read({
      'accounts.csv': 'external_account_number,billing_name,account_type,billing_address.country\nA, ,DOMESTIC,GB\n',
      'accounts_extra.txt': '',
    });
    expect(accounts[0]?.payload).toEqual({
      external_account_number: 'A',
      account_type: 'DOMESTIC',
      billing_address: { country: 'GB' },
      import_supplier: 'ACME',
    });
  });

  it('reads JSON accounts with nested objects and inline customers, then appends the customers file', async () => {
    const { accounts } = await read({
      'accounts.json': JSON.stringify([
        {
          external_account_number: 'J',
          account_type: 'DOMESTIC',
          billing_address: { country: 'GB' },
          customers: [{ given_name: 'In', family_name: 'Line', mobile: 'bad' }],
          supply_addresses: [
            {
              supply_address1: '1 High St',
              supply_postcode: 'LS1 1AA',
              customer_at_supply_address_from_date: '2024-01-01',
            },
          ],
        },
      ]),
      'customers.ndjson':
        '{"external_account_number": "J", "given_name": "From", "family_name": "File", "customer_preferences": {"opted_into_sms": "y"}}\n',
    });
    const account = accounts[0] as ExportAccount;
    expect(account.payload.customers).toEqual([
      { given_name: 'In', family_name: 'Line', mobile: 'bad' },
      { given_name: 'From', family_name: 'File', customer_preferences: { opted_into_sms: true } },
    ]);
    expect(account.issues.map((issue) => [issue.file, issue.line, issue.column, issue.attr, issue.code])).toEqual([
      ['accounts.json', 1, 'customers', 'customers.0.mobile', 'invalid_phone_number'],
    ]);
  });

  it('maps inline customers and supply addresses with the mapping file rules of their own files, and locates their problems', async () => {
    const config = {
      import_supplier: 'ACME',
      phone_default_country: 'GB',
      mapping: {
        customers: {
          rename: {
            Forename: 'given_name',
            Surname: 'family_name',
            MobileNo: 'mobile',
            DOB: 'date_of_birth',
            SMS: 'customer_preferences.opted_into_sms',
          },
          values: { title: { D: 'Dr' } },
          date_format: 'DD/MM/YYYY',
          ignore: ['LegacyId'],
        },
        supply_addresses: { rename: { MovedIn: 'customer_at_supply_address_from_date' }, date_format: 'DD/MM/YYYY' },
      },
    };
    const inline = {
      external_account_number: 'J',
      account_type: 'DOMESTIC',
      billing_address: { country: 'GB' },
      account_billing_options: { period_length: 'MONTHLY' },
      customers: [
        {
          Forename: 'Ada',
          Surname: 'One',
          MobileNo: '07911 123456',
          DOB: '09/12/1985',
          SMS: 'Y',
          title: 'D',
          LegacyId: 7,
          email: '',
        },
        { Forename: 'Bob', Surname: 'Two', DOB: '31/02/1990', shoe_size: 9 },
      ],
      supply_addresses: [{ supply_address1: '1 High St', supply_postcode: 'LS1 1AA', MovedIn: '01/03/2024' }],
    };
    const { accounts, fileIssues } = await read({
      'migrate.config.json': JSON.stringify(config),
      'accounts.ndjson': `{"external_account_number":"K","account_type":"DOMESTIC","billing_address":{"country":"GB"},"account_billing_options":{"period_length":"MONTHLY"}}\n${JSON.stringify(inline)}\n`,
    });
    expect(fileIssues).toEqual([]);
    const account = accounts.find((candidate) => candidate.externalAccountNumber === 'J') as ExportAccount;
    expect(account.payload.customers).toEqual([
      {
        given_name: 'Ada',
        family_name: 'One',
        mobile: '+447911123456',
        date_of_birth: '1985-12-09',
        customer_preferences: { opted_into_sms: true },
        title: 'Dr',
      },
      { given_name: 'Bob', family_name: 'Two', date_of_birth: '31/02/1990' },
    ]);
    expect(account.payload.supply_addresses).toEqual([
      { supply_address1: '1 High St', supply_postcode: 'LS1 1AA', customer_at_supply_address_from_date: '2024-03-01' },
    ]);
    expect(account.issues.map((issue) => [issue.file, issue.line, issue.column, issue.attr, issue.code])).toEqual([
      ['accounts.ndjson', 2, 'customers', 'customers.1.shoe_size', 'unknown_column'],
      ['accounts.ndjson', 2, 'customers', 'customers.1.date_of_birth', 'invalid_date'],
    ]);
  });

  it('groups post-import records per account, validates them as one request, and keeps accounts not in this export as orphans', async () => {
    const { accounts, orphans, reader } = await read({
      'accounts.csv': `${ACCOUNT}A,DOMESTIC,GB,MONTHLY\n`,
      ...parts('A'),
      'transactions.csv':
        'external_account_number,transaction_id,transaction_date,amount,type\nA,T1,2026-11-01,5,CHARGE\nZ,T9,2026-11-01,5,CHARGE\nA,T1,2026-11-02,6,CHARGE\n',
      'notes.ndjson': '{"external_account_number": "Z", "body": "later"}\n',
    });
    const account = accounts[0] as ExportAccount;
    expect(account.transactions.map((item) => item.origin.line)).toEqual([2, 4]);
    expect(account.transactions[1]?.issues.map((issue) => [issue.line, issue.column, issue.attr, issue.code])).toEqual([
      [4, 'transaction_id', 'transaction_id', 'duplicate_transaction_ids'],
    ]);
    expect(account.issues).toEqual(account.transactions[1]?.issues);
    expect(reader.summary).toMatchObject({ accounts: 1, orphanAccounts: 1 });
    const orphan = orphans[0] as OrphanItems;
    expect(orphan.externalAccountNumber).toBe('Z');
    expect(orphan.importSupplier).toBe('ACME');
    expect(orphan.notes.map((item) => item.value)).toEqual([{ body: 'later' }]);
    expect(orphan.transactions.map((item) => item.issues)).toEqual([[]]);
  });

  it("a record whose supplier is not its account's is import_supplier_differs at its row: it would reach another supplier's account", async () => {
    const { accounts, orphans } = await read({
      'accounts.csv': `external_account_number,import_supplier,account_type,billing_address.country,account_billing_options.period_length\nA,ACME,DOMESTIC,GB,MONTHLY\nB,ACME,DOMESTIC,GB,MONTHLY\n`,
      'customers.csv':
        'external_account_number,import_supplier,given_name,family_name\nA,OTHER,Ada,Lovelace\nB,,Bo,Diddley\n',
      'supply_addresses.csv': parts('A', 'B')['supply_addresses.csv'] as string,
      'payment_instructions.csv':
        'external_account_number,import_supplier,vendor,reference,type\nA,ACME,STRIPE,pm_1,CARD\nB,OTHER,STRIPE,pm_2,CARD\n',
      'notes.csv': 'external_account_number,import_supplier,body\nZ,ACME,first\nZ,OTHER,second\nZ,,third\n',
    });
    const [a, b] = accounts as ExportAccount[];
    const located = (issues: Array<{ file: string; line: number; column?: string; code: string }>) =>
      issues.map((issue) => [issue.file, issue.line, issue.column, issue.code]);
    // The customer travels in A's payload: A is invalid. B's instruction fails alone; B's customer (no cell: the
    // configured ACME) is fine.
    expect(located(a?.issues ?? [])).toEqual([['customers.csv', 2, 'import_supplier', 'import_supplier_differs']]);
    expect(a?.issues[0]?.message).toContain("is not ACME, its account's supplier (accounts.csv line 2)");
    expect(located(b?.issues ?? [])).toEqual([
      ['payment_instructions.csv', 3, 'import_supplier', 'import_supplier_differs'],
    ]);
    expect(located(b?.paymentInstructions[0]?.issues ?? [])).toEqual(located(b?.issues ?? []));
    // Records of an account not in this export: measured against the first that names a supplier.
    const notes = (orphans[0] as OrphanItems).notes;
    expect(notes.map((note) => located(note.issues))).toEqual([
      [],
      [['notes.csv', 3, 'import_supplier', 'import_supplier_differs']],
      [],
    ]);
  });

  it('a second payment instruction for one account is multiple_payment_instructions at its row, unless the mapping file allows several', async () => {
    const files = {
      'accounts.csv': `${ACCOUNT}A,DOMESTIC,GB,MONTHLY\n`,
      ...parts('A'),
      'payment_instructions.csv':
        'external_account_number,vendor,reference,type\nA,STRIPE,pm_1,CARD\nA,STRIPE,pm_2,CARD\n',
    };
    const one = (await read(files)).accounts[0] as ExportAccount;
    expect(one.issues.map((issue) => [issue.file, issue.line, issue.code])).toEqual([
      ['payment_instructions.csv', 3, 'multiple_payment_instructions'],
    ]);
    expect(one.paymentInstructions[1]?.issues[0]?.message).toContain('payment_instructions.csv line 2');
    const many = (
      await read({ ...files, 'migrate.config.json': JSON.stringify({ multiple_payment_instructions: true }) })
    ).accounts[0] as ExportAccount;
    expect(many.issues).toEqual([]);
    expect(many.paymentInstructions).toHaveLength(2);
  });

  it('applies the mapping file: rename, ignore, values, constants, defaults', async () => {
    const { accounts, fileIssues } = await read(
      {
        'migrate.config.json': JSON.stringify({
          import_supplier: 'LEGACY',
          mapping: {
            accounts: {
              rename: { Ref: 'external_account_number', Kind: 'account_type' },
              ignore: ['Junk'],
              values: { account_type: { D: 'DOMESTIC' } },
              constants: { 'billing_address.country': 'GB' },
              defaults: { sales_channel: 'DIRECT' },
            },
          },
        }),
        'accounts.csv': 'Ref,Kind,Junk,sales_channel\nA,D,x,\nB,D,y,PARTNER\n',
      },
      {},
    );
    expect(fileIssues).toEqual([]);
    expect(accounts.map((account) => account.payload)).toEqual([
      {
        external_account_number: 'A',
        account_type: 'DOMESTIC',
        billing_address: { country: 'GB' },
        sales_channel: 'DIRECT',
        import_supplier: 'LEGACY',
      },
      {
        external_account_number: 'B',
        account_type: 'DOMESTIC',
        billing_address: { country: 'GB' },
        sales_channel: 'PARTNER',
        import_supplier: 'LEGACY',
      },
    ]);
    expect(accounts[0]?.columnOf).toEqual({ 'accounts.csv': { external_account_number: 'Ref', account_type: 'Kind' } });
  });
});

describe("openExport: the scratch join's file", () => {
  it('is readable by its owner only while the export is open, and gone after close', async () => {
    const dir = mkdtempSync(path.join(base, 'migrate-export-'));
    writeFileSync(path.join(dir, 'accounts.csv'), `${ACCOUNT}A,DOMESTIC,GB,MONTHLY\n`);
    const scratchDir = mkdtempSync(path.join(base, 'migrate-scratch-'));
    const reader = await openExport(dir, await loadMigrateConfig({ cwd: dir, env: {} }), { scratchDir });
    const [stage] = readdirSync(scratchDir);
    expect(stage).toMatch(/^migrate-stage-/);
    expect(statSync(path.join(scratchDir, stage as string)).mode & 0o777).toBe(0o700);
    expect(statSync(path.join(scratchDir, stage as string, 'stage.sqlite')).mode & 0o777).toBe(0o600);
    await reader.close();
    expect(readdirSync(scratchDir)).toEqual([]);
  });

  it('removes the staging directory a killed run left behind, and keeps those of live processes', async () => {
    const dir = mkdtempSync(path.join(base, 'migrate-export-'));
    writeFileSync(path.join(dir, 'accounts.csv'), `${ACCOUNT}A,DOMESTIC,GB,MONTHLY\n`);
    const scratchDir = mkdtempSync(path.join(base, 'migrate-scratch-'));
    const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], {
      encoding: 'utf8',
    }).stdout;
    mkdirSync(path.join(scratchDir, `migrate-stage-${dead}-abc`));
    mkdirSync(path.join(scratchDir, `migrate-stage-${process.ppid}-def`));
    mkdirSync(path.join(scratchDir, 'migrate-stage-unrelated'));
    const reader = await openExport(dir, await loadMigrateConfig({ cwd: dir, env: {} }), { scratchDir });
    const open = readdirSync(scratchDir);
    expect(open).not.toContain(`migrate-stage-${dead}-abc`);
    expect(open.filter((name) => name.startsWith(`migrate-stage-${process.pid}@`))).toHaveLength(1);
    await reader.close();
    expect(readdirSync(scratchDir).sort()).toEqual([`migrate-stage-${process.ppid}-def`, 'migrate-stage-unrelated']);
  });
});

describe('openExport: what it refuses to hide', () => {
  it('keeps a cell holding the staging separator intact, and reports an undocumented JSON key once', async () => {
    const { accounts, fileIssues } = await read({
      'accounts.csv':
        'external_account_number,billing_name,account_type,billing_address.country,account_billing_options.period_length\nA,Odd\u001fName,DOMESTIC,GB,MONTHLY\n',
      'notes.ndjson':
        '{"external_account_number": "A", "body": "x", "colour": "red"}\n{"external_account_number": "A", "body": "y", "colour": "blue"}\n',
    });
    expect(accounts[0]?.payload.billing_name).toBe('Odd\u001fName');
    expect(fileIssues.map((issue) => [issue.file, issue.line, issue.column, issue.code])).toEqual([
      ['notes.ndjson', 1, 'colour', 'unknown_column'],
    ]);
  });
});

describe('locateIssue', () => {
  it('maps a service attr back to file, line and the renamed source column, from data stored as JSON', () => {
    const stored = JSON.parse(
      JSON.stringify({
        externalAccountNumber: 'A',
        origins: {
          '': { file: 'accounts.csv', line: 7 },
          'customers.0': { file: 'customers.csv', line: 3 },
          'customers.1': { file: 'customers.csv', line: 9 },
        },
        columnOf: { 'customers.csv': { landline: 'Home Phone' } },
      }),
    );
    expect(
      locateIssue(stored, {
        attr: 'customers.1.landline',
        code: 'invalid_phone_number',
        detail: 'abcde is not a valid phone number',
      }),
    ).toEqual({
      file: 'customers.csv',
      line: 9,
      column: 'Home Phone',
      attr: 'customers.1.landline',
      externalAccountNumber: 'A',
      code: 'invalid_phone_number',
      message: 'abcde is not a valid phone number',
    });
    expect(
      locateIssue(stored, { attr: 'customers.0.customer_preferences.opted_into_sms', code: 'invalid', detail: 'x' }),
    ).toMatchObject({ line: 3, column: 'customer_preferences.opted_into_sms' });
    expect(
      locateIssue(stored, { attr: 'ledgers.0.ledger_code', code: 'ledger_code_does_not_exist', detail: 'x' }),
    ).toMatchObject({ file: 'accounts.csv', line: 7, column: 'ledgers' });
    expect(
      locateIssue(stored, { attr: 'customers', code: 'customer_with_unknown_occupier', detail: 'x' }),
    ).not.toHaveProperty('column');
    expect(locateIssue(stored, { attr: '', code: 'account_failed_validation', detail: 'x' })).toEqual({
      file: 'accounts.csv',
      line: 7,
      externalAccountNumber: 'A',
      code: 'account_failed_validation',
      message: 'x',
    });
  });

  it('locates the issues of a post-import request through originsOfItems', () => {
    const items = [{ origin: { file: 'notes.csv', line: 2 } }, { origin: { file: 'notes.csv', line: 5 } }];
    const located = locateIssue(
      { externalAccountNumber: 'A', origins: originsOfItems('notes', items) },
      { attr: 'notes.1.unpin_at', code: 'note_unpin_at_earlier_than_creation_date', detail: 'x' },
    );
    expect(located).toMatchObject({ file: 'notes.csv', line: 5, column: 'unpin_at', attr: 'notes.1.unpin_at' });
  });
});
