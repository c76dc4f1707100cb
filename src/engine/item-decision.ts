import type { ErrorInfo, ItemPatch, ItemState, OpenItem } from '../ledger/index.js';
import { EngineCode } from './engine-codes.js';
import type { Failure } from './failure.js';
import { settledByResult } from './instruction-outcome.js';

// The shape of a post-import decision (item-transitions.ts) and its builders: which records get which outcome, which
// are sent again. Pure data: item-steps.ts applies it to the ledger.

/** One outcome to record: these records get this patch (one ledger write, one progress event). */
export interface Settlement {
  items: OpenItem[];
  patch: ItemPatch;
  /** The history's detail of the outcome. */
  detail?: string;
}

/** What one request's answer does to its records. */
export interface ItemDecision {
  settle: Settlement[];
  /** Records to send again, as they now stand. */
  retry: OpenItem[];
  /** The service could not take them now: the account's records wait for the next run. */
  blocked?: true;
  /** The run stops (a refusal of its configuration) once the settlements are recorded. */
  stop?: Failure;
  /** Statements refused together for a statement id on the account: each is sent alone to tell which. */
  sendAlone?: OpenItem[];
  /** The request was too large (413): its records go again in requests half its size. */
  split?: true;
}

/** The records of one request: `items` as sent (their intent committed: `sending`), `before` as they were. */
export interface SentBatch {
  items: readonly OpenItem[];
  before: readonly OpenItem[];
  /** The import supplier of the request (named when the run's configuration is refused). */
  supplier: string;
}

export function decision(settle: Settlement[], retry: OpenItem[], extra: Partial<ItemDecision> = {}): ItemDecision {
  return { settle: settle.filter((one) => one.items.length > 0), retry, ...extra };
}

export function withState(items: readonly OpenItem[], state: ItemState | undefined): OpenItem[] {
  return items.map((item) => ({ ...item, state: state ?? item.state }));
}

export function located(item: OpenItem): Pick<ErrorInfo, 'file' | 'line'> {
  return { file: item.originFile ?? undefined, line: item.originLine ?? undefined };
}

export function done(items: OpenItem[], result: string): Settlement {
  return { items, patch: { state: 'done', result, settledBy: settledByResult(result), error: null } };
}

export function unknown(items: OpenItem[], detail: string): Settlement {
  return { items, patch: { state: 'unknown', error: { code: EngineCode.outcomeUnknown, detail } } };
}
