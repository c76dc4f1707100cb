import type { z } from 'zod';
import {
  DEFAULT_TRANSACTION_FLAGS,
  accountPayloadSchema,
  historicalStatementsCreatedSchema,
  historicalStatementsRequestSchema,
  notesCreatedSchema,
  notesRequestSchema,
  paymentInstructionCreatedSchema,
  paymentInstructionRequestSchema,
  transactionImportErrorSchema,
  transactionsCreatedSchema,
  transactionsRequestSchema,
  v1StatusSchema,
  v2StatusSchema,
  type AccountPayload,
  type HistoricalStatementsRequest,
  type NotesRequest,
  type PaymentInstructionRequest,
  type TransactionQueryFlags,
  type TransactionsRequest,
  type V1StatusRecord,
  type V2StatusRecord,
  type Dialect,
  type MoneyBody,
  type TenantBody,
} from '../schema/index.js';
import {
  AlreadyImportedError,
  NotFoundError,
  UnexpectedResponseError,
  ValidationFailedError,
  type ApiError,
} from './errors.js';
import { codeOf, detailOf, type ServiceResponse } from './map-response.js';
import { listBodyReader } from './list-body.js';
import type { EndpointSafety } from './retry-policy.js';
import type { ReadBody } from './transport.js';
import type {
  CreateAccountOutcome,
  HistoricalStatementsOutcome,
  ListCollector,
  NotesOutcome,
  PaymentInstructionOutcome,
  TransactionsOutcome,
  ValidateOutcome,
} from './types.js';

// One definition per endpoint of the spec ("Endpoints"): method, path, body, how safe it is to
// resend, how a success is parsed (zod response schemas: a body that does not match is an
// UnexpectedResponseError naming the field), and which error answers are outcome values.

export interface EndpointCall<T> {
  name: string;
  method: 'GET' | 'POST';
  /** Path under the base URL, query included. */
  path: string;
  body?: unknown;
  /** Checked for undocumented fields before sending (ClientOptions.checkRequests). */
  requestSchema?: z.ZodType;
  /**
   * What requestSchema checks, when not the whole body (the account payload: attrs relative to it, as the service gives
   * them).
   */
  checked?: unknown;
  /** Which body's declared tenant fields pass the documented-fields guard (ClientOptions.tenantFields). */
  tenant?: TenantBody;
  safety: EndpointSafety;
  /** The body's money, sent as decimal strings in the `kraken` dialect. */
  money?: MoneyBody;
  /** Spec "Create payment instruction": its 500 means nothing was applied. */
  serverErrorMeansNotApplied?: boolean;
  /** The service always has this endpoint (the spec gives it no 404): a 404 means the base URL is not the service's. */
  alwaysThere?: boolean;
  /** Reads a 2xx body as it arrives, instead of parsing it whole (called once per attempt). */
  readBody?: ReadBody;
  /** A 2xx answer. */
  success(response: ServiceResponse): T;
  /** A non-2xx answer that the contract returns as a value (else the error is thrown or retried). */
  expected?(error: ApiError, response: ServiceResponse): T | undefined;
}

const segment = (value: string): string => encodeURIComponent(value);

/** Parses a success body with its response schema; a mismatch names the endpoint and the field. */
export function parseBody<S extends z.ZodType>(schema: S, name: string, response: ServiceResponse): z.infer<S> {
  const parsed = schema.safeParse(response.body);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  throw new UnexpectedResponseError(
    name,
    response.status,
    issue?.message ?? 'does not match the spec',
    issue?.path.map(String).join('.') ?? '',
  );
}

/** The code the sandbox (and, we expect, the service) gives a create for a process still running. */
export const PROCESS_IN_PROGRESS = 'account_import_process_in_progress';
const STATEMENT_EXISTS = 'historical_statement_already_exists';

/** What shapes the account requests beyond the payload (ClientOptions: dialect, taskParams). */
export interface AccountWire {
  dialect: Dialect;
  taskParams: Record<string, unknown>;
}

export function validateAccountCall(payload: AccountPayload): EndpointCall<ValidateOutcome> {
  return {
    name: 'validateAccount',
    method: 'POST',
    path: '/v2/data-import/accounts/validate/',
    alwaysThere: true,
    body: { payload },
    requestSchema: accountPayloadSchema,
    // Declared tenant fields pass the documented-fields guard; nothing else does.
    checked: payload,
    tenant: 'account',
    money: 'account',
    safety: 'idempotent',
    success: () => ({ kind: 'valid' }),
    expected: (error) =>
      error instanceof ValidationFailedError ? { kind: 'invalid', errors: error.issues } : undefined,
  };
}

export function createAccountCall(payload: AccountPayload, wire: AccountWire): EndpointCall<CreateAccountOutcome> {
  return {
    name: 'createAccount',
    method: 'POST',
    path: '/v2/data-import/accounts/',
    alwaysThere: true,
    // The real platform's schema requires task_params beside payload (every parameter optional).
    body: wire.dialect === 'kraken' ? { payload, task_params: wire.taskParams } : { payload },
    requestSchema: accountPayloadSchema,
    checked: payload,
    tenant: 'account',
    money: 'account',
    // A resend of a create that was applied is answered "already imported" (400, spec "Errors") or,
    // while the first one is still processing, "in progress": both are outcomes, so no duplicate.
    safety: 'deduplicated',
    success: () => ({ kind: 'scheduled' }),
    expected: (error, response) => {
      if (error instanceof AlreadyImportedError)
        return { kind: 'already_imported', platformAccountNumber: error.platformAccountNumber };
      if (!(error instanceof ValidationFailedError)) return undefined;
      if (error.serviceCode === PROCESS_IN_PROGRESS) return { kind: 'in_progress', detail: detailOf(response.body) };
      return { kind: 'invalid', errors: error.issues };
    },
  };
}

export function importStatusCall(
  importSupplier: string,
  externalAccountNumber: string,
): EndpointCall<V2StatusRecord | null> {
  return {
    name: 'getImportStatus',
    method: 'GET',
    path: `/v2/data-import/accounts/${segment(importSupplier)}/${segment(externalAccountNumber)}/`,
    safety: 'idempotent',
    success: (response) => parseBody(v2StatusSchema, 'getImportStatus', response),
    expected: (error) => (error instanceof NotFoundError ? null : undefined),
  };
}

export function transferStatusCall(
  importSupplier: string,
  externalAccountNumber: string,
): EndpointCall<V1StatusRecord | null> {
  return {
    name: 'getTransferStatus',
    method: 'GET',
    path: `/v1/data-import/account-transfer-status/${segment(importSupplier)}/${segment(externalAccountNumber)}/`,
    safety: 'idempotent',
    success: (response) => parseBody(v1StatusSchema, 'getTransferStatus', response),
    expected: (error) => (error instanceof NotFoundError ? null : undefined),
  };
}

export type ListKind = 'all' | 'pending' | 'imported';
const LIST_NAMES = { all: 'listAllImports', pending: 'listPendingImports', imported: 'listImportedAccounts' } as const;

/**
 * A list is read as it arrives (list-body.ts), each entry handed to a collector opened for the attempt: a resend after
 * a partial read starts on a fresh one, and the call resolves with the collector of the attempt that read the whole
 * body.
 */
export function listCall<R>(kind: ListKind, importSupplier: string, collect: () => ListCollector<R>): EndpointCall<R> {
  const name = LIST_NAMES[kind];
  const path = `/v1/data-import/${kind}-account-import-processes/${segment(importSupplier)}/`;
  let collector: ListCollector<R> | undefined;
  return {
    name,
    method: 'GET',
    path,
    safety: 'idempotent',
    readBody: (status) => {
      const opened = collect();
      collector = opened;
      return listBodyReader(name, status, (item) => opened.add(item), path);
    },
    success: () => (collector ?? collect()).result(),
    // Spec: the imported list is "returned when imported accounts exist"; a 404 then means none.
    expected: (error) => (kind === 'imported' && error instanceof NotFoundError ? collect().result() : undefined),
  };
}

export function notesCall(request: NotesRequest): EndpointCall<NotesOutcome> {
  return {
    name: 'createNotes',
    method: 'POST',
    path: '/v1/data-import/notes/create/',
    body: request,
    requestSchema: notesRequestSchema,
    tenant: 'notes',
    // A resent note is answered NOTE_ALREADY_EXISTS (same body and created_at, spec "Create notes").
    safety: 'deduplicated',
    success: (response) => ({
      kind: 'created',
      results: parseBody(notesCreatedSchema, 'createNotes', response).map(noteResult),
    }),
    expected: (error) =>
      error instanceof ValidationFailedError ? { kind: 'invalid', errors: error.issues } : undefined,
  };
}

function noteResult(item: z.infer<typeof notesCreatedSchema>[number]) {
  return { ...item, body: item.body ?? null };
}

export function transactionsCall(
  request: TransactionsRequest,
  flags: Partial<TransactionQueryFlags> = {},
): EndpointCall<TransactionsOutcome> {
  const resolved = { ...DEFAULT_TRANSACTION_FLAGS, ...flags };
  const query =
    `check_previously_added=${resolved.check_previously_added}` +
    `&force_add_to_current_statement=${resolved.force_add_to_current_statement}`;
  return {
    name: 'createTransactions',
    method: 'POST',
    path: `/v1/data-import/transactions/create/?${query}`,
    body: request,
    requestSchema: transactionsRequestSchema,
    tenant: 'transactions',
    money: 'transactions',
    // Only check_previously_added=true makes a resend harmless (TRANSACTION_ALREADY_EXISTS); without
    // it a resend after a lost answer could add the transactions twice.
    safety: resolved.check_previously_added ? 'deduplicated' : 'unsafe',
    success: (response) => ({
      kind: 'created',
      results: parseBody(transactionsCreatedSchema, 'createTransactions', response).results,
    }),
    expected: (error, response) => {
      const failed = transactionImportErrorSchema.safeParse(response.body);
      if (response.status === 400 && failed.success) {
        return {
          kind: 'import_error',
          errorDetail: failed.data.error_detail,
          transactionData: failed.data.transaction_data,
        };
      }
      return error instanceof ValidationFailedError ? { kind: 'invalid', errors: error.issues } : undefined;
    },
  };
}

export function statementsCall(request: HistoricalStatementsRequest): EndpointCall<HistoricalStatementsOutcome> {
  return {
    name: 'createHistoricalStatements',
    method: 'POST',
    path: '/v1/data-import/historical-statements/create/',
    body: request,
    requestSchema: historicalStatementsRequestSchema,
    tenant: 'statements',
    // A resend is refused whole with historical_statement_already_exists (dedup by statement_id,
    // docs/service.md "Historical statements"): an outcome the engine verifies, never a second statement.
    safety: 'deduplicated',
    // The spec gives both 200 and 201 for success; any 2xx is read the same way.
    success: (response) => ({
      kind: 'created',
      statements: parseBody(historicalStatementsCreatedSchema, 'createHistoricalStatements', response).statements,
    }),
    expected: (error) => {
      if (!(error instanceof ValidationFailedError)) return undefined;
      const exists =
        error.serviceCode === STATEMENT_EXISTS ||
        (error.issues.length > 0 && error.issues.every((issue) => issue.code === STATEMENT_EXISTS));
      if (exists) return { kind: 'already_exists', detail: error.issues[0]?.detail ?? '' };
      return { kind: 'invalid', errors: error.issues };
    },
  };
}

export function paymentInstructionCall(request: PaymentInstructionRequest): EndpointCall<PaymentInstructionOutcome> {
  return {
    name: 'createPaymentInstruction',
    method: 'POST',
    path: '/v1/data-import/payment-instruction/create/',
    body: request,
    requestSchema: paymentInstructionRequestSchema,
    tenant: 'payment_instruction',
    // No dedup for instructions: resent only where the service says nothing was applied (its 500).
    safety: 'vendor_call',
    serverErrorMeansNotApplied: true,
    success: (response) => {
      const created = parseBody(paymentInstructionCreatedSchema, 'createPaymentInstruction', response);
      return { kind: 'created', platformAccountNumber: created.platform_account_number, reference: created.reference };
    },
    // 400: invalid, or the vendor failed persistently: "not to be retried in the same form" (spec);
    // or the account has its one active instruction already (the platform's rule).
    expected: (error, response) => {
      if (response.status !== 400 || error instanceof AlreadyImportedError) return undefined;
      const errors = error instanceof ValidationFailedError ? error.issues : [];
      const detail = detailOf(response.body) || errors[0]?.detail || error.message;
      if (isAlreadyActive(response.body)) return { kind: 'already_active', detail };
      return { kind: 'refused', detail, errors };
    },
  };
}

/** The sandbox's code for a second instruction on an account; the real platform gives only `error_detail`. */
const INSTRUCTION_EXISTS = 'payment_instruction_already_exists';
const ALREADY_ACTIVE = /already has an active instruction/i;

/**
 * The real platform's CreatePaymentInstructionError for an account that has its active instruction
 * (`{error_detail: "Account already has an active instruction", external_account_number,
 * import_supplier, reference}`): no code, so its `error_detail` is read.
 */
function isAlreadyActive(body: unknown): boolean {
  return codeOf(body) === INSTRUCTION_EXISTS || ALREADY_ACTIVE.test(detailOf(body));
}
