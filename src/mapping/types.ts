import type {
  AccountPayload,
  HistoricalStatement,
  Note,
  PaymentInstructionRequest,
  Transaction,
} from '../schema/index.js';

// The contract between reading an export (sources + mapping) and its users: `migrate validate`
// and the engine's staging into the ledger. Everything is keyed by external account number and
// carries where it came from, so that every error can be traced to a file and line.

/**
 * Where a value came from: the export file (relative to the export directory), 1-based line (header = 1), source
 * column.
 */
export interface Origin {
  file: string;
  line: number;
  column?: string;
  /**
   * Fields of the record held by another legacy row than the record's own (a view naming every legacy row of a
   * record in `_rows`, and taking the field from a column of another table): field path -> that row and column.
   */
  fields?: Record<string, Origin>;
}

/** A problem found locally (reading, mapping or schema), or mapped back from the service's `attr`. */
export interface SourceIssue {
  file: string;
  line: number;
  /** The source column, when the problem is in one cell. */
  column?: string;
  /** The payload path, e.g. `customers.1.mobile` (for post-import items: relative to the item). */
  attr?: string;
  externalAccountNumber: string;
  code: string;
  message: string;
}

/**
 * A value dropped under the mapping file's `on_invalid: omit` (docs/export-format.md "The mapping file"): where it
 * was, the field (relative to its record), the value and why; the account goes on without it.
 */
export interface OmittedIssue extends SourceIssue {
  value: string;
}

/** One post-import record with its origin and the problems it has. */
export interface MappedItem<T> {
  value: T;
  origin: Origin;
  issues: SourceIssue[];
}

/**
 * One account of the export, joined from accounts, customers and supply addresses, with its
 * post-import records. `payload` is built whatever its problems; `issues` says why it must not
 * be sent (empty = valid). `origins` maps payload attr prefixes (`''`, `customers.0`,
 * `supply_addresses.2`) to the record they came from; `columnOf` maps a field path to its source column.
 * `issues` holds every problem of the account: its payload's and, repeated there, those of its post-import items
 * (an account with any error is not pushed, docs/export-format.md "Errors"); each item's `issues` holds its own subset.
 */
export interface ExportAccount {
  externalAccountNumber: string;
  importSupplier: string;
  payload: AccountPayload;
  origin: Origin;
  origins: Record<string, Origin>;
  issues: SourceIssue[];
  /**
   * file -> field path -> source column, where the mapping file renamed a column (with `origins`, what locateIssue
   * needs).
   */
  columnOf?: Record<string, Record<string, string>>;
  /** Values dropped under `on_invalid: omit`, in its records (absent when none). */
  omitted?: OmittedIssue[];
  /**
   * Problems that do not hold the account back (a customer given twice, a team's check of severity warning): listed by
   * validate, never sent anywhere (absent when none).
   */
  warnings?: SourceIssue[];
  notes: Array<MappedItem<Note>>;
  transactions: Array<MappedItem<Transaction>>;
  statements: Array<MappedItem<HistoricalStatement>>;
  paymentInstructions: Array<MappedItem<PaymentInstructionRequest>>;
  /** Note rows identical to an earlier note of the account (same body, created_at and every field): counted once. */
  duplicateNotes?: number;
}

/**
 * Post-import records whose account is not in this export's accounts file. Allowed: a later
 * export may add data to accounts imported earlier; `push` resolves them through the ledger or the service.
 */
export interface OrphanItems {
  externalAccountNumber: string;
  importSupplier: string;
  /** Values dropped under `on_invalid: omit` (absent when none). */
  omitted?: OmittedIssue[];
  /** Problems that do not hold the records back (ExportAccount.warnings; absent when none). */
  warnings?: SourceIssue[];
  notes: Array<MappedItem<Note>>;
  transactions: Array<MappedItem<Transaction>>;
  statements: Array<MappedItem<HistoricalStatement>>;
  paymentInstructions: Array<MappedItem<PaymentInstructionRequest>>;
  /** Note rows identical to an earlier note of the account (same body, created_at and every field): counted once. */
  duplicateNotes?: number;
}

export type ExportEntry = { kind: 'account'; account: ExportAccount } | { kind: 'orphan'; items: OrphanItems };
