import type { AccountRow, AccountState, Ledger } from '../ledger/index.js';
import { addToTotals, emptyTotals, planAccount, type AccountPlan, type PlanOptions, type PlanTotals } from './plan.js';

// Reads the ledger page by page (keyset paging, like the engine's pump) and applies the pure
// plan of plan.ts to every account: the rows of --dry-run, and the accounts a filtered run
// (--limit, --accounts) may touch.

export interface PlannedAccount {
  id: number;
  importSupplier: string;
  externalAccountNumber: string;
  state: AccountState;
  nextCheckAt: number | null;
  errorCode: string | undefined;
  plan: AccountPlan;
}

export interface PlanScan {
  totals: PlanTotals;
  /** Ids of the accounts in the plan (after --limit), with their next status check when parked. */
  selected: Map<number, { state: AccountState; nextCheckAt: number | null }>;
  /** --accounts numbers the ledger does not hold (after staging: not in the export either). */
  unknownAccounts: string[];
}

const PAGE = 1000;

/**
 * Plans every account of the ledger in id order (the ledger's order: --limit takes the first
 * N accounts in the plan). `onAccount` receives each row as it is planned (streamed output).
 */
export function scanPlan(
  ledger: Ledger,
  options: PlanOptions & { limit?: number | undefined },
  onAccount?: (row: PlannedAccount) => void,
): PlanScan {
  ledger.flush();
  const totals = emptyTotals();
  const selected: PlanScan['selected'] = new Map();
  const seen = new Set<string>();
  let afterId = 0;
  for (;;) {
    const page: AccountRow[] = ledger.read.accounts({ afterId, limit: PAGE });
    if (page.length === 0) break;
    const pending = ledger.read.waitingItemsOf(page.map((account) => account.id));
    for (const account of page) {
      afterId = account.id;
      if (options.accounts?.has(account.externalAccountNumber)) seen.add(account.externalAccountNumber);
      let plan = planAccount(account, pending.get(account.id) ?? {}, options);
      if (plan.inPlan && options.limit !== undefined && selected.size >= options.limit)
        plan = { inPlan: false, reason: 'beyond_limit', requests: {}, records: {} };
      if (plan.inPlan) selected.set(account.id, { state: account.state, nextCheckAt: account.nextCheckAt });
      addToTotals(totals, plan);
      onAccount?.({
        id: account.id,
        importSupplier: account.importSupplier,
        externalAccountNumber: account.externalAccountNumber,
        state: account.state,
        nextCheckAt: account.nextCheckAt,
        errorCode: account.error?.code,
        plan,
      });
    }
  }
  const unknownAccounts =
    options.accounts === undefined ? [] : [...options.accounts].filter((number) => !seen.has(number));
  return { totals, selected, unknownAccounts };
}
