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
  /**
   * 400 account_import_process_in_progress: a process for the pair exists and is not finished (for
   * example the answer to an earlier create that was lost): nothing new was scheduled; poll its status.
   */
  | { kind: 'in_progress'; detail: string }
  | { kind: 'invalid'; errors: ValidationIssue[] };

export interface NoteResult {
  body: string | null;
  /** null when the service leaves it out (tenants' documents make it optional). */
  created_at: string | null;
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
  /**
   * 400 "Account already has an active instruction": the platform keeps one active instruction
   * per account (docs/service.md "Payment instructions"). The engine reads it against its ledger:
   * after a lost answer it means the earlier request created this one.
   */
  | { kind: 'already_active'; detail: string }
  /** 400: invalid, or the vendor failed persistently; do not resend as is (spec). */
  | { kind: 'refused'; detail: string; errors: ValidationIssue[] };

export type NotesOutcome = { kind: 'created'; results: NoteResult[] } | { kind: 'invalid'; errors: ValidationIssue[] };

/**
 * Per call: `retry` 'auto' (default) resends what the retry policy allows for the endpoint
 * (creates and post-import calls after a lost answer too, because the service deduplicates);
 * 'safe' resends only what the service certainly did not apply (connection never made, 429), for
 * callers that reconcile ambiguous outcomes themselves; 'never' resends nothing (but a 401 is
 * still renewed and resent once: an unauthorised request is not processed).
 */
export interface CallOptions {
  retry?: 'auto' | 'safe' | 'never';
  /**
   * Stops waiting to resend (backoff, Retry-After) when it aborts: the call then rejects with an
   * AbortedError (`ambiguous` if the last attempt may have been applied). A request already on
   * the wire is not cut off: its answer is awaited.
   */
  signal?: AbortSignal;
}

/**
 * Takes the entries of one read of a list endpoint, each validated on its own as it arrives: the lists have no
 * pagination (every process of the supplier, docs/service.md "Status and list endpoints"), so a caller keeps only what
 * it needs. A new collector is opened for each attempt, so a resend after a partial read starts afresh, never counting
 * an entry twice; the call resolves with the `result()` of the attempt that read the whole body.
 */
export interface ListCollector<R> {
  add(item: ListItem): void;
  result(): R;
}

export interface ImportServiceClient {
  validateAccount(payload: AccountPayload, options?: CallOptions): Promise<ValidateOutcome>;
  createAccount(payload: AccountPayload, options?: CallOptions): Promise<CreateAccountOutcome>;
  /** v2 status; null when the import process does not exist (404). */
  getImportStatus(
    importSupplier: string,
    externalAccountNumber: string,
    options?: CallOptions,
  ): Promise<V2StatusRecord | null>;
  /** v1 status; null when there is no account for the pair (404). */
  getTransferStatus(
    importSupplier: string,
    externalAccountNumber: string,
    options?: CallOptions,
  ): Promise<V1StatusRecord | null>;
  /** Every import process of the supplier, through the collector (see ListCollector). */
  listAllImports<R>(importSupplier: string, collect: () => ListCollector<R>, options?: CallOptions): Promise<R>;
  listPendingImports<R>(importSupplier: string, collect: () => ListCollector<R>, options?: CallOptions): Promise<R>;
  /** An empty collector's result also when the service answers 404 (spec: 200 "when imported accounts exist"). */
  listImportedAccounts<R>(importSupplier: string, collect: () => ListCollector<R>, options?: CallOptions): Promise<R>;
  /** Rejects with NotFoundError while the account is not imported. */
  createNotes(request: NotesRequest, options?: CallOptions): Promise<NotesOutcome>;
  createTransactions(
    request: TransactionsRequest,
    flags?: Partial<TransactionQueryFlags>,
    options?: CallOptions,
  ): Promise<TransactionsOutcome>;
  createHistoricalStatements(
    request: HistoricalStatementsRequest,
    options?: CallOptions,
  ): Promise<HistoricalStatementsOutcome>;
  createPaymentInstruction(
    request: PaymentInstructionRequest,
    options?: CallOptions,
  ): Promise<PaymentInstructionOutcome>;
  /** Closes the connection pool; in-flight requests finish first. */
  close(): Promise<void>;
}
