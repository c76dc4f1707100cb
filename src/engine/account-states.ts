import { ACCOUNT_STATES, type AccountState, type ItemState } from '../ledger/index.js';

// What each account state means to the tool (docs/architecture.md "The per-account state machine"), one row per
// state naming the facts that hold of it: every per-state list in src/ is a fact of this table, not written out again.

interface StateFacts {
  /** The executor takes it from the ledger's pages; `retry`: only with --retry-errored. */
  workable?: true | 'retry';
  /** It waits for the service: its next step is a status check when its next check falls due. */
  waiting?: true;
  /** Whether it exists on the service is not known yet: the next step asks first (an unconfirmed create, a lookup). */
  asksFirst?: true;
  /** Its create went out (or may have) and did not fail: a changed export no longer replaces what was sent. */
  createSent?: true;
  /** The ledger knows it imported: the platform's account number adopted. */
  imported?: true;
  /** The service holds an import process for it, so its lists should name it (`status`: only_in_ledger if not). */
  hasImportProcess?: true;
  /** Needs a person: its data to fix (fix-data.csv, the report's "needs action"). */
  needsPerson?: true;
  /** The service's v2 status tells something the ledger does not know (`status` asks it). */
  statusAsked?: true;
}

export const STATE_FACTS: Readonly<Record<AccountState, Readonly<StateFacts>>> = {
  staged: { workable: true },
  invalid: { needsPerson: true },
  creating: { workable: true, asksFirst: true, waiting: true, createSent: true, statusAsked: true },
  scheduled: { waiting: true, createSent: true, hasImportProcess: true, statusAsked: true },
  processed: { workable: true, createSent: true, imported: true, hasImportProcess: true },
  errored: { workable: 'retry', hasImportProcess: true, needsPerson: true, statusAsked: true },
  done: { createSent: true, imported: true, hasImportProcess: true },
  unresolved: { workable: true, asksFirst: true },
};

/** The record states that need a person: held invalid, refused by the service, of unknown outcome (never resent). */
export const ITEMS_FOR_A_PERSON: readonly ItemState[] = ['failed', 'held', 'unknown'];

/** The states of which `fact` holds, in the ledger's order. */
export function statesWhere(fact: Exclude<keyof StateFacts, 'workable'>): AccountState[] {
  return ACCOUNT_STATES.filter((state) => STATE_FACTS[state][fact] === true);
}

/** The states the engine works on when it pulls pages from the ledger. */
export function workableStates(retryErrored: boolean): AccountState[] {
  const taken = retryErrored ? [true, 'retry'] : [true];
  return ACCOUNT_STATES.filter((state) => taken.includes(STATE_FACTS[state].workable ?? false));
}

/** The states that hold work for a run: workable or waiting (what a sharing runner leases, what retry.csv lists). */
export function statesWithWork(retryErrored: boolean): AccountState[] {
  const workable = workableStates(retryErrored);
  return ACCOUNT_STATES.filter((state) => workable.includes(state) || STATE_FACTS[state].waiting === true);
}

/** How far ahead of the executor a sharing runner leases accounts: the staging gate's lead. */
export function leaseLead(concurrency: number): number {
  return Math.max(16, concurrency * 4);
}
