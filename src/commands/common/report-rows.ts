import { limitDetail } from '../../errors.js';
import { STATE_FACTS, statesWithWork } from '../../engine/index.js';
import type { AccountRow, ItemKind, ItemState, ItemTally, ItemWithAccount, StoredIssue } from '../../ledger/index.js';

// The rows of `migrate report`'s files, as pure functions of what the ledger holds.
// Every row is keyed by import supplier and external account number, never by a row position
// (Data Loader's failure: ids written against the wrong rows).

export const ACCOUNTS_COLUMNS = [
  'import_supplier',
  'external_account_number',
  'state',
  'platform_account_number',
  'platform_identifier',
  'first_staged_at',
  'updated_at',
  'create_attempts',
  'last_run',
  'items_done',
  'items_outstanding',
  'changed_after_import',
  'error_code',
  'error_detail',
  'error_file',
  'error_line',
] as const;

export const FIX_DATA_COLUMNS = [
  'import_supplier',
  'external_account_number',
  'record',
  'record_key',
  'file',
  'line',
  'column',
  'attr',
  'code',
  'message',
  'found_by',
] as const;

export const RETRY_COLUMNS = [
  'import_supplier',
  'external_account_number',
  'record',
  'record_key',
  'state',
  'attempts',
  'code',
  'detail',
  'file',
  'line',
  'next_run',
] as const;

export const UNKNOWN_COLUMNS = [
  'import_supplier',
  'external_account_number',
  'record',
  'record_key',
  'attempts',
  'code',
  'detail',
  'file',
  'line',
  'what_to_do',
] as const;

/** records.csv: every post-import record and how it was settled, for an auditor's spot-check. */
export const RECORDS_COLUMNS = [
  'import_supplier',
  'external_account_number',
  'record',
  'record_key',
  'state',
  'settled_by',
  'result',
  'changed_after_import',
  'attempts',
  'file',
  'line',
  'updated_at',
] as const;

export type CsvRecord = Record<string, string | number>;

const text = (value: string | number | null | undefined): string | number => value ?? '';
/** An error's detail or message as a report shows it: bounded, also from a ledger written before the bound. */
const detailText = (value: string | null | undefined): string => limitDetail(value ?? '');

/** One row of accounts.csv. */
export function accountsCsvRow(account: AccountRow, tally: ItemTally | undefined): CsvRecord {
  return {
    import_supplier: account.importSupplier,
    external_account_number: account.externalAccountNumber,
    state: account.state,
    platform_account_number: text(account.platformAccountNumber),
    platform_identifier: text(account.platformIdentifier),
    first_staged_at: account.createdAt,
    updated_at: account.updatedAt,
    create_attempts: account.attempts,
    last_run: text(account.lastRunId),
    items_done: tally?.done ?? 0,
    items_outstanding: tally?.outstanding ?? 0,
    changed_after_import: account.changedFingerprint === null ? 'no' : 'yes',
    error_code: text(account.error?.code),
    error_detail: detailText(account.error?.detail),
    error_file: text(account.error?.file),
    error_line: text(account.error?.line),
  };
}

/**
 * The key a person finds the record by in the export. A note's natural key holds its body
 * (personal data, and unreadable): its file and line identify it instead.
 */
export function recordKeyOf(kind: ItemKind, naturalKey: string): string {
  return kind === 'note' ? '' : naturalKey;
}

/** How an account's stored issue was found: records of an account that exists nowhere, by looking it up. */
function foundBy(issue: StoredIssue): string {
  if (issue.source === 'local') return 'local validation';
  return issue.code === 'account_not_found' ? 'platform lookup (no such account)' : 'service validation';
}

/**
 * fix-data.csv rows of an account: every stored issue of an invalid account (local validation
 * or the service's errors mapped back to file and line), or its last error when none is
 * stored; an account the platform ERRORED, at its line of the accounts file.
 */
export function accountFixRows(account: AccountRow, issues: readonly StoredIssue[]): CsvRecord[] {
  const base = {
    import_supplier: account.importSupplier,
    external_account_number: account.externalAccountNumber,
    record: 'account',
    record_key: '',
  };
  if (account.state === 'invalid' && issues.length > 0) {
    return issues.map((issue) => ({
      ...base,
      file: text(issue.file),
      line: text(issue.line),
      column: text(issue.column),
      attr: text(issue.attr),
      code: issue.code,
      message: detailText(issue.message),
      found_by: foundBy(issue),
    }));
  }
  const error = account.error;
  if ((account.state !== 'invalid' && account.state !== 'errored') || error === null) return [];
  return [
    {
      ...base,
      file: text(error.file ?? account.originFile),
      line: text(error.line ?? account.originLine),
      column: text(error.column),
      attr: text(error.attr),
      code: error.code,
      message: detailText(error.detail),
      found_by: account.state === 'errored' ? 'platform processing (ERRORED)' : 'service validation',
    },
  ];
}

/** A fix-data.csv row of a record the service refused (failed) or that is invalid in the export (held). */
export function itemFixRow(item: ItemWithAccount): CsvRecord {
  return {
    import_supplier: item.importSupplier,
    external_account_number: item.externalAccountNumber,
    record: item.kind,
    record_key: recordKeyOf(item.kind, item.naturalKey),
    file: text(item.error?.file ?? item.originFile),
    line: text(item.error?.line ?? item.originLine),
    column: text(item.error?.column),
    attr: text(item.error?.attr),
    code: item.error?.code ?? (item.state === 'held' ? 'invalid_record' : 'refused'),
    message: detailText(item.error?.detail),
    found_by: item.state === 'held' ? 'local validation' : 'service (refused)',
  };
}

/**
 * Whether a held item's problem is listed already among its account's issues (the export reader repeats item issues
 * there).
 */
export function listedWithAccount(item: ItemWithAccount, issues: readonly StoredIssue[] | undefined): boolean {
  const error = item.error;
  if (error === null || issues === undefined) return false;
  return issues.some(
    (issue) =>
      issue.code === error.code &&
      issue.file === error.file &&
      issue.line === error.line &&
      (issue.column ?? '') === (error.column ?? ''),
  );
}

const ACCOUNT_NEXT_RUN: Partial<Record<string, string>> = {
  staged: 'creates the account',
  creating: 'asks the service whether the create landed, then creates it only if it did not',
  scheduled: 'polls the import status',
  processed: 'pushes its remaining records',
  unresolved: 'looks the account up on the service again; its records wait until it is imported',
};

const RETRIED = new Set<string>(statesWithWork(false));

/** A retry.csv row of an account: a transient failure, an unconfirmed create, or records waiting for their account. */
export function accountRetryRow(account: AccountRow): CsvRecord | undefined {
  const asksFirst = STATE_FACTS[account.state].asksFirst === true;
  const failedTransiently = account.error !== null && !asksFirst && RETRIED.has(account.state);
  if (!asksFirst && !failedTransiently) return undefined;
  return {
    import_supplier: account.importSupplier,
    external_account_number: account.externalAccountNumber,
    record: 'account',
    record_key: '',
    state: account.state,
    attempts: account.attempts,
    code: text(account.error?.code),
    detail: detailText(account.error?.detail),
    file: text(account.originFile),
    line: text(account.originLine),
    next_run: ACCOUNT_NEXT_RUN[account.state] ?? '',
  };
}

const ITEM_NEXT_RUN: Partial<Record<ItemState, string>> = {
  pending: 'sends it again',
  sending: 'sends it again; the service recognises it if the earlier request landed',
};

/** A retry.csv row of a record: pending after a transient failure, or sent without an answer (resent safely). */
export function itemRetryRow(item: ItemWithAccount): CsvRecord {
  return {
    import_supplier: item.importSupplier,
    external_account_number: item.externalAccountNumber,
    record: item.kind,
    record_key: recordKeyOf(item.kind, item.naturalKey),
    state: item.state,
    attempts: item.attempts,
    code: text(item.error?.code),
    detail: detailText(item.error?.detail),
    file: text(item.originFile),
    line: text(item.originLine),
    next_run: ITEM_NEXT_RUN[item.state] ?? '',
  };
}

/**
 * A records.csv row. settled_by (done records only): `created`, `already_exists` (the service's
 * dedup answer, or the one-active-instruction refusal of an instruction the ledger never sent),
 * `reconciled` (a payment instruction resent after a lost answer and confirmed by that refusal).
 */
export function recordRow(item: ItemWithAccount): CsvRecord {
  return {
    import_supplier: item.importSupplier,
    external_account_number: item.externalAccountNumber,
    record: item.kind,
    record_key: recordKeyOf(item.kind, item.naturalKey),
    state: item.state,
    settled_by: item.state === 'done' ? text(item.settledBy) : '',
    result: item.state === 'done' ? text(item.result) : '',
    // Sent, then changed in the export: the platform keeps what was sent (no update endpoint), so it is never resent.
    changed_after_import: item.changedFingerprint === null ? 'no' : 'yes',
    attempts: item.attempts,
    file: text(item.originFile),
    line: text(item.originLine),
    updated_at: item.updatedAt,
  };
}

const UNKNOWN_WHAT_TO_DO_ANY =
  'check on the platform whether it exists; if not, add it by hand (migrate never resends it)';
const UNKNOWN_WHAT_TO_DO: Partial<Record<ItemKind, string>> = {
  transaction:
    'sent with check_previously_added off: check on the platform whether it was added; if not, add it by hand ' +
    '(migrate never resends it)',
  payment_instruction:
    'check on the platform which instruction the account has; if this one is missing, add it by hand (migrate ' +
    'never resends it)',
};

/** An unknown-outcome.csv row: sent, no answer, and no dedup to resend it safely: a person checks the platform. */
export function unknownRow(item: ItemWithAccount): CsvRecord {
  return {
    import_supplier: item.importSupplier,
    external_account_number: item.externalAccountNumber,
    record: item.kind,
    record_key: recordKeyOf(item.kind, item.naturalKey),
    attempts: item.attempts,
    code: text(item.error?.code),
    detail: detailText(item.error?.detail),
    file: text(item.originFile),
    line: text(item.originLine),
    what_to_do: UNKNOWN_WHAT_TO_DO[item.kind] ?? UNKNOWN_WHAT_TO_DO_ANY,
  };
}
