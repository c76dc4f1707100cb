import type {
  Dialect,
  HistoricalStatement,
  Note,
  PaymentInstructionRequest,
  TenantFields,
  Transaction,
} from '../schema/index.js';
import type { AccountPayload } from '../schema/index.js';
import {
  createAccountCall,
  notesCall,
  paymentInstructionCall,
  statementsCall,
  transactionsCall,
  type EndpointCall,
} from './endpoints.js';
import { RequestRejectedError } from './errors.js';
import { serialiseCall } from './request-body.js';

// The requests push would send for one account, built by the same calls and serialised by the same function as the
// client's (endpoints.ts, request-body.ts): what `validate --show` prints, so that a payload can be read before it is
// sent. The post-import records of a kind are shown as one request (push sends them in batches of the same shape).

export interface WireRequest {
  method: string;
  path: string;
  /** The body as it goes on the wire; undefined when the client would refuse to send it (`refused`). */
  body: string | undefined;
  refused?: string;
}

export interface PreviewOptions {
  dialect: Dialect;
  taskParams: Record<string, unknown>;
  tenantFields: TenantFields;
}

export interface PreviewAccount {
  importSupplier: string;
  externalAccountNumber: string;
  /** Undefined for records of an account that is not in this export. */
  payload: AccountPayload | undefined;
  notes: Array<{ value: Note }>;
  transactions: Array<{ value: Transaction }>;
  statements: Array<{ value: HistoricalStatement }>;
  paymentInstructions: Array<{ value: PaymentInstructionRequest }>;
}

function wire<T>(call: EndpointCall<T>, options: PreviewOptions): WireRequest {
  const request = { method: call.method, path: call.path };
  try {
    return { ...request, body: serialiseCall(call, { ...options, checkRequests: true }) };
  } catch (error) {
    if (!(error instanceof RequestRejectedError)) throw error;
    return { ...request, body: undefined, refused: error.message };
  }
}

export function previewRequests(account: PreviewAccount, options: PreviewOptions): WireRequest[] {
  const keys = { import_supplier: account.importSupplier, external_account_number: account.externalAccountNumber };
  const values = <T>(items: Array<{ value: T }>): T[] => items.map((item) => item.value);
  const requests: WireRequest[] = [];
  if (account.payload) requests.push(wire(createAccountCall(account.payload, options), options));
  if (account.notes.length > 0) requests.push(wire(notesCall({ ...keys, notes: values(account.notes) }), options));
  if (account.transactions.length > 0)
    requests.push(wire(transactionsCall({ ...keys, transactions: values(account.transactions) }), options));
  if (account.statements.length > 0)
    requests.push(wire(statementsCall({ ...keys, statements: values(account.statements) }), options));
  for (const instruction of account.paymentInstructions)
    requests.push(wire(paymentInstructionCall(instruction.value), options));
  return requests;
}
