import { CODE_LIMIT, limitDetail } from '../../errors.js';
import { STATE_FACTS, statesWhere } from '../../engine/index.js';
import type { AccountRow, AccountState, ItemState } from '../../ledger/index.js';
import type { V2StatusRecord } from '../../schema/index.js';

// The join of `migrate status`: the service's view of an import supplier (the v1
// lists, and v2 status where it was asked) with the ledger's, per external account number.
// Pure: tested with plain data; status-gather.ts does the reading.

/** What the v1 lists say of one account: imported (an account exists) or pending (staged, not imported). */
export interface ServiceEntry {
  platformAccountNumber: string | null;
  pending: boolean;
}

/** Service-side answer of an account: from the lists, 'absent' when neither list names it; null when offline. */
export type ServiceListing = 'imported' | 'pending' | 'absent';

/**
 * - only_in_ledger: the ledger says it was sent, the service has no import process for it.
 * - only_on_service: the service has a process the ledger does not know (another tool, another state directory).
 * - differs: both know it and disagree (e.g. the ledger says errored, the service says imported, or the two hold
 *   different platform account numbers).
 */
export type Mismatch = 'only_in_ledger' | 'only_on_service' | 'differs';

export interface StatusRow {
  import_supplier: string;
  external_account_number: string;
  /** The ledger's state; null when the ledger does not know the account (or there is no ledger). */
  state: AccountState | null;
  /** The v1 lists' answer; null offline. */
  service: ServiceListing | null;
  /** v2 status, where it was asked: any word (the spec's enum may grow, spec "Versioning"). */
  service_status: string | null;
  /** The service's number first (it is the platform's truth), else the ledger's. */
  platform_account_number: string | null;
  latest_error: { code: string; detail: string } | null;
  mismatch: Mismatch | null;
  /** The ledger's platform account number, where the service's differs from it (a contradiction: `differs`). */
  ledger_platform_account_number?: string;
}

/** Ledger states in which the service holds an import process for the account, so its lists should name it. */
const WITH_IMPORT_PROCESS: ReadonlySet<AccountState> = new Set(statesWhere('hasImportProcess'));

function listingOf(entry: ServiceEntry | undefined): ServiceListing {
  if (entry === undefined) return 'absent';
  return entry.pending ? 'pending' : 'imported';
}

export function mismatchOf(
  state: AccountState | null,
  listing: ServiceListing | null,
  v2: string | null,
): Mismatch | null {
  if (listing === null) return null;
  if (state === null) return listing === 'absent' ? null : 'only_on_service';
  if (listing === 'absent') return WITH_IMPORT_PROCESS.has(state) ? 'only_in_ledger' : null;
  const importedOnService = listing === 'imported' || v2 === 'PROCESSED';
  if (STATE_FACTS[state].imported && !importedOnService) return 'differs';
  if (state === 'errored' && importedOnService) return 'differs';
  return null;
}

/** One account's row: the ledger row (if any) joined with the service's entry and v2 status (if asked). */
export function joinRow(input: {
  supplier: string;
  externalAccountNumber: string;
  account: AccountRow | undefined;
  entry: ServiceEntry | undefined;
  online: boolean;
  v2: V2StatusRecord | null | undefined;
}): StatusRow {
  const { account, entry, online, v2 } = input;
  const listing = online ? listingOf(entry) : null;
  const v2Status = v2?.status ?? null;
  const state = account?.state ?? null;
  const latest = v2?.latest_error ?? null;
  const ledgerError = account !== undefined && STATE_FACTS[account.state].needsPerson ? account.error : null;
  // Both hold a platform account number and they differ: one of them is wrong, a person must look.
  const ledgerNumber = account?.platformAccountNumber ?? null;
  const numberDiffers =
    online && ledgerNumber !== null && !!entry?.platformAccountNumber && entry.platformAccountNumber !== ledgerNumber;
  return {
    import_supplier: input.supplier,
    external_account_number: input.externalAccountNumber,
    state,
    service: listing,
    service_status: v2Status,
    platform_account_number: entry?.platformAccountNumber ?? account?.platformAccountNumber ?? null,
    latest_error: latest
      ? { code: limitDetail(latest.code ?? '', CODE_LIMIT), detail: limitDetail(latest.detail ?? '') }
      : ledgerError
        ? { code: ledgerError.code, detail: ledgerError.detail }
        : null,
    mismatch: numberDiffers ? 'differs' : mismatchOf(state, listing, v2Status),
    ...(numberDiffers && ledgerNumber !== null ? { ledger_platform_account_number: ledgerNumber } : {}),
  };
}

/** Whether the row shows an account ERRORED on the platform (v2 says so, or the ledger recorded it). */
export function isErrored(row: StatusRow): boolean {
  return (
    row.service_status === 'ERRORED' ||
    row.service_status === 'DRY_RUN_ERRORED' ||
    (row.service_status === null && row.state === 'errored')
  );
}

/** Records by what they wait for, in the words an operator acts on. */
export function holdOf(state: ItemState, accountState: AccountState | null): string {
  if (state === 'held') return 'held back: record invalid';
  if (state === 'failed') return 'failed: refused by the service';
  if (state === 'unknown') return 'unknown outcome: check on the platform';
  if (accountState === 'invalid') return 'held back: account invalid';
  if (accountState === 'errored') return 'waiting: account ERRORED';
  if (accountState === 'processed') return state === 'sending' ? 'sent, answer not recorded' : 'to send next push';
  return `waiting: account ${accountState ?? 'unknown'}`;
}
