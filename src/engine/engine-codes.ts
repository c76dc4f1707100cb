import { OPEN_PERIOD_CODES } from '../ledger/index.js';

/**
 * The engine's own codes: the outcomes and stops the engine decides itself, as the ledger, the reports and the NDJSON
 * log carry them (docs/architecture.md "Failure classes"). The client's codes are its error classes' (api/errors.ts);
 * the service's, its answers'.
 */
export const EngineCode = {
  /**
   * An account whose data `ledger purge --all` removed before its create went out, and that no export pushed since
   * holds: nothing to send (docs/data-protection.md).
   */
  payloadPurged: 'payload_purged',
  /** A record sent whose answer was lost where nothing can settle it (docs/reruns.md): never resent. */
  outcomeUnknown: 'outcome_unknown',
  /** The service refused the run's configuration (import supplier, request form), not an account's data. */
  configurationRefused: 'configuration_refused',
  /** Too many requests in a row failed after the client's retries, the service answering none of them. */
  serviceUnreachable: 'service_unreachable',
  /** Too many requests in a row failed after the client's retries, the service answering with failures (5xx, 429). */
  serviceFailing: 'service_failing',
  /** The export could not be read on while accounts were sent. */
  exportUnreadable: 'export_unreadable',
  /**
   * A create answered 201 whose import process the status checks never found (a proxy or a queue lost it): sent again
   * (docs/limits.md "Limits on what the service answers": a create answered 201 whose import process never shows).
   */
  importProcessLost: 'import_process_lost',
  /**
   * The service contradicts itself or the ledger about an account (PROCESSED without a platform_identifier, COMPLETED
   * without a platform account number): held back for a person, never counted as done.
   */
  serviceContradiction: 'service_contradiction',
  /** A request answered 413: its body is larger than the service takes (split down to one record, docs/limits.md). */
  requestTooLarge: 'request_too_large',
  /** Post-import records wait: their account is not imported (yet). */
  accountNotImported: 'account_not_imported',
  /** Records of an account that exists nowhere: not in the export, no import process on the platform. */
  accountNotFound: 'account_not_found',
  /** A transaction the service answered TRANSACTION_IMPORT_ERROR for. */
  transactionImportError: 'transaction_import_error',
  /** A transaction refused as dated outside the service's open statement period (forcing not declared). */
  outsideOpenPeriod: OPEN_PERIOD_CODES.refused,
  /** A transaction the service added with its date moved into the open statement period (forcing declared). */
  movedIntoOpenPeriod: OPEN_PERIOD_CODES.moved,
  /** A payment instruction the vendor refused, the service saying no more. */
  paymentInstructionRefused: 'payment_instruction_refused',
  /** A resent payment instruction refused because the account has an active one: the first request created it. */
  paymentInstructionAlreadyActive: 'payment_instruction_already_active',
  /**
   * An answer the spec does not describe (the client's UnexpectedResponseError), recorded on the account or record:
   * counted across runs before it is given up (failure.ts UNEXPECTED_ATTEMPTS).
   */
  unexpectedAnswer: 'unexpected_answer',
  /** The ledger could not be written (a full disk, an I/O error): the run stopped. */
  ledgerWriteFailed: 'ledger_write_failed',
  /** A shared ledger (PostgreSQL) that cannot be leased from further (docs/postgres.md). */
  ledgerUnreachable: 'ledger_unreachable',
  /** The ledger file is damaged (docs/ledger-recovery.md). */
  ledgerDamaged: 'ledger_damaged',
  /** A bug: the run stopped on an error nothing classifies. */
  internalError: 'internal_error',
} as const;

export type EngineCode = (typeof EngineCode)[keyof typeof EngineCode];
