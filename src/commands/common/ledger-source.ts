import { join } from 'node:path';
import { messageOf, UsageError } from '../../errors.js';
import {
  checkStateDir,
  hasLedger,
  ITEM_KINDS,
  LEDGER_FILE,
  LedgerDamagedError,
  openCampaignReader,
  type AccountRow,
  type AccountState,
  type CampaignReader,
  type ItemState,
  type ItemWithAccount,
} from '../../ledger/index.js';

// The ledger as `migrate status` and `migrate report` read it: opened read-only with a message for the operator when
// it cannot be, and walked page by page (the consumer's back-pressure paces the reads). No SQL here: the queries are
// the ledger's (ledger/campaign-read.ts).

/** The read-only ledger that `status` and `report` read (its queries: ledger/campaign-read.ts). */
export type LedgerSource = CampaignReader;

/** True when the state directory holds a ledger (not one whose creation a kill left unfinished: that is none). */
export function ledgerExists(stateDir: string): boolean {
  return hasLedger(stateDir);
}

/** Opens a state directory's ledger read-only (a push may be writing it: WAL lets both go on). */
export function openLedgerSource(stateDir: string): LedgerSource {
  checkStateDir(stateDir, 'read', LEDGER_FILE);
  if (!ledgerExists(stateDir)) {
    throw new UsageError(
      `no ledger in ${stateDir} (${LEDGER_FILE} not found, or left unfinished by a run killed as it created it): ` +
        `give the --state directory of the migration's push runs`,
      'ledger_not_found',
    );
  }
  try {
    return openCampaignReader(stateDir);
  } catch (error) {
    if (error instanceof LedgerDamagedError) throw error;
    throw new UsageError(
      `${join(stateDir, LEDGER_FILE)}: cannot be opened (${messageOf(error)})`,
      'ledger_unreadable',
      error,
    );
  }
}

/**
 * Every row of a paged query, page after page: the caller sees one flat async stream while at
 * most one page is held (the consumer's back-pressure pauses the next read).
 */
// Async so that the consumer's back-pressure paces the reads.
// eslint-disable-next-line @typescript-eslint/require-await
export async function* pagesOf<T extends { id: number }>(
  fetch: (afterId: number, limit: number) => T[],
  pageSize = 1000,
): AsyncGenerator<T[]> {
  let afterId = 0;
  for (;;) {
    const page = fetch(afterId, pageSize);
    if (page.length === 0) return;
    yield page;
    afterId = page[page.length - 1]?.id ?? afterId;
    if (page.length < pageSize) return;
  }
}

/** Pages of accounts in any of `states` (one state after another), or of all accounts when none is given. */
export async function* accountPagesOf(
  source: LedgerSource,
  options: { supplier?: string | undefined; states?: readonly AccountState[]; pageSize?: number },
): AsyncGenerator<AccountRow[]> {
  const states = options.states === undefined || options.states.length === 0 ? [undefined] : options.states;
  for (const state of states) {
    yield* pagesOf(
      (afterId, limit) => source.accounts({ supplier: options.supplier, state, afterId, limit }),
      options.pageSize,
    );
  }
}

/** Pages of items in any of `states`, kind after kind (ITEM_KINDS order), joined with their account. */
export async function* itemPagesOf(
  source: LedgerSource,
  options: { supplier?: string | undefined; states: readonly ItemState[]; pageSize?: number },
): AsyncGenerator<ItemWithAccount[]> {
  for (const kind of ITEM_KINDS) {
    for (const state of options.states) {
      yield* pagesOf(
        (afterId, limit) => source.items({ state, kind, supplier: options.supplier, afterId, limit }),
        options.pageSize,
      );
    }
  }
}
