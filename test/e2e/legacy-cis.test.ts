import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { InspectedAccount } from '../../src/sandbox/inspected.js';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.js';
import { push } from './helpers.js';
import { copyLegacyCis, readLegacyCis, type LegacyAccount } from './legacy-cis-files.js';
import { sorted } from './oracle.js';
import { runMigrate } from './run-push.js';

// The acceptance test of shaping a legacy export (docs/from-a-legacy-system.md): fixtures/legacy-cis/ is a CIS
// extract as such a system writes it, turned into the platform's records by its shape.sql and mapping file. What the
// service holds afterwards is checked against two readings of the legacy files that do not use the SQL: a hand-written
// expectation for the accounts that carry every tricky case (legacy-cis.expected.json), and a plain reader of the
// legacy rows for every live account (legacy-cis-files.ts).

const SUPPLIER = 'THISTLE';

interface Expected {
  present: Record<
    string,
    {
      payload: unknown;
      notes: Array<{ body: string; created_at: string; is_pinned: boolean }>;
      transactions: unknown[];
      statements: Array<Record<string, unknown>>;
      payment_instructions: unknown[];
    }
  >;
  absent: Record<string, string>;
}
const expected = JSON.parse(readFileSync(join(import.meta.dirname, 'legacy-cis.expected.json'), 'utf8')) as Expected;
const STATEMENT_FIELDS = Object.keys(Object.values(expected.present)[0]!.statements[0]!);

let root: string;
let sandbox: RunningSandbox;
let legacy: Map<string, LegacyAccount>;
beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'legacy-cis-'));
  legacy = readLegacyCis();
  sandbox = await startSandbox({ suppliers: { [SUPPLIER]: 'Ongoing' }, processingMs: 0 });
});
afterAll(async () => {
  await sandbox.close();
  rmSync(root, { recursive: true, force: true });
});

/** What an account holds on the service, in the forms of the expectation file. */
function held(account: InspectedAccount): Record<string, unknown> {
  return {
    payload: account.payload,
    notes: account.notes
      .filter((note) => !note.bySandbox)
      .map((note) => ({
        body: note.body,
        created_at: new Date(note.createdAt).toISOString(),
        is_pinned: note.isPinned,
      }))
      .sort((a, b) => a.created_at.localeCompare(b.created_at)),
    transactions: account.transactions
      .map((transaction) => transaction.data)
      .sort((a, b) => String(a['transaction_id']).localeCompare(String(b['transaction_id']))),
    statements: account.historicalStatements
      .map((statement) =>
        Object.fromEntries(STATEMENT_FIELDS.filter((field) => field in statement).map((f) => [f, statement[f]])),
      )
      .sort((a, b) => String(a['statement_id']).localeCompare(String(b['statement_id']))),
    payment_instructions: account.paymentInstructions.map(({ vendor, reference, type }) => ({
      vendor,
      reference,
      type,
    })),
  };
}

const live = (): string[] => [...legacy].filter(([, account]) => account.status === 'LIVE').map(([number]) => number);

describe('migrate push fixtures/legacy-cis (a CIS extract through shape.sql)', () => {
  it('ends "everything done" against the built-in sandbox (exit 0)', async () => {
    const dir = copyLegacyCis(join(root, 'built-in'));
    const result = await runMigrate(['push', dir, '--sandbox', '--state', join(root, 'built-in-state')]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout + result.stderr).toContain('everything done');
  });

  it('lands every tricky case exactly as written by hand from the legacy rows; closed and final accounts stay behind', async () => {
    const dir = copyLegacyCis(join(root, 'export'));
    const result = await push(sandbox, dir, join(root, 'state'));
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout + result.stderr).toContain('everything done');
    for (const [number, want] of Object.entries(expected.present)) {
      const account = sandbox.inspect.account(SUPPLIER, number);
      expect(account?.status, number).toBe('PROCESSED');
      expect(account?.createRequestsAccepted, number).toBe(1);
      const got = held(account!);
      expect(sorted(got['payload']), `${number} payload`).toEqual(sorted(want.payload));
      const notes = want.notes
        .map((note) => ({ ...note, created_at: new Date(note.created_at).toISOString() }))
        .sort((a, b) => a.created_at.localeCompare(b.created_at));
      expect(got['notes'], `${number} notes`).toEqual(notes);
      const byId = (items: unknown[], key: string): unknown[] =>
        items.map(sorted).sort((a, b) => String((a as never)[key]).localeCompare(String((b as never)[key])));
      expect(byId(got['transactions'] as unknown[], 'transaction_id'), `${number} transactions`).toEqual(
        byId(want.transactions, 'transaction_id'),
      );
      expect(byId(got['statements'] as unknown[], 'statement_id'), `${number} statements`).toEqual(
        byId(want.statements, 'statement_id'),
      );
      expect(got['payment_instructions'], `${number} payment instruction`).toEqual(want.payment_instructions);
    }
    for (const number of Object.keys(expected.absent))
      expect(sandbox.inspect.account(SUPPLIER, number), `${number} left behind`).toBeUndefined();
  });

  it('lands every live account as a plain reading of the legacy files says, and nothing else', () => {
    const numbers = live();
    expect(numbers).toHaveLength(200);
    const onService = sandbox.inspect.accounts(SUPPLIER).map((account) => account.externalAccountNumber);
    expect(onService.sort()).toEqual([...numbers].sort());
    const wrong: string[] = [];
    for (const number of numbers) {
      const want = legacy.get(number)!;
      const account = sandbox.inspect.account(SUPPLIER, number)!;
      const payload = account.payload as {
        unknown_occupier?: boolean;
        billing_name?: string;
        billing_email?: string;
        transfer_balance?: number;
        billing_address?: { postal_code?: string };
        date_of_sale?: string;
        customers?: Array<{ given_name: string; family_name: string; email?: string; mobile?: string }>;
        supply_addresses?: Array<{ supply_postcode: string }>;
        metadata?: Array<{ value: { supply_points: unknown[] } }>;
        ledgers?: unknown[];
      };
      const got = {
        created: [account.status, account.createRequestsAccepted],
        occupier: payload.unknown_occupier,
        billingName: payload.billing_name,
        billingEmail: payload.billing_email,
        transferBalance: payload.transfer_balance,
        postalCode: payload.billing_address?.postal_code,
        dateOfSale: payload.date_of_sale,
        customers: (payload.customers ?? []).map(
          (c) => `${c.given_name} ${c.family_name} <${c.email ?? ''}> ${c.mobile ?? ''}`,
        ),
        supplyPostcodes: (payload.supply_addresses ?? []).map((address) => address.supply_postcode),
        supplyPoints: payload.metadata?.[0]?.value.supply_points.length,
        notes: account.notes
          .filter((note) => !note.bySandbox)
          .map((note) => `${note.body} @ ${new Date(note.createdAt).toISOString()}`)
          .sort(),
        // The posting history in the account's ledger, and nothing through the transactions endpoint: nothing moved
        // into the open statement period, no note pinned by the service.
        ledgers: sorted(payload.ledgers),
        transactions: account.transactions.length,
        pinnedByService: account.notes.filter((note) => note.bySandbox).length,
        statements: account.historicalStatements
          .map((s) => `${String(s['statement_id'])} ${String(s['gross_amount'])} ${String(s['statement_path'])}`)
          .sort(),
        mandate: account.paymentInstructions.map((instruction) => instruction.reference),
      };
      const from = {
        created: ['PROCESSED', 1],
        occupier: want.occupier,
        billingName: want.billingName,
        billingEmail: want.billingEmail,
        transferBalance: want.transferBalance,
        postalCode: want.postalCode,
        dateOfSale: want.dateOfSale,
        customers: want.customers,
        supplyPostcodes: [want.supplyPostcode],
        supplyPoints: want.supplyPoints,
        notes: [...want.notes].sort(),
        ledgers: sorted([want.ledger]),
        transactions: 0,
        pinnedByService: 0,
        statements: [...want.statements].sort(),
        mandate: want.mandate === undefined ? [] : [want.mandate],
      };
      if (JSON.stringify(got) !== JSON.stringify(from))
        wrong.push(`${number}: ${JSON.stringify(got)} != ${JSON.stringify(from)}`);
    }
    expect(wrong.slice(0, 3), `${wrong.length} accounts differ from the legacy files`).toEqual([]);
  });

  it('migrate shape --out writes an export that pushes to the same payloads and records', async () => {
    const shaped = join(root, 'shaped');
    const dir = copyLegacyCis(join(root, 'export-for-shape'));
    const shape = await runMigrate(['shape', dir, '--out', shaped]);
    expect(shape.code, shape.stderr).toBe(0);
    const again = await startSandbox({ suppliers: { [SUPPLIER]: 'Ongoing' }, processingMs: 0 });
    try {
      const result = await push(again, shaped, join(root, 'shaped-state'));
      expect(result.code, result.stderr).toBe(0);
      const all = (service: RunningSandbox): unknown[] =>
        service.inspect
          .accounts(SUPPLIER)
          .map((account) => sorted(held(account)))
          .sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
      const [first, second] = [all(sandbox), all(again)];
      expect(second.length).toBe(200);
      expect(second).toEqual(first);
    } finally {
      await again.close();
    }
  });
});
