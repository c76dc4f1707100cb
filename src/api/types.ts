import type {
  AccountPayload,
  HistoricalStatementsRequest,
  ListItem,
  NotesRequest,
  PaymentInstructionRequest,
  TransactionQueryFlags,
  TransactionsRequest,
  V1StatusRecord,
  V2StatusRecord,
  ValidationIssue,
} from '../schema/index.js';

// The contract between the engine and the client of the import service. Methods resolve with
// the expected answers of the spec, as values, including the service's dedup answers, which
// count as success on a rerun; they reject with an ApiError (src/api/errors.ts) for anything
// else (after the retry policy has given up).

export type ValidateOutcome = { kind: 'valid' } | { kind: 'invalid'; errors: ValidationIssue[] };

export type CreateAccountOutcome =
  | { kind: 'scheduled' }
  /** 400 already imported: the account exists; adopt its platform account number. */
  | { kind: 'already_imported'; platformAccountNumber: string }
  | { kind: 'invalid'; errors: ValidationIssue[] };

export interface NoteResult {
  body: string | null;
  created_at: string;
  status: 'NOTE_CREATION_SUCCESS' | 'NOTE_ALREADY_EXISTS';
}

export type TransactionsOutcome =
  | { kind: 'created'; results: Array<{ status: string; transaction_data: Record<string, unknown> }> }
  /** 400 TRANSACTION_IMPORT_ERROR: names the first failing transaction only. */
  | { kind: 'import_error'; errorDetail: string; transactionData: Record<string, unknown> }
  | { kind: 'invalid'; errors: ValidationIssue[] };

export type HistoricalStatementsOutcome =
  | { kind: 'created'; statements: Array<Record<string, unknown>> }
  /** 400 historical_statement_already_exists: a statement id is on the account already. */
  | { kind: 'already_exists'; detail: string }
  | { kind: 'invalid'; errors: ValidationIssue[] };

export type PaymentInstructionOutcome =
  | { kind: 'created'; platformAccountNumber: string; reference: string }
  /** 400: invalid, or the vendor failed persistently; do not resend as is (spec). */
  | { kind: 'refused'; detail: string; errors: ValidationIssue[] };

export type NotesOutcome = { kind: 'created'; results: NoteResult[] } | { kind: 'invalid'; errors: ValidationIssue[] };

export interface ImportServiceClient {
  validateAccount(payload: AccountPayload): Promise<ValidateOutcome>;
  createAccount(payload: AccountPayload): Promise<CreateAccountOutcome>;
  /** v2 status; null when the import process does not exist (404). */
  getImportStatus(importSupplier: string, externalAccountNumber: string): Promise<V2StatusRecord | null>;
  /** v1 status; null when there is no account for the pair (404). */
  getTransferStatus(importSupplier: string, externalAccountNumber: string): Promise<V1StatusRecord | null>;
  listAllImports(importSupplier: string): Promise<ListItem[]>;
  listPendingImports(importSupplier: string): Promise<ListItem[]>;
  listImportedAccounts(importSupplier: string): Promise<ListItem[]>;
  /** Rejects with NotFoundError while the account is not imported. */
  createNotes(request: NotesRequest): Promise<NotesOutcome>;
  createTransactions(request: TransactionsRequest, flags?: Partial<TransactionQueryFlags>): Promise<TransactionsOutcome>;
  createHistoricalStatements(request: HistoricalStatementsRequest): Promise<HistoricalStatementsOutcome>;
  createPaymentInstruction(request: PaymentInstructionRequest): Promise<PaymentInstructionOutcome>;
  /** Closes the connection pool; in-flight requests finish first. */
  close(): Promise<void>;
}
