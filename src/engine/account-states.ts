import { ACCOUNT_STATES, type AccountState } from '../ledger/index.js';

// What each account state means to the tool (docs/architecture.md "The per-account state machine"), one row per
// state: every per-state list in src/ is a fact of this table, never written out again.

interface StateFacts {
  /** The executor takes it from the ledger's pages; `retry`: only with --retry-errored. */
  workable: boolean | 'retry';
  /** It waits for the service: its next step is a status check when its next check falls due. */
  waiting: boolean;
  /** Its create went out (or may have) and did not fail: a changed export no longer replaces what was sent. */
  createSent: boolean;
  /** The service holds an import process for it, so its lists should name it (`status`: only_in_ledger if not). */
  hasImportProcess: boolean;
  /** Needs a person: its data to fix (fix-data.csv, the report's "needs action"). */
  needsPerson: boolean;
  /** The service's v2 status tells something the ledger does not know (`status` asks it). */
  statusAsked: boolean;
}

type Fact = Exclude<keyof StateFacts, 'workable'>;

const no = {
  workable: false,
  waiting: false,
  createSent: false,
  hasImportProcess: false,
  needsPerson: false,
  statusAsked: false,
};

export const STATE_FACTS: Readonly<Record<AccountState, Readonly<StateFacts>>> = {
  staged: { ...no, workable: true },
  invalid: { ...no, needsPerson: true },
  creating: { ...no, workable: true, waiting: true, createSent: true, statusAsked: true },
  scheduled: { ...no, waiting: true, createSent: true, hasImportProcess: true, statusAsked: true },
  processed: { ...no, workable: true, createSent: true, hasImportProcess: true },
  errored: { ...no, workable: 'retry', hasImportProcess: true, needsPerson: true, statusAsked: true },
  done: { ...no, createSent: true, hasImportProcess: true },
  unresolved: { ...no, workable: true },
};

/** The states of which `fact` holds, in the ledger's order. */
export function statesWhere(fact: Fact): AccountState[] {
  return ACCOUNT_STATES.filter((state) => STATE_FACTS[state][fact]);
}

/** The states the engine works on when it pulls pages from the ledger. */
export function workableStates(retryErrored: boolean): AccountState[] {
  return ACCOUNT_STATES.filter((state) => {
    const { workable } = STATE_FACTS[state];
    return workable === true || (workable === 'retry' && retryErrored);
  });
}

/** The states that hold work for a run: workable or waiting (what a sharing runner leases, what retry.csv lists). */
export function statesWithWork(retryErrored: boolean): AccountState[] {
  const workable = workableStates(retryErrored);
  return ACCOUNT_STATES.filter((state) => workable.includes(state) || STATE_FACTS[state].waiting);
}

/** How far ahead of the executor a sharing runner leases accounts: the staging gate's lead. */
export function leaseLead(concurrency: number): number {
  return Math.max(16, concurrency * 4);
}
