import { createHash } from 'node:crypto';
import { setImmediate } from 'node:timers/promises';
import { compareKeys } from '../intake/index.js';
import { ControlTally } from '../intake/control-totals.js';
import type { SourceUse } from '../shape/index.js';
import type { ExportAccount, ExportEntry, MappedItem, OrphanItems, SourceIssue } from '../mapping/types.js';
import {
  canonicalJson,
  ITEM_KINDS,
  purgedKey,
  type AccountState,
  type ItemKind,
  type Ledger,
  type StoredIssue,
} from '../ledger/index.js';
import type { EngineEvent, EventSink, StageSummary } from './events.js';
import type { StagingGate } from './staging-gate.js';
import { naturalKeyOf } from './natural-key.js';
import { decideAccount, decideItem } from './stage-plan.js';

// Staging: the export, streamed, into the ledger, in transactions of `batchSize` entries.
// Decisions are pure (stage-plan.ts); this file only reads the current rows and applies them.

/**
 * The export as staging reads it: entries in external account number order, each account complete (every file is
 * known to hold no further row for it: intake/export-in-order.ts).
 */
export interface ExportSource {
  entries(): AsyncIterable<ExportEntry>;
  /** Once entries() was read to its end: its source files' rows read and used (intake ExportReader.sourceUse). */
  sourceUse?(): Promise<SourceUse>;
  /** Entries of the export directory not read, with their reasons (the control totals list them). */
  readonly summary?: { readonly notRead: ReadonlyArray<{ name: string }> };
}

/** A source read once (tests, the dry run's scratch join). */
export function sourceOf(entries: AsyncIterable<ExportEntry>): ExportSource {
  return { entries: () => entries };
}

export interface StageOptions {
  signal?: AbortSignal | undefined;
  /** Accounts committed so far, for the executor working beside staging; finished at the end. */
  gate?: StagingGate;
  batchSize?: number;
  /**
   * Most milliseconds of staging between two turns of the event loop, while requests are in
   * flight beside it (their answers wait for the turn): reading and writing what was read.
   */
  sliceMs?: number;
}

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

const keyOf = (entry: ExportEntry): string =>
  entry.kind === 'account' ? entry.account.externalAccountNumber : entry.items.externalAccountNumber;

function emptySummary(): StageSummary {
  const items = Object.fromEntries(ITEM_KINDS.map((kind) => [kind, 0])) as Record<ItemKind, number>;
  return {
    accounts: 0,
    invalid: 0,
    orphans: 0,
    changedAfterImport: 0,
    recordsChangedAfterImport: 0,
    duplicateNotes: 0,
    beforeOpenPeriod: 0,
    omittedValues: 0,
    added: { accounts: 0, items },
  };
}

/**
 * Stages the export. An entry's rows are committed together, and entries come complete and in
 * number order, so an account the gate has passed has every row of the export in the ledger.
 */
export async function stageExport(
  ledger: Ledger,
  source: ExportSource,
  sink: EventSink,
  options: StageOptions = {},
): Promise<StageSummary> {
  const { signal, gate } = options;
  const batchSize = options.batchSize ?? 500;
  const summary = emptySummary();
  const tally = new ControlTally();
  let batch: ExportEntry[] = [];
  // Entries out of number order (a source that does not sort; intake never hands them out): the gate cannot say which
  // accounts are in, so it holds where it was until the whole export is staged (staging-gate.ts hold()).
  let previousKey: string | undefined;
  // Milliseconds of ledger writes per entry, as measured so far: a slice's reading stops early enough to leave room
  // for writing what it read.
  let applyMsPerEntry = 0;
  // Accounts found invalid in a batch: told once the batch is committed.
  const invalid: InvalidEvent[] = [];
  const apply = (): void => {
    const current = batch;
    batch = [];
    if (current.length === 0) return;
    const startedAt = performance.now();
    ledger.batch(() => current.forEach((entry) => stageEntry(ledger, entry, summary, invalid)));
    for (const event of invalid.splice(0)) sink.emit(event);
    const perEntry = (performance.now() - startedAt) / current.length;
    applyMsPerEntry = applyMsPerEntry === 0 ? perEntry : 0.8 * applyMsPerEntry + 0.2 * perEntry;
    gate?.readyToCreate(summary.added.accounts);
    for (const entry of current) {
      const key = keyOf(entry);
      if (previousKey !== undefined && compareKeys(key, previousKey) < 0) gate?.hold();
      previousKey = key;
    }
    gate?.advance(previousKey as string);
    sink.emit({ type: 'staging', accounts: summary.accounts, orphans: summary.orphans, added: summary.added });
  };
  let sliceStart = performance.now();
  // While the next entry is slow to come (the reader waits for the disk or the parsing thread), what was read is
  // committed once the slice is over, so that the executor is never kept from accounts that are in.
  let waiting = true;
  const stalled = new SliceTimer(options.sliceMs, () => {
    if (waiting) apply();
  });
  try {
    for await (const entry of untilAborted(source.entries(), signal)) {
      waiting = false;
      tally.take(entry);
      summary.omittedValues += (entry.kind === 'account' ? entry.account.omitted : entry.items.omitted)?.length ?? 0;
      batch.push(entry);
      if (batch.length >= batchSize) apply();
      // Stopped between batches: what is staged is committed, the rest is staged by the next run.
      if (signal?.aborted) break;
      const sliceEnds =
        performance.now() - sliceStart + batch.length * applyMsPerEntry >= (options.sliceMs ?? Infinity);
      if (sliceEnds) {
        apply();
        await setImmediate();
        await gate?.roomAhead(signal);
        sliceStart = performance.now();
        stalled.restart();
      }
      waiting = true;
    }
  } finally {
    stalled.stop();
  }
  apply();
  // Read to its end: the export's control totals are the ledger's, for `migrate report` (stopped: the next run's).
  if (!signal?.aborted) await recordTotals(ledger, source, tally);
  // Stopped: the rest of the export has not passed (the executor is stopping too).
  if (!signal?.aborted) gate?.finish();
  sink.emit({ type: 'staged', ...summary, ...(signal?.aborted ? { stopped: true } : {}) });
  return summary;
}

/** The control totals of an export read to its end: its unused rows first, the totals last (they mark it whole). */
async function recordTotals(ledger: Ledger, source: ExportSource, tally: ControlTally): Promise<void> {
  const use = await source.sourceUse?.();
  let next = 1;
  for await (const rows of use?.unused() ?? []) {
    ledger.recordUnusedRows(next, rows);
    next += rows.length;
  }
  ledger.recordExportTotals({
    kinds: tally.totals(),
    sources: use?.files ?? [],
    unclaimed: (source.summary?.notRead ?? []).map((entry) => entry.name),
    controlCounts: use?.controlCounts ?? [],
  });
}

/** One timer per slice (not per entry): fires `onEnd` once `sliceMs` have passed since the last restart. */
class SliceTimer {
  #timer: NodeJS.Timeout | undefined;

  constructor(
    readonly sliceMs: number | undefined,
    readonly onEnd: () => void,
  ) {
    this.restart();
  }

  restart(): void {
    if (this.sliceMs === undefined || !Number.isFinite(this.sliceMs)) return;
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => {
      this.onEnd();
      this.restart();
    }, this.sliceMs);
    this.#timer.unref();
  }

  stop(): void {
    clearTimeout(this.#timer);
  }
}

/**
 * The entries until the signal is aborted: an abort ends the loop at once, even while the next entry is awaited (a
 * file being sorted yields its first entry only once it is read to its end); the reader is closed by its owner.
 */
async function* untilAborted<T>(entries: AsyncIterable<T>, signal: AbortSignal | undefined): AsyncGenerator<T> {
  const iterator = entries[Symbol.asyncIterator]();
  const aborted = new Promise<'aborted'>((resolve) => {
    if (signal?.aborted) resolve('aborted');
    signal?.addEventListener('abort', () => resolve('aborted'), { once: true });
  });
  let finished = false;
  try {
    for (;;) {
      const pending = iterator.next();
      // Left pending by an abort, it may reject once the reader is closed: nobody waits for it then.
      pending.catch(() => undefined);
      const next = await Promise.race([pending, aborted]);
      if (next === 'aborted' || next.done === true) {
        finished = next !== 'aborted';
        return;
      }
      yield next.value;
    }
  } finally {
    // An abort leaves the pending next() to the reader's close; a loop that ended otherwise closes the iterator.
    if (!finished && !signal?.aborted) await iterator.return?.();
  }
}

type InvalidEvent = Extract<EngineEvent, { type: 'invalid' }>;

function stageEntry(ledger: Ledger, entry: ExportEntry, summary: StageSummary, invalid: InvalidEvent[]): void {
  summary.duplicateNotes += (entry.kind === 'account' ? entry.account : entry.items).duplicateNotes ?? 0;
  summary.beforeOpenPeriod =
    (summary.beforeOpenPeriod ?? 0) + ((entry.kind === 'account' ? entry.account : entry.items).beforeOpenPeriod ?? 0);
  if (entry.kind === 'account') {
    summary.accounts += 1;
    const { id, state, changed } = stageAccount(ledger, entry.account, summary);
    if (state === 'invalid' && changed) noteInvalid(id, entry.account, invalid);
    stageItems(ledger, id, state, entry.account, summary);
  } else {
    summary.orphans += 1;
    const { id, state, foundNowhere } = orphanAccount(ledger, entry.items);
    const reopened = stageItems(ledger, id, state, entry.items, summary);
    // New records for an account found nowhere before: it is looked up again (it may exist now).
    if (reopened && foundNowhere)
      ledger.updateAccountNow(
        id,
        { state: 'unresolved', error: null },
        { step: 'stage', from: 'invalid', detail: 'new post-import records: looked up again' },
      );
  }
}

/** An account as staging left it: its id and state. */
interface StagedAccount {
  id: number;
  state: AccountState | undefined;
  /** Staging wrote the account (new, or its data or state changed). */
  changed?: boolean;
}

function stageAccount(ledger: Ledger, account: ExportAccount, summary: StageSummary): StagedAccount {
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
  if (state === 'staged' && existing?.state !== 'staged') summary.added.accounts += 1;
  return { id, state, changed: decision.action !== 'keep' };
}

/**
 * An account staging left invalid: told when this staging made it so (an unchanged invalid account is not told
 * again).
 */
function noteInvalid(id: number, account: ExportAccount, invalid: InvalidEvent[]): void {
  const first = account.issues[0];
  if (first === undefined) return;
  const error = errorOfIssue(first);
  invalid.push({
    type: 'invalid',
    accountId: id,
    externalAccountNumber: account.externalAccountNumber,
    code: error.code,
    ...(error.file === undefined ? {} : { file: error.file }),
    ...(error.line === undefined ? {} : { line: error.line }),
    issues: account.issues.length,
  });
}

/** Origins and source columns, kept so that a later run can map the service's `attr` back to file, line and column. */
function originsJson(account: ExportAccount): string {
  const columnOf = (account as { columnOf?: Record<string, Record<string, string>> }).columnOf;
  return JSON.stringify({ origins: account.origins, ...(columnOf === undefined ? {} : { columnOf }) });
}

function orphanAccount(ledger: Ledger, items: OrphanItems): StagedAccount & { foundNowhere?: boolean } {
  const existing = ledger.findAccount(items.importSupplier, items.externalAccountNumber);
  // Invalid without a payload: known only by records, and looked up in vain (engine/transitions.ts).
  if (existing !== undefined)
    return {
      id: existing.id,
      state: existing.state,
      foundNowhere: existing.state === 'invalid' && existing.payload === null && existing.fingerprint === null,
    };
  // Not in this export: resolved through the service's v1 status before its records are pushed.
  const id = ledger.insertAccount(
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
  return { id, state: 'unresolved' };
}

type ItemSource = Pick<ExportAccount, 'notes' | 'transactions' | 'statements' | 'paymentInstructions'>;

function stageItems(
  ledger: Ledger,
  accountId: number,
  accountState: AccountState | undefined,
  source: ItemSource,
  summary: StageSummary,
): boolean {
  const lists: Array<[ItemKind, Array<MappedItem<unknown>>]> = [
    ['note', source.notes],
    ['transaction', source.transactions],
    ['statement', source.statements],
    ['payment_instruction', source.paymentInstructions],
  ];
  let reopened = false;
  for (const [kind, list] of lists) {
    for (const item of list) {
      const waiting = stageItem(ledger, accountId, kind, item, summary);
      if (waiting === 'added') summary.added.items[kind] += 1;
      reopened = waiting !== false || reopened;
    }
  }
  // New records for an account already done: it goes back to its post-import steps.
  if (reopened && accountState === 'done')
    ledger.updateAccountNow(
      accountId,
      { state: 'processed' },
      { step: 'stage', from: 'done', detail: 'new post-import records' },
    );
  return reopened;
}

/** Whether the item is (again) waiting to be sent: `added` when it was not before, `still` when it was pending. */
function stageItem(
  ledger: Ledger,
  accountId: number,
  kind: ItemKind,
  item: MappedItem<unknown>,
  summary: StageSummary,
): 'added' | 'still' | false {
  const body = canonicalJson(item.value);
  const key = naturalKeyOf(kind, item.value);
  const incoming = { body, fingerprint: sha256(body), valid: item.issues.length === 0, naturalKey: key };
  // After a ledger purge a record may be kept by its key's sha256 only (ledger/purge-sql.ts).
  const existing =
    ledger.findItem(accountId, kind, key) ??
    (ledger.purged() ? ledger.findItem(accountId, kind, purgedKey(key)) : undefined);
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
    return decision.state === 'pending' && 'added';
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
    if (decision.patch.changedFingerprint) summary.recordsChangedAfterImport += 1;
    if (decision.patch.state !== 'pending') return false;
    return existing.state === 'pending' ? 'still' : 'added';
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
