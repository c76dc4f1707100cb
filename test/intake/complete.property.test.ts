import fc from 'fast-check';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadMigrateConfig } from '../../src/config/index.js';
import { stageExport } from '../../src/engine/stage.js';
import { StagingGate } from '../../src/engine/staging-gate.js';
import { openExportInOrder } from '../../src/intake/export-in-order.js';
import { Ledger } from '../../src/ledger/index.js';
import { exportInMemory, sorted, type ExpectedAccount } from '../e2e/oracle.js';

// Complete or not at all, as a property (docs/complete-or-not.md): for random exports
// (any row order in every file, any number of rows per account, CSV, JSON and NDJSON files,
// quoted cells with commas and newlines), the accounts intake hands out equal the accounts mapped
// from a one-pass in-memory read of the same files, and no account passes the staging gate (is
// handed to the sender) before every row of it is in the ledger.

const base = mkdtempSync(path.join(os.tmpdir(), 'migrate-property-'));
afterAll(() => rmSync(base, { recursive: true, force: true }));
const TODAY = '2026-11-20';

type Format = 'csv' | 'json' | 'ndjson';
type Row = Record<string, string>;

const HEADERS: Record<string, string[]> = {
  accounts: ['external_account_number', 'account_type', 'billing_name', 'billing_address.country'],
  customers: ['external_account_number', 'given_name', 'family_name'],
  supply_addresses: [
    'external_account_number',
    'supply_address1',
    'supply_postcode',
    'customer_at_supply_address_from_date',
  ],
  notes: ['external_account_number', 'body', 'created_at'],
  transactions: ['external_account_number', 'transaction_id', 'transaction_date', 'amount', 'type'],
  statements: ['external_account_number', 'statement_id', 'bill_period_from_date', 'bill_period_to_date'],
  payment_instructions: ['external_account_number', 'vendor', 'reference', 'type'],
};

/** Text that needs quoting in CSV now and then: commas, quotes, newlines. */
const text = fc.stringMatching(/^[A-Za-z0-9 ,."\n-]{1,12}$/).map((value) => value.trim() || 'x');

/** One account's rows in every file (customers and supply addresses may be missing: that account is invalid). */
const accountRows = (key: string, index: number): fc.Arbitrary<Record<string, Row[]>> =>
  fc.record({
    accounts: fc.constant([
      {
        external_account_number: key,
        account_type: 'DOMESTIC',
        billing_name: `Name ${index}`,
        'billing_address.country': 'GB',
      },
    ]),
    customers: fc.array(fc.record({ external_account_number: fc.constant(key), given_name: text, family_name: text }), {
      minLength: 0,
      maxLength: 3,
    }),
    supply_addresses: fc.array(
      fc.record({
        external_account_number: fc.constant(key),
        supply_address1: text,
        supply_postcode: fc.constantFrom('LS1 1AA', 'YO1 7HH'),
        customer_at_supply_address_from_date: fc.constant('2024-01-01'),
      }),
      { minLength: 0, maxLength: 2 },
    ),
    notes: fc
      .uniqueArray(text, { maxLength: 3 })
      .map((bodies) =>
        bodies.map((body) => ({ external_account_number: key, body, created_at: '2026-11-01T09:00:00Z' })),
      ),
    transactions: fc.nat(3).map((count) =>
      Array.from({ length: count }, (_, n) => ({
        external_account_number: key,
        transaction_id: `${key}-T${n}`,
        transaction_date: '2026-11-02',
        amount: `${n + 1}.50`,
        type: 'CHARGE',
      })),
    ),
    statements: fc.nat(2).map((count) =>
      Array.from({ length: count }, (_, n) => ({
        external_account_number: key,
        statement_id: `${key}-S${n}`,
        bill_period_from_date: '2026-09-01',
        bill_period_to_date: '2026-09-30',
      })),
    ),
    payment_instructions: fc
      .boolean()
      .map((has) =>
        has ? [{ external_account_number: key, vendor: 'STRIPE', reference: `pm_${index}`, type: 'CARD' }] : [],
      ),
  });

interface RandomExport {
  files: Record<string, { rows: Row[]; format: Format }>;
}

/** Account numbers whose text order differs from their numeric order (K-10 before K-2). */
const exportArbitrary: fc.Arbitrary<RandomExport> = fc
  .integer({ min: 1, max: 12 })
  .chain((count) => fc.tuple(...Array.from({ length: count }, (_, index) => accountRows(`K-${index * 7 + 1}`, index))))
  .chain((accounts) => {
    const kinds = Object.keys(HEADERS);
    const rowsOf = (kind: string): Row[] => accounts.flatMap((account) => account[kind] ?? []);
    // CSV most often (the files whose order is proven); JSON and NDJSON send the export to the scratch join.
    const format = fc.constantFrom<Format>('csv', 'csv', 'csv', 'csv', 'json', 'ndjson');
    return fc.record(
      Object.fromEntries(
        kinds.map((kind) => [
          kind,
          fc.record({ rows: fc.shuffledSubarray(rowsOf(kind), { minLength: rowsOf(kind).length }), format }),
        ]),
      ),
    );
  })
  .map((files) => ({ files: files as RandomExport['files'] }));

function csvCell(value: string): string {
  return /[",\n]/.test(value) ? `"${value.replaceAll('"', '""')}"` : value;
}

function writeExport(dir: string, randomExport: RandomExport): void {
  for (const [kind, { rows, format }] of Object.entries(randomExport.files)) {
    if (rows.length === 0 && kind !== 'accounts') continue;
    const header = HEADERS[kind] as string[];
    const file = path.join(dir, `${kind}.${format}`);
    if (format === 'csv')
      writeFileSync(
        file,
        [header.join(','), ...rows.map((row) => header.map((column) => csvCell(row[column] ?? '')).join(','))].join(
          '\n',
        ) + '\n',
      );
    else if (format === 'json') writeFileSync(file, JSON.stringify(rows, null, 1));
    else writeFileSync(file, rows.map((row) => JSON.stringify(row)).join('\n') + '\n');
  }
}

/** An account as the ledger holds it, in the oracle's terms: its payload (records are checked through the entries). */
const payloadOf = (row: { payload: string | null } | undefined): unknown =>
  row?.payload == null ? undefined : sorted(JSON.parse(row.payload));

describe('intake: complete or not at all, for random exports', () => {
  it('hands out exactly the accounts of a one-pass in-memory read, and none past the gate before all its rows are in', async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(exportArbitrary, fc.integer({ min: 1, max: 4 }), async (randomExport, batchSize) => {
        run += 1;
        const dir = path.join(base, `export-${run}`);
        const state = path.join(base, `state-${run}`);
        mkdirSync(dir, { recursive: true });
        writeExport(dir, randomExport);
        const env = { MIGRATE_SUPPLIER: 'ACME' };
        const config = await loadMigrateConfig({ cwd: dir, exportDir: dir, env });
        const expected = await exportInMemory(dir, env, TODAY);

        // 1. The entries, as validate reads them.
        const reader = await openExportInOrder(dir, config, { today: TODAY });
        const handedOut = new Map<string, ExpectedAccount>();
        try {
          for await (const entry of reader.entries()) {
            if (entry.kind !== 'account') continue;
            const account = entry.account;
            const values = (items: Array<{ value: unknown }>): unknown[] => items.map((item) => item.value);
            handedOut.set(account.externalAccountNumber, {
              payload: account.payload,
              notes: values(account.notes),
              transactions: values(account.transactions),
              statements: values(account.statements),
              paymentInstructions: values(account.paymentInstructions),
            });
          }
        } finally {
          await reader.close();
        }
        expect(sorted(Object.fromEntries(handedOut))).toEqual(sorted(Object.fromEntries(expected.all)));

        // 2. Staged into a ledger behind the gate, as push stages while it sends: whenever the gate moves, every
        //    account it has passed holds the payload of all its rows.
        mkdirSync(state, { recursive: true });
        const ledger = Ledger.open(state);
        ledger.startRun('push', {});
        const gate = new StagingGate();
        const early: string[] = [];
        let watching = true;
        const watch = (async () => {
          while (watching) {
            for (const [key, want] of expected.all) {
              if (!gate.passed(key)) continue;
              ledger.flush();
              const held = payloadOf(ledger.findAccount('ACME', key));
              if (JSON.stringify(held) !== JSON.stringify(sorted(JSON.parse(JSON.stringify(want.payload)))))
                early.push(key);
            }
            if (gate.finished) return;
            await gate.changed();
          }
        })();
        try {
          const staging = await openExportInOrder(dir, config, { today: TODAY });
          try {
            await stageExport(ledger, staging, { emit: () => undefined }, { gate, batchSize });
          } finally {
            await staging.close();
          }
          watching = false;
          await watch;
        } finally {
          ledger.close();
        }
        expect(early, 'accounts passed the gate before all their rows were in').toEqual([]);
      }),
      { numRuns: 100, seed: 20261125 },
    );
  });
});
