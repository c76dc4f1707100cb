import type { V2Status } from '../schema/index.js';
import { isoWithOffset } from './time.js';
import type { LatestError, ProcessRecord, StoredTransaction } from './records.js';
import { accountNumberOf, platformIdentifierOf } from './store.js';

// An import process as a test or a rehearsal sees it: what the sandbox received and holds, as a plain copy
// (the in-process inspector and the inspection endpoint give the same).

export interface InspectedNote {
  body: string | null;
  documentPaths: string[];
  createdAt: string;
  isPinned: boolean;
  unpinAt: string | null;
  /** Added by the sandbox (the pinned note of force_add_to_current_statement), not sent by a client. */
  bySandbox: boolean;
  /** The note's other fields as received (a tenant's), when it had any. */
  extra?: Record<string, unknown>;
}

/** A transaction as the sandbox stored it (its `data` is {} when retainPayloads is false). */
export type InspectedTransaction = StoredTransaction;

export interface InspectedPaymentInstruction {
  vendor: string;
  reference: string;
  type: string;
  createdAt: string;
  /** The instruction's other fields as received (a tenant's), when it had any. */
  extra?: Record<string, unknown>;
}

export interface InspectedAccount {
  importSupplier: string;
  externalAccountNumber: string;
  status: V2Status;
  /** `A-` + 8 upper-case hex digits once PROCESSED, else null. */
  platformAccountNumber: string | null;
  platformIdentifier: string | null;
  /** Create requests answered 201 for this pair (1 on a clean exactly-once run). */
  createRequestsAccepted: number;
  /** The payload of the latest accepted create; undefined when retainPayloads is false. */
  payload: unknown;
  latestError: LatestError | null;
  createdAt: string;
  modifiedAt: string;
  accountCreatedAt: string | null;
  notes: InspectedNote[];
  transactions: InspectedTransaction[];
  /** As echoed on creation; only {statement_id} when retainPayloads is false. */
  historicalStatements: Array<Record<string, unknown>>;
  paymentInstructions: InspectedPaymentInstruction[];
}

/** A copy of one import process: changing it changes nothing in the sandbox. */
export function inspect(record: ProcessRecord): InspectedAccount {
  const post = record.post;
  return structuredClone<InspectedAccount>({
    importSupplier: record.supplier,
    externalAccountNumber: record.externalAccountNumber,
    status: record.status,
    platformAccountNumber: accountNumberOf(record),
    platformIdentifier: platformIdentifierOf(record),
    createRequestsAccepted: record.createRequestsAccepted,
    payload: record.payload,
    latestError: record.latestError ? { ...record.latestError } : null,
    createdAt: isoWithOffset(record.createdAt),
    modifiedAt: isoWithOffset(record.modifiedAt),
    accountCreatedAt: record.accountCreatedAt === null ? null : isoWithOffset(record.accountCreatedAt),
    notes: (post?.notes ?? []).map(({ createdAtGiven: _given, ...note }) => note),
    transactions: post?.transactions ?? [],
    historicalStatements: post?.statements ?? [],
    paymentInstructions: post?.paymentInstructions ?? [],
  });
}
