import type { PostImportKind } from '../schema/index.js';

/**
 * The per-account states of the ledger (docs/architecture.md, "The per-account state
 * machine"), plus `unresolved`: an account known only through post-import records of an export
 * that does not hold it; it is looked up on the service before its records are pushed.
 */
export const ACCOUNT_STATES = [
  'staged',
  'invalid',
  'creating',
  'scheduled',
  'processed',
  'errored',
  'done',
  'unresolved',
] as const;
export type AccountState = (typeof ACCOUNT_STATES)[number];

/**
 * Post-import item states. `sending` is the write-ahead intent: committed before the request,
 * replaced by the outcome after it. `unknown`: the outcome could not be established and a
 * resend could duplicate it (a payment instruction, or a transaction with check_previously_added
 * off): left for an operator. `held`: the record itself is invalid.
 */
export const ITEM_STATES = ['pending', 'held', 'sending', 'done', 'failed', 'unknown'] as const;
export type ItemState = (typeof ITEM_STATES)[number];

/**
 * How a `done` item was settled, for an auditor's spot-check (`migrate report` records.csv):
 * `created`: the service created it on this request; `already_exists`: the service said it was
 * there already (NOTE_ALREADY_EXISTS, TRANSACTION_ALREADY_EXISTS, a statement id on the account, a
 * payment instruction refused because the account has its one active instruction); `reconciled`:
 * a payment instruction whose earlier request may have landed (answer lost, crash), resent and
 * answered "already has an active instruction": the earlier request created it.
 */
export const SETTLED_BY = ['created', 'already_exists', 'reconciled'] as const;
export type SettledBy = (typeof SETTLED_BY)[number];

export type ItemKind = PostImportKind;
/** The order in which post-import steps run for an account (docs/architecture.md "The per-account state machine"). */
export const ITEM_KINDS: readonly ItemKind[] = ['note', 'transaction', 'statement', 'payment_instruction'];

/** Why an account or item is not done: the service's or the local validator's code, traced to the export. */
export interface ErrorInfo {
  code: string;
  detail: string;
  attr?: string | undefined;
  file?: string | undefined;
  line?: number | undefined;
  column?: string | undefined;
}

export interface AccountRow {
  id: number;
  importSupplier: string;
  externalAccountNumber: string;
  state: AccountState;
  payload: string | null;
  fingerprint: string | null;
  sentFingerprint: string | null;
  changedFingerprint: string | null;
  originFile: string | null;
  originLine: number | null;
  origins: string | null;
  platformAccountNumber: string | null;
  platformIdentifier: string | null;
  attempts: number;
  polls: number;
  nextCheckAt: number | null;
  error: ErrorInfo | null;
  lastRunId: number | null;
  createdAt: string;
  updatedAt: string;
}

export interface ItemRow {
  id: number;
  accountId: number;
  kind: ItemKind;
  naturalKey: string;
  body: string;
  fingerprint: string;
  changedFingerprint: string | null;
  state: ItemState;
  result: string | null;
  /** Set when the item is done (null otherwise, and for items done before the column existed and not backfilled). */
  settledBy: SettledBy | null;
  attempts: number;
  originFile: string | null;
  originLine: number | null;
  error: ErrorInfo | null;
  updatedAt: string;
}

/** What the engine reads of a record to send it (Ledger.itemsOf): the columns it uses, not the whole row. */
export type OpenItem = Pick<
  ItemRow,
  'id' | 'kind' | 'naturalKey' | 'body' | 'state' | 'attempts' | 'originFile' | 'originLine'
>;

/** Fields of an account a transition may set; `error: null` clears the last error. */
export interface AccountPatch {
  state?: AccountState;
  payload?: string | null;
  fingerprint?: string | null;
  sentFingerprint?: string | null;
  changedFingerprint?: string | null;
  originFile?: string | null;
  originLine?: number | null;
  origins?: string | null;
  platformAccountNumber?: string | null;
  platformIdentifier?: string | null;
  addAttempt?: boolean;
  addPoll?: boolean;
  /** Status checks count again from 0 (a create is sent: its checks are counted, docs/limits.md). */
  resetPolls?: boolean;
  nextCheckAt?: number | null;
  error?: ErrorInfo | null;
}

export interface ItemPatch {
  state?: ItemState;
  body?: string;
  /** A purged record's key given back with its body (`ledger purge` keeps only the key's sha256). */
  naturalKey?: string;
  fingerprint?: string;
  changedFingerprint?: string | null;
  result?: string | null;
  settledBy?: SettledBy | null;
  addAttempt?: boolean;
  originFile?: string | null;
  originLine?: number | null;
  error?: ErrorInfo | null;
}

/** One line of an account's history (the events table). */
export interface LedgerEvent {
  id: number;
  runId: number | null;
  accountId: number;
  itemId: number | null;
  at: string;
  step: string;
  fromState: string | null;
  toState: string | null;
  detail: string | null;
}

export interface RunRow {
  id: number;
  command: string;
  startedAt: string;
  endedAt: string | null;
  status: string;
  exitCode: number | null;
  options: Record<string, unknown>;
  counts: Record<string, unknown> | null;
}

/** An issue kept for an invalid account (local validation, or the service's errors mapped to the export). */
export interface StoredIssue {
  code: string;
  message: string;
  attr?: string | undefined;
  file?: string | undefined;
  line?: number | undefined;
  column?: string | undefined;
  source: 'local' | 'service';
}
