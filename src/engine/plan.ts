import { ITEM_KINDS, type AccountRow, type ItemKind } from '../ledger/index.js';
import type { TransactionQueryFlags } from '../schema/index.js';
import { batchSize } from './item-batches.js';

// The plan of a push (--dry-run, --limit, --accounts, --only): for every account of the
// ledger, whether this run works on it, why (or why not), and how many requests of each kind
// that takes. Pure: plan-scan.ts reads the ledger and feeds it. --dry-run prints it; a run with
// --limit or --accounts gives the executor only the accounts it selects (selection.ts); `status`
// names its next step from it. The executor itself decides with the state machine
// (account-states.ts workableStates, item-steps.ts), which this table mirrors state by state
// (test/engine/plan.test.ts), and counts requests with the sender's own batch sizes (item-batches.ts).

/** The steps an operator can pick with --only (a create, or one post-import kind). */
export type PushStep = 'create' | ItemKind;
export const PUSH_STEPS: readonly PushStep[] = ['create', 'note', 'transaction', 'statement', 'payment_instruction'];
/** --only's names (the spec's endpoint nouns) -> steps. */
export const STEP_NAMES: Readonly<Record<string, PushStep>> = {
  create: 'create',
  notes: 'note',
  transactions: 'transaction',
  statements: 'statement',
  payment_instructions: 'payment_instruction',
};

/** The kinds of request a plan counts (per step of the pipeline). */
export const REQUEST_KINDS = [
  'create',
  'status_check',
  'note',
  'transaction',
  'statement',
  'payment_instruction',
] as const;
export type RequestKind = (typeof REQUEST_KINDS)[number];

export interface PlanOptions {
  retryErrored: boolean;
  wait: boolean;
  steps: ReadonlySet<PushStep>;
  transactionFlags: TransactionQueryFlags;
  /** --accounts: external account numbers; undefined = every account. */
  accounts?: ReadonlySet<string> | undefined;
}

/** Why an account is in the plan or not; stable codes (the --json document and the summary use them). */
export const PLAN_REASONS = {
  create: 'to create, then wait for processing and push its records',
  create_only: 'to create (no records of it to push in this run)',
  retry_errored: 'errored on the platform: created again (--retry-errored)',
  reconcile: 'create unconfirmed: its v2 status is asked before anything is resent',
  wait: 'waiting for processing: its status is checked (with --no-wait when due), then its records are pushed',
  post_import: 'imported: its remaining records are pushed',
  finish: 'imported, nothing left to send: marked done',
  resolve: 'records of an account not in the export: looked up (v1 status), pushed once it is imported',
  done: 'done already',
  invalid: 'invalid: held back until its data changes (fix-data)',
  errored: 'errored on the platform: held back (--retry-errored, or change its data)',
  not_selected_accounts: 'not in --accounts',
  beyond_limit: 'beyond --limit',
  not_selected_steps: 'nothing to do in the steps of --only',
} as const;
export type PlanReason = keyof typeof PLAN_REASONS;

export interface AccountPlan {
  inPlan: boolean;
  reason: PlanReason;
  requests: Partial<Record<RequestKind, number>>;
  /** Records this run would send, per kind. */
  records: Partial<Record<ItemKind, number>>;
}

/** Requests to send `count` records of a kind (the fewest: retries and lost answers add more). */
export function itemRequests(kind: ItemKind, count: number, flags: TransactionQueryFlags): number {
  return Math.ceil(count / batchSize(kind, flags));
}

function itemsPlan(
  pending: Partial<Record<ItemKind, number>>,
  options: PlanOptions,
): Partial<Record<RequestKind, number>> {
  const requests: Partial<Record<RequestKind, number>> = {};
  for (const kind of ITEM_KINDS) {
    const count = pending[kind] ?? 0;
    if (count > 0 && options.steps.has(kind)) requests[kind] = itemRequests(kind, count, options.transactionFlags);
  }
  return requests;
}

function recordsOf(
  requests: Partial<Record<RequestKind, number>>,
  pending: Partial<Record<ItemKind, number>>,
): Partial<Record<ItemKind, number>> {
  return Object.fromEntries(Object.entries(pending).filter(([kind]) => (requests[kind as RequestKind] ?? 0) > 0));
}

const has = (requests: Partial<Record<RequestKind, number>>): boolean => Object.values(requests).some((n) => n > 0);

/**
 * One account's plan from its ledger state and its records waiting to be sent (pending or
 * sending, per kind). --limit is applied by the caller over the accounts in the plan.
 */
export function planAccount(
  account: Pick<AccountRow, 'state' | 'externalAccountNumber'>,
  pending: Partial<Record<ItemKind, number>>,
  options: PlanOptions,
): AccountPlan {
  const planned = decide(account, pending, options);
  return { ...planned, records: recordsOf(planned.requests, pending) };
}

function decide(
  account: Pick<AccountRow, 'state' | 'externalAccountNumber'>,
  pending: Partial<Record<ItemKind, number>>,
  options: PlanOptions,
): Omit<AccountPlan, 'records'> {
  const out = (reason: PlanReason): Omit<AccountPlan, 'records'> => ({ inPlan: false, reason, requests: {} });
  if (options.accounts !== undefined && !options.accounts.has(account.externalAccountNumber))
    return out('not_selected_accounts');
  const creates = options.steps.has('create');
  const records = itemsPlan(pending, options);
  const afterProcessing = options.wait ? records : {};
  const statusChecks = options.wait ? 1 : 0;
  switch (account.state) {
    case 'done':
      return out('done');
    case 'invalid':
      return out('invalid');
    case 'errored':
    case 'staged': {
      if (account.state === 'errored' && !options.retryErrored) return out('errored');
      if (!creates) return out('not_selected_steps');
      const reason: PlanReason =
        account.state === 'errored' ? 'retry_errored' : has(afterProcessing) ? 'create' : 'create_only';
      return {
        inPlan: true,
        reason,
        requests: { create: 1, ...(statusChecks ? { status_check: statusChecks } : {}), ...afterProcessing },
      };
    }
    case 'creating':
      // Reconciling is a read; a create found never received is sent again only when create is a step.
      return { inPlan: true, reason: 'reconcile', requests: { status_check: 1, ...afterProcessing } };
    case 'scheduled':
      // --no-wait too: a run takes up the accounts earlier runs left waiting (docs/reruns.md).
      return { inPlan: true, reason: 'wait', requests: { status_check: 1, ...records } };
    case 'processed':
      if (has(records)) return { inPlan: true, reason: 'post_import', requests: records };
      // Records of kinds outside --only are left: the account stays processed.
      if (Object.values(pending).some((n) => n > 0)) return out('not_selected_steps');
      return { inPlan: true, reason: 'finish', requests: {} };
    case 'unresolved':
      return { inPlan: true, reason: 'resolve', requests: { status_check: 1, ...records } };
  }
}

/** Totals of a plan: accounts per reason, requests per kind. */
export interface PlanTotals {
  accounts: number;
  inPlan: number;
  reasons: Partial<Record<PlanReason, number>>;
  requests: Record<RequestKind, number>;
  records: Record<ItemKind, number>;
}

export function emptyTotals(): PlanTotals {
  return {
    accounts: 0,
    inPlan: 0,
    reasons: {},
    requests: { create: 0, status_check: 0, note: 0, transaction: 0, statement: 0, payment_instruction: 0 },
    records: { note: 0, transaction: 0, statement: 0, payment_instruction: 0 },
  };
}

export function addToTotals(totals: PlanTotals, plan: AccountPlan): void {
  totals.accounts += 1;
  if (plan.inPlan) totals.inPlan += 1;
  totals.reasons[plan.reason] = (totals.reasons[plan.reason] ?? 0) + 1;
  for (const kind of REQUEST_KINDS) totals.requests[kind] += plan.requests[kind] ?? 0;
  for (const kind of ITEM_KINDS) totals.records[kind] += plan.records[kind] ?? 0;
}
