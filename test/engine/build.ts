import { DEFAULT_ENGINE_SETTINGS, type EngineSettings } from '../../src/engine/index.js';
import type { ExportAccount, ExportEntry, MappedItem, OrphanItems, SourceIssue } from '../../src/mapping/types.js';

// Builders of export entries as plain data, and the engine settings of fast tests, for engine tests.

/** Polls after 5 ms doubling to 20 ms, a short wait timeout and drain: engine tests finish in milliseconds. */
export const fast: EngineSettings = {
  ...DEFAULT_ENGINE_SETTINGS,
  pollSchedule: { firstDelayMs: 5, factor: 2, maxDelayMs: 20, jitter: 0 },
  waitTimeoutMs: 5_000,
  drainMs: 1_000,
};

export interface AccountSpec {
  number: string;
  notes?: string[];
  transactions?: string[];
  statements?: string[];
  paymentInstructions?: string[];
  invalid?: boolean;
  billingName?: string;
}

function mapped<T>(value: T, file: string, line: number): MappedItem<T> {
  return { value, origin: { file, line }, issues: [] };
}

export function accountEntry(spec: AccountSpec, line = 2, supplier = 'ACME'): ExportEntry {
  const issues: SourceIssue[] = spec.invalid
    ? [
        {
          file: 'accounts.csv',
          line,
          column: 'billing_email',
          attr: 'billing_email',
          externalAccountNumber: spec.number,
          code: 'invalid_email',
          message: 'not an e-mail address',
        },
      ]
    : [];
  const account: ExportAccount = {
    externalAccountNumber: spec.number,
    importSupplier: supplier,
    payload: {
      import_supplier: supplier,
      external_account_number: spec.number,
      billing_name: spec.billingName ?? `Name ${spec.number}`,
      // Every account is created with its customers and supply addresses (no endpoint adds them later).
      customers: [{ given_name: 'Ada', family_name: 'Lovelace' }],
      supply_addresses: [
        {
          supply_address1: '1 Station Road',
          supply_postcode: 'YO1 7HH',
          customer_at_supply_address_from_date: '2024-01-01',
        },
      ],
    },
    origin: { file: 'accounts.csv', line },
    origins: { '': { file: 'accounts.csv', line } },
    issues,
    ...items(spec, supplier),
  };
  return { kind: 'account', account };
}

function items(
  spec: Omit<AccountSpec, 'invalid' | 'billingName'>,
  supplier: string,
): Pick<ExportAccount, 'notes' | 'transactions' | 'statements' | 'paymentInstructions'> {
  return {
    notes: (spec.notes ?? []).map((body, i) =>
      mapped({ body, created_at: '2024-01-01T00:00:00Z' }, 'notes.csv', i + 2),
    ),
    transactions: (spec.transactions ?? []).map((id, i) =>
      mapped(
        { transaction_id: id, transaction_date: '2024-01-01', amount: 1, type: 'CHARGE' as const },
        'transactions.csv',
        i + 2,
      ),
    ),
    statements: (spec.statements ?? []).map((id, i) =>
      mapped(
        { statement_id: id, bill_period_from_date: '2024-01-01', bill_period_to_date: '2024-01-31' },
        'statements.csv',
        i + 2,
      ),
    ),
    paymentInstructions: (spec.paymentInstructions ?? []).map((reference, i) =>
      mapped(
        {
          import_supplier: supplier,
          external_account_number: spec.number,
          vendor: 'STRIPE',
          reference,
          type: 'CARD' as const,
        },
        'payment_instructions.csv',
        i + 2,
      ),
    ),
  };
}

export function orphanEntry(spec: Omit<AccountSpec, 'invalid' | 'billingName'>, supplier = 'ACME'): ExportEntry {
  const orphan: OrphanItems = {
    externalAccountNumber: spec.number,
    importSupplier: supplier,
    ...items(spec, supplier),
  };
  return { kind: 'orphan', items: orphan };
}

export async function* stream(entries: ExportEntry[]): AsyncGenerator<ExportEntry> {
  for (const entry of entries) yield entry;
}
