import { CODE_LIMIT, limitDetail } from '../errors.js';
import type {
  AccountPatch,
  AccountRow,
  ErrorInfo,
  ItemPatch,
  ItemRow,
  AccountState,
  ItemKind,
  ItemState,
  SettledBy,
  StoredIssue,
} from './types.js';

// Mapping between SQLite rows (snake_case columns) and the ledger's typed rows.

type Raw = Record<string, unknown>;

const str = (value: unknown): string | null => (typeof value === 'string' ? value : null);
const num = (value: unknown): number | null =>
  typeof value === 'number' ? value : typeof value === 'bigint' ? Number(value) : null;

function errorOf(raw: Raw): ErrorInfo | null {
  const code = str(raw['error_code']);
  if (code === null) return null;
  return {
    code,
    detail: str(raw['error_detail']) ?? '',
    attr: str(raw['error_attr']) ?? undefined,
    file: str(raw['error_file']) ?? undefined,
    line: num(raw['error_line']) ?? undefined,
    column: str(raw['error_column']) ?? undefined,
  };
}

export function toAccountRow(raw: Raw): AccountRow {
  return {
    id: num(raw['id']) ?? 0,
    importSupplier: str(raw['import_supplier']) ?? '',
    externalAccountNumber: str(raw['external_account_number']) ?? '',
    state: str(raw['state']) as AccountState,
    payload: str(raw['payload']),
    fingerprint: str(raw['fingerprint']),
    sentFingerprint: str(raw['sent_fingerprint']),
    changedFingerprint: str(raw['changed_fingerprint']),
    originFile: str(raw['origin_file']),
    originLine: num(raw['origin_line']),
    origins: str(raw['origins']),
    platformAccountNumber: str(raw['platform_account_number']),
    platformIdentifier: str(raw['platform_identifier']),
    attempts: num(raw['attempts']) ?? 0,
    polls: num(raw['polls']) ?? 0,
    nextCheckAt: num(raw['next_check_at']),
    error: errorOf(raw),
    lastRunId: num(raw['last_run_id']),
    createdAt: str(raw['created_at']) ?? '',
    updatedAt: str(raw['updated_at']) ?? '',
  };
}

export function toItemRow(raw: Raw): ItemRow {
  return {
    id: num(raw['id']) ?? 0,
    accountId: num(raw['account_id']) ?? 0,
    kind: str(raw['kind']) as ItemKind,
    naturalKey: str(raw['natural_key']) ?? '',
    body: str(raw['body']) ?? '{}',
    fingerprint: str(raw['fingerprint']) ?? '',
    changedFingerprint: str(raw['changed_fingerprint']),
    state: str(raw['state']) as ItemState,
    result: str(raw['result']),
    settledBy: str(raw['settled_by']) as SettledBy | null,
    attempts: num(raw['attempts']) ?? 0,
    originFile: str(raw['origin_file']),
    originLine: num(raw['origin_line']),
    error: errorOf(raw),
    updatedAt: str(raw['updated_at']) ?? '',
  };
}

const ACCOUNT_COLUMNS: Record<string, string> = {
  state: 'state',
  payload: 'payload',
  fingerprint: 'fingerprint',
  sentFingerprint: 'sent_fingerprint',
  changedFingerprint: 'changed_fingerprint',
  originFile: 'origin_file',
  originLine: 'origin_line',
  origins: 'origins',
  platformAccountNumber: 'platform_account_number',
  platformIdentifier: 'platform_identifier',
  nextCheckAt: 'next_check_at',
};

const ITEM_COLUMNS: Record<string, string> = {
  state: 'state',
  body: 'body',
  naturalKey: 'natural_key',
  fingerprint: 'fingerprint',
  changedFingerprint: 'changed_fingerprint',
  result: 'result',
  settledBy: 'settled_by',
  originFile: 'origin_file',
  originLine: 'origin_line',
};

/** `SET` clause and parameters of a patch; column names come from the fixed tables above, never from input. */
export function toStoredIssue(raw: Raw): StoredIssue {
  return {
    code: String(raw['code']),
    message: String(raw['message']),
    attr: (raw['attr'] as string | null) ?? undefined,
    file: (raw['file'] as string | null) ?? undefined,
    line: (raw['line'] as number | null) ?? undefined,
    column: (raw['column_name'] as string | null) ?? undefined,
    source: raw['source'] === 'service' ? 'service' : 'local',
  };
}

export function setClause(
  patch: AccountPatch | ItemPatch,
  columns: 'account' | 'item',
): { sql: string; params: unknown[] } {
  const table = columns === 'account' ? ACCOUNT_COLUMNS : ITEM_COLUMNS;
  const parts: string[] = [];
  const params: unknown[] = [];
  for (const [key, value] of Object.entries(patch)) {
    const column = table[key];
    if (column === undefined || value === undefined) continue;
    parts.push(`${column} = ?`);
    params.push(value);
  }
  if ('addAttempt' in patch && patch.addAttempt) parts.push('attempts = attempts + 1');
  if ('addPoll' in patch && patch.addPoll) parts.push('polls = polls + 1');
  if ('resetPolls' in patch && patch.resetPolls) parts.push('polls = 0');
  if (patch.error !== undefined) {
    const error = patch.error;
    parts.push('error_code = ?, error_detail = ?, error_attr = ?, error_file = ?, error_line = ?, error_column = ?');
    // Whatever a service sent, the ledger keeps a bounded part of it (docs/limits.md).
    params.push(
      error ? limitDetail(error.code, CODE_LIMIT) : null,
      error ? limitDetail(error.detail) : null,
      error?.attr ?? null,
      error?.file ?? null,
      error?.line ?? null,
      error?.column ?? null,
    );
  }
  return { sql: parts.join(', '), params };
}
