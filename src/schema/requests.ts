import { z } from 'zod';
import { accountPayloadSchema } from './account.js';
import { noteSchema } from './note.js';
import { historicalStatementSchema } from './statement.js';
import { transactionSchema } from './transaction.js';

// Request bodies of every endpoint in the spec ("Endpoints"). The client builds its requests
// from these types and the sandbox validates what it receives with the same schemas.

/**
 * The spec's post-import records, one endpoint each (notes, transactions, historical statements, payment instruction).
 */
export type PostImportKind = 'note' | 'transaction' | 'statement' | 'payment_instruction';

const importSupplier = z.string().min(1).max(255);
const externalAccountNumber = z.string().min(1).max(128);

/** Real platform's payment instruction types (docs/service.md "Payment instructions"); the spec lists CARD. */
export const PAYMENT_INSTRUCTION_TYPES = [
  'BPAY',
  'CARD',
  'CUSTOM',
  'DIRECT_DEBIT',
  'GMO_REFUND',
  'PAYMENT_SLIP',
] as const;

/** POST /v2/data-import/accounts/validate/ and POST /v2/data-import/accounts/ */
export const accountRequestSchema = z.strictObject({ payload: accountPayloadSchema });

/** POST /v1/data-import/notes/create/ */
export const notesRequestSchema = z.strictObject({
  import_supplier: importSupplier,
  external_account_number: externalAccountNumber,
  notes: z.array(noteSchema).min(1),
});

/** POST /v1/data-import/transactions/create/ (query flags are separate: TransactionQueryFlags) */
export const transactionsRequestSchema = z.strictObject({
  import_supplier: importSupplier,
  external_account_number: externalAccountNumber,
  transactions: z.array(transactionSchema).min(1),
});

/** POST /v1/data-import/historical-statements/create/ */
export const historicalStatementsRequestSchema = z.strictObject({
  import_supplier: importSupplier,
  external_account_number: externalAccountNumber,
  statements: z.array(historicalStatementSchema).min(1),
});

/** POST /v1/data-import/payment-instruction/create/ */
export const paymentInstructionRequestSchema = z.strictObject({
  import_supplier: importSupplier,
  external_account_number: externalAccountNumber,
  vendor: z.string().min(1).max(255),
  reference: z.string().min(1).max(512),
  type: z.enum(PAYMENT_INSTRUCTION_TYPES),
});

/** Optional URL parameters of the transactions endpoint; both default to true (spec "Limits"). */
export interface TransactionQueryFlags {
  check_previously_added: boolean;
  force_add_to_current_statement: boolean;
}

export const DEFAULT_TRANSACTION_FLAGS = {
  check_previously_added: true,
  force_add_to_current_statement: true,
} as const satisfies TransactionQueryFlags;

export type NotesRequest = z.infer<typeof notesRequestSchema>;
export type TransactionsRequest = z.infer<typeof transactionsRequestSchema>;
export type HistoricalStatementsRequest = z.infer<typeof historicalStatementsRequestSchema>;
export type PaymentInstructionRequest = z.infer<typeof paymentInstructionRequestSchema>;
