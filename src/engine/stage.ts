import { createHash } from 'node:crypto';
import type { ExportAccount, ExportEntry, MappedItem, OrphanItems, SourceIssue } from '../mapping/types.js';
import { canonicalJson, type ItemKind, type Ledger, type StoredIssue } from '../ledger/index.js';
import type { EventSink } from './events.js';
import { naturalKeyOf } from './natural-key.js';
import { decideAccount, decideItem } from './stage-plan.js';

// Staging: the export, streamed, into the ledger, in transactions of `batchSize` entries.
// Decisions are pure (stage-plan.ts); this file only reads the current rows and applies them.

export interface StageSummary {
  accounts: number;
  invalid: number;
  orphans: number;
  changedAfterImport: number;
}

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

export async function stageExport(
  ledger: Ledger,
  entries: AsyncIterable<ExportEntry>,
  sink: EventSink,
  signal?: AbortSignal,
  batchSize = 500,
): Promise<StageSummary> {
  const summary: StageSummary = { accounts: 0, invalid: 0, orphans: 0, changedAfterImport: 0 };
  let batch: ExportEntry[] = [];
  const apply = (): void => {
    const current = batch;
    batch = [];
    ledger.batch(() => current.forEach((entry) => stageEntry(ledger, entry, summary)));
    sink.emit({ type: 'staging', accounts: summary.accounts, orphans: summary.orphans });
  };
  for await (const entry of entries) {
    batch.push(entry);
    if (batch.length >= batchSize) apply();
    // Stopped between batches: what is staged is committed, the rest is staged by the next run.
    if (signal?.aborted) break;
  }
  apply();
  sink.emit({ type: 'staged', ...summary });
  return summary;
}

function stageEntry(ledger: Ledger, entry: ExportEntry, summary: StageSummary): void {
  if (entry.kind === 'account') {
    summary.accounts += 1;
    const accountId = stageAccount(ledger, entry.account, summary);
    stageItems(ledger, accountId, entry.account);
  } else {
    summary.orphans += 1;
    stageItems(ledger, orphanAccount(ledger, entry.items), entry.items);
  }
}

function stageAccount(ledger: Ledger, account: ExportAccount, summary: StageSummary): number {
  const payload = canonicalJson(account.payload);
  const incoming = { payload, fingerprint: sha256(payload), valid: account.issues.length === 0 };
  const existing = ledger.findAccount(account.importSupplier, account.externalAccountNumber);
  const fromService =
    existing?.state === 'invalid' && ledger.read.issues(existing.id).some((issue) => issue.source === 'service');
  const decision = decideAccount(existing, incoming, fromService);
  if (!incoming.valid) summary.invalid += 1;
  const firstIssue = account.issues[0];
  const error = firstIssue === undefined ? undefined : errorOfIssue(firstIssue);
  let id: number;
  if (decision.action === 'insert') {
    id = ledger.insertAccount(
      {
        importSupplier: account.importSupplier,
        externalAccountNumber: account.externalAccountNumber,
        state: decision.state,
        payload,
        fingerprint: incoming.fingerprint,
        originFile: account.origin.file,
        originLine: account.origin.line,
        origins: originsJson(account),
      },
      { step: 'stage', detail: error?.code ?? null },
    );
    if (error !== undefined) ledger.updateAccountNow(id, { error });
  } else {
    id = existing?.id ?? 0;
    if (decision.action === 'update') {
      const origin = {
        originFile: account.origin.file,
        originLine: account.origin.line,
        origins: originsJson(account),
      };
      const state = decision.patch.state;
      const withError = state === 'invalid' && error !== undefined ? { error } : {};
      ledger.updateAccountNow(
        id,
        { ...origin, ...decision.patch, ...withError },
        { step: decision.step, from: existing?.state ?? null, detail: decision.detail ?? null },
      );
      if (decision.patch.changedFingerprint) summary.changedAfterImport += 1;
    }
  }
  const state =
    decision.action === 'insert'
      ? decision.state
      : decision.action === 'update'
        ? (decision.patch.state ?? existing?.state)
        : existing?.state;
  if (state === 'invalid' && !fromService) ledger.replaceIssues(id, account.issues.map(storedIssue));
  if (state === 'staged') ledger.replaceIssues(id, []);
  return id;
}

/** Origins and source columns, kept so that a later run can map the service's `attr` back to file, line and column. */
function originsJson(account: ExportAccount): string {
  const columnOf = (account as { columnOf?: Record<string, Record<string, string>> }).columnOf;
  return JSON.stringify({ origins: account.origins, ...(columnOf === undefined ? {} : { columnOf }) });
}

function orphanAccount(ledger: Ledger, items: OrphanItems): number {
  const existing = ledger.findAccount(items.importSupplier, items.externalAccountNumber);
  if (existing !== undefined) return existing.id;
  // Not in this export: resolved through the service's v1 status before its records are pushed.
  return ledger.insertAccount(
    {
      importSupplier: items.importSupplier,
      externalAccountNumber: items.externalAccountNumber,
      state: 'unresolved',
      payload: null,
      fingerprint: null,
      originFile: null,
      originLine: null,
      origins: null,
    },
    { step: 'stage', detail: 'post-import records of an account not in this export' },
  );
}

type ItemSource = Pick<ExportAccount, 'notes' | 'transactions' | 'statements' | 'paymentInstructions'>;

function stageItems(ledger: Ledger, accountId: number, source: ItemSource): void {
  const lists: Array<[ItemKind, Array<MappedItem<unknown>>]> = [
    ['note', source.notes],
    ['transaction', source.transactions],
    ['statement', source.statements],
    ['payment_instruction', source.paymentInstructions],
  ];
  let reopened = false;
  for (const [kind, list] of lists) {
    for (const item of list) reopened = stageItem(ledger, accountId, kind, item) || reopened;
  }
  if (reopened) {
    const account = ledger.accountById(accountId);
    // New records for an account already done: it goes back to its post-import steps.
    if (account?.state === 'done')
      ledger.updateAccountNow(
        accountId,
        { state: 'processed' },
        { step: 'stage', from: 'done', detail: 'new post-import records' },
      );
  }
}

/** Returns true when the item is (again) waiting to be sent. */
function stageItem(ledger: Ledger, accountId: number, kind: ItemKind, item: MappedItem<unknown>): boolean {
  const body = canonicalJson(item.value);
  const incoming = { body, fingerprint: sha256(body), valid: item.issues.length === 0 };
  const key = naturalKeyOf(kind, item.value);
  const existing = ledger.findItem(accountId, kind, key);
  const decision = decideItem(existing, incoming);
  const firstIssue = item.issues[0];
  const error = firstIssue === undefined ? null : errorOfIssue(firstIssue);
  const origin = { originFile: item.origin.file, originLine: item.origin.line };
  if (decision.action === 'insert') {
    const id = ledger.insertItem({
      accountId,
      kind,
      naturalKey: key,
      body,
      fingerprint: incoming.fingerprint,
      state: decision.state,
      originFile: origin.originFile,
      originLine: origin.originLine,
    });
    if (error !== null) ledger.updateItemsNow([id], { error });
    return decision.state === 'pending';
  }
  if (decision.action === 'update' && existing !== undefined) {
    const held = decision.patch.state === 'held' ? { error } : {};
    ledger.updateItemsNow(
      [existing.id],
      { ...origin, ...decision.patch, ...held },
      decision.detail === undefined
        ? undefined
        : { accountId, step: 'stage', from: existing.state, detail: decision.detail },
    );
    return decision.patch.state === 'pending';
  }
  return false;
}

function errorOfIssue(issue: SourceIssue): {
  code: string;
  detail: string;
  attr?: string;
  file: string;
  line: number;
  column?: string;
} {
  return {
    code: issue.code,
    detail: issue.message,
    attr: issue.attr,
    file: issue.file,
    line: issue.line,
    column: issue.column,
  };
}

function storedIssue(issue: SourceIssue): StoredIssue {
  return {
    code: issue.code,
    message: issue.message,
    attr: issue.attr,
    file: issue.file,
    line: issue.line,
    column: issue.column,
    source: 'local',
  };
}
