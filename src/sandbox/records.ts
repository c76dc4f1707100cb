import type { V2Status } from '../schema/index.js';

// The sandbox's in-memory state. Kept compact because a benchmark pushes a million accounts into
// one sandbox: numbers for times and account numbers, shared constant error objects, post-import
// data allocated only when an account first receives some.

export interface LatestError {
  readonly code: string;
  readonly detail: string;
  readonly domain: string;
}

export interface StoredNote {
  body: string | null;
  documentPaths: string[];
  /** As the response gives it: the one sent, or the time of creation. */
  createdAt: string;
  /** created_at was given by the caller (dedup then also compares it; spec "Create notes"). */
  createdAtGiven: boolean;
  isPinned: boolean;
  unpinAt: string | null;
  /** Added by the sandbox itself (the pinned note of force_add_to_current_statement). */
  bySandbox: boolean;
  /**
   * The note's other fields as received (a tenant's, such as external_id), when there are any and payloads are kept.
   */
  extra?: Record<string, unknown>;
}

export interface StoredTransaction {
  transactionId: string;
  /** The date as stored: moved into the open period when force_add_to_current_statement applied. */
  transactionDate: string;
  /** The date as sent. */
  submittedDate: string;
  /** Two-place decimal string (spec: "decimal string with two places in responses"). */
  amount: string;
  type: string;
  movedIntoOpenPeriod: boolean;
  /** The description the service added to a transaction it moved into the open period (as its answer gave it). */
  description?: string;
  data: Record<string, unknown>;
}

export interface StoredPaymentInstruction {
  vendor: string;
  reference: string;
  type: string;
  createdAt: string;
  /** The instruction's other fields as received (a tenant's, such as valid_from), when there are any. */
  extra?: Record<string, unknown>;
}

/** The fields of `raw` not in `modelled`, or undefined when there are none: what a tenant sent beyond the spec. */
export function extraFields(
  raw: Record<string, unknown>,
  modelled: ReadonlySet<string>,
): Record<string, unknown> | undefined {
  let extra: Record<string, unknown> | undefined;
  for (const [key, value] of Object.entries(raw)) if (!modelled.has(key)) (extra ??= {})[key] = value;
  return extra;
}

/** Each part is allocated when first used: most accounts receive only some kinds of post-import data. */
export interface PostImportData {
  notes?: StoredNote[];
  transactions?: StoredTransaction[];
  transactionIds?: Set<string>;
  statements?: Array<Record<string, unknown>>;
  statementIds?: Set<string>;
  paymentInstructions?: StoredPaymentInstruction[];
}

/** One import process per (supplier, external account number); a new create after ERRORED replaces it. */
export interface ProcessRecord {
  readonly supplier: string;
  readonly externalAccountNumber: string;
  status: V2Status;
  createdAt: number;
  modifiedAt: number;
  /** Bumped when a new process replaces the old one, so stale scheduler entries are skipped. */
  generation: number;
  /**
   * How the process will end, decided at create: ERRORED with this error (ERR- prefix or the seeded errored share),
   * CANCELLED (CANCEL- prefix), or PROCESSED (null).
   */
  fate: LatestError | 'CANCELLED' | null;
  latestError: LatestError | null;
  /** Set once PROCESSED: the 32-bit value behind `A-XXXXXXXX`. */
  accountNumber: number | null;
  accountCreatedAt: number | null;
  createRequestsAccepted: number;
  payload: unknown;
  post: PostImportData | undefined;
}
