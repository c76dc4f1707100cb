import type Database from 'better-sqlite3';
import { CODE_LIMIT, limitDetail } from '../errors.js';
import { openLedgerDb } from './db.js';
import { insertExportTotals, insertUnusedRows, type ExportTotals, type UnusedRow } from './export-totals.js';
import { forgetSupplier, refusedSupplierCodes, type Forgotten } from './forget.js';
import { PURGED_SETTING } from './purge-sql.js';
import { LedgerReader, type RecordedService } from './read.js';
import { setClause, toAccountRow, toItemRow } from './rows.js';
import { GroupWriter } from './writer.js';
import type {
  AccountPatch,
  AccountRow,
  AccountState,
  ItemKind,
  ItemPatch,
  ItemRow,
  ItemState,
  OpenItem,
  StoredIssue,
} from './types.js';

/** What a state change records in the events table (an account's history). */
export interface EventNote {
  step: string;
  from?: string | null;
  to?: string | null;
  detail?: string | null;
  itemId?: number | null;
}

export interface NewAccount {
  importSupplier: string;
  externalAccountNumber: string;
  state: AccountState;
  payload: string | null;
  fingerprint: string | null;
  originFile: string | null;
  originLine: number | null;
  origins: string | null;
}

export interface NewItem {
  accountId: number;
  kind: ItemKind;
  naturalKey: string;
  body: string;
  fingerprint: string;
  state: ItemState;
  originFile: string | null;
  originLine: number | null;
}

/** Where a page of accounts ended: the next page starts after this number (and id). */
export interface AccountCursor {
  number: string;
  id: number;
}

let nowMs = 0;
let nowIso = '';
/** The time of a row, as ISO text: formatted once per millisecond (thousands of rows are written per second). */
const now = (): string => {
  const ms = Date.now();
  if (ms !== nowMs) [nowMs, nowIso] = [ms, new Date(ms).toISOString()];
  return nowIso;
};

/**
 * The results ledger of one state directory. Synchronous methods (`*Now`, inserts) are for
 * staging inside `batch()`; `updateAccount` / `updateItems` go through group commit and resolve
 * once durable: the engine awaits them before a request (intent) and records outcomes with them.
 * Read functions for status and report are on `read` (LedgerReader).
 */
export class Ledger {
  readonly db: Database.Database;
  readonly read: LedgerReader;
  readonly #writer: GroupWriter;
  readonly #statements = new Map<string, Database.Statement>();
  #runId: number | null = null;
  #purged: boolean | undefined;
  readonly #presetRunId: number | null;

  /**
   * For the working copy of a PostgreSQL ledger (postgres/open.ts): `afterCommit` ships each group commit there;
   * `runId` is the run's id, drawn there (runners start runs at once), and runs of other runners are not this
   * ledger's to mark crashed.
   */
  constructor(db: Database.Database, options: { afterCommit?: () => Promise<void>; runId?: number } = {}) {
    this.db = db;
    this.read = new LedgerReader(db);
    this.#writer = new GroupWriter(db, options.afterCommit);
    this.#presetRunId = options.runId ?? null;
    this.#runId = this.#presetRunId;
  }

  static open(stateDir: string): Ledger {
    return new Ledger(openLedgerDb(stateDir));
  }

  /** A cached prepared statement; `raw`: its rows come as arrays of column values. */
  #prepare(sql: string, raw = false): Database.Statement {
    const key = raw ? `raw:${sql}` : sql;
    let statement = this.#statements.get(key);
    if (statement === undefined) {
      statement = this.db.prepare(sql);
      if (raw) statement.raw(true);
      this.#statements.set(key, statement);
    }
    return statement;
  }

  /**
   * Runs `fn` in one transaction (bulk staging: thousands of rows per commit). The engine's queued
   * writes are committed first, on their own: inside this transaction they would be committed only
   * with it, after an intent's fsync had already let its request go.
   */
  batch<T>(fn: () => T): T {
    this.flush();
    return this.db.transaction(fn)();
  }

  /** Whether a `ledger purge` has run on this ledger (some records are kept by their key's sha256 only). */
  purged(): boolean {
    this.#purged ??= this.#prepare('SELECT 1 FROM settings WHERE key = ?').get(PURGED_SETTING) !== undefined;
    return this.#purged;
  }

  /** Records the dialect of the state directory; it is chosen once (read.dialect()). */
  recordDialect(dialect: string): void {
    this.#prepare(`INSERT INTO settings (key, value) VALUES ('dialect', ?) ON CONFLICT (key) DO NOTHING`).run(dialect);
  }

  /**
   * Records the service this state directory is used with (read.service()): the first push's, or, `moved`, the one a
   * push moves it to (--move-ledger-to-service), with a note of the one before. The dialect goes with it.
   */
  recordService(service: RecordedService, moved?: { from: RecordedService; runId: number }): void {
    const set = this.#prepare(
      `INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value`,
    );
    const clear = this.#prepare(`DELETE FROM settings WHERE key = ?`);
    this.db.transaction(() => {
      set.run('service_url', service.url);
      set.run('dialect', service.dialect);
      if (service.importSupplier === undefined) clear.run('import_supplier');
      else set.run('import_supplier', service.importSupplier);
      if (moved)
        set.run(
          'service_note',
          `moved by run ${moved.runId} at ${now()} from ${moved.from.url} (${moved.from.dialect} dialect` +
            `${moved.from.importSupplier ? `, import supplier ${moved.from.importSupplier}` : ''})`,
        );
    })();
  }

  /**
   * push --retry-invalid CODE: accounts the service refused (held `invalid`, no local issue) with one of these codes,
   * as their error or among the service's issues, are staged again to be sent by this run. An earlier version held back
   * this way accounts refused for the run's configuration (an import supplier not set up yet). Returns how many.
   */
  releaseInvalid(codes: readonly string[]): number {
    if (codes.length === 0) return 0;
    this.flush();
    const marks = codes.map(() => '?').join(', ');
    const rows = this.#prepare(
      `SELECT a.id, a.payload IS NULL AND a.fingerprint IS NULL FROM accounts a WHERE a.state = 'invalid'
         AND NOT EXISTS (SELECT 1 FROM account_issues i WHERE i.account_id = a.id AND i.source = 'local')
         AND (a.error_code IN (${marks}) OR EXISTS (SELECT 1 FROM account_issues i WHERE i.account_id = a.id
           AND i.source = 'service' AND i.code IN (${marks})))`,
      true,
    ).all(...codes, ...codes) as Array<[number, number]>;
    this.batch(() => {
      // An account known only by its records (found nowhere before) is looked up again; others are created.
      for (const [id, recordsOnly] of rows)
        this.updateAccountNow(
          id,
          { state: recordsOnly === 1 ? 'unresolved' : 'staged', error: null },
          { step: 'release', from: 'invalid', detail: `--retry-invalid ${codes.join(',')}` },
        );
    });
    return rows.length;
  }

  /**
   * Removes the accounts of `supplier` that never reached the service (`ledger forget`, forget.ts); `dryRun`: only
   * says which.
   */
  forgetSupplier(supplier: string, dryRun = false): Forgotten {
    this.flush();
    return forgetSupplier(this.db, supplier, dryRun);
  }

  /**
   * Accounts staged under a supplier code the service refused as unknown, and never accepted, removed so that the
   * export is staged again as it reads now (the corrected flag, mapping or data): what went, per code.
   */
  forgetRefusedSuppliers(): Forgotten[] {
    this.flush();
    return refusedSupplierCodes(this.db)
      .map((code) => forgetSupplier(this.db, code, false))
      .filter((forgotten) => forgotten.numbers.length > 0);
  }

  // Runs ----------------------------------------------------------------------------------

  /** Records a new run; runs left `running` by a process that died are marked `crashed` first. */
  startRun(command: string, options: Record<string, unknown>): number {
    if (this.#presetRunId === null) this.#prepare(`UPDATE runs SET status = 'crashed' WHERE status = 'running'`).run();
    const result = this.#prepare(
      'INSERT INTO runs (id, command, started_at, status, options) VALUES (?, ?, ?, ?, ?)',
    ).run(this.#presetRunId, command, now(), 'running', JSON.stringify(options));
    this.#runId = Number(result.lastInsertRowid);
    return this.#runId;
  }

  finishRun(runId: number, status: string, exitCode: number, counts: Record<string, unknown>): void {
    this.#writer.flush();
    const fatal = counts['fatal'] as { code?: unknown; detail?: unknown } | undefined;
    // Why the run stopped is kept as a bounded detail, as every other (docs/limits.md).
    const kept =
      typeof fatal?.detail === 'string'
        ? { ...counts, fatal: { ...fatal, detail: limitDetail(fatal.detail) } }
        : counts;
    this.#prepare('UPDATE runs SET ended_at = ?, status = ?, exit_code = ?, counts = ? WHERE id = ?').run(
      now(),
      status,
      exitCode,
      JSON.stringify(kept),
      runId,
    );
  }

  get runId(): number | null {
    return this.#runId;
  }

  // Staging (synchronous, inside batch()) ----------------------------------------------------

  findAccount(importSupplier: string, externalAccountNumber: string): AccountRow | undefined {
    this.flush();
    const raw = this.#prepare('SELECT * FROM accounts WHERE import_supplier = ? AND external_account_number = ?').get(
      importSupplier,
      externalAccountNumber,
    ) as Record<string, unknown> | undefined;
    return raw === undefined ? undefined : toAccountRow(raw);
  }

  insertAccount(account: NewAccount, event: EventNote): number {
    const at = now();
    const result = this.#prepare(
      `INSERT INTO accounts (import_supplier, external_account_number, state, payload, fingerprint, origin_file, ` +
        `origin_line,
        origins, last_run_id, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ).run(
      account.importSupplier,
      account.externalAccountNumber,
      account.state,
      account.payload,
      account.fingerprint,
      account.originFile,
      account.originLine,
      account.origins,
      this.#runId,
      at,
      at,
    );
    const id = Number(result.lastInsertRowid);
    this.#event(id, { to: account.state, ...event });
    return id;
  }

  updateAccountNow(id: number, patch: AccountPatch, event?: EventNote): void {
    const { sql, params } = setClause(patch, 'account');
    this.#prepare(`UPDATE accounts SET ${sql}${sql ? ', ' : ''}last_run_id = ?, updated_at = ? WHERE id = ?`).run(
      ...params,
      this.#runId,
      now(),
      id,
    );
    if (event !== undefined) this.#event(id, { to: patch.state ?? null, ...event });
  }

  replaceIssues(accountId: number, issues: readonly StoredIssue[]): void {
    this.#prepare('DELETE FROM account_issues WHERE account_id = ?').run(accountId);
    const insert = this.#prepare(
      'INSERT INTO account_issues (account_id, code, message, attr, file, line, column_name, source) VALUES (?, ' +
        '?, ?, ?, ?, ?, ?, ?)',
    );
    for (const issue of issues) {
      insert.run(
        accountId,
        limitDetail(issue.code, CODE_LIMIT),
        limitDetail(issue.message),
        issue.attr ?? null,
        issue.file ?? null,
        issue.line ?? null,
        issue.column ?? null,
        issue.source,
      );
    }
  }

  /** The account as it stands now, the engine's queued writes included. */
  currentAccount(id: number): AccountRow | undefined {
    this.flush();
    return this.accountById(id);
  }

  accountById(id: number): AccountRow | undefined {
    const raw = this.#prepare('SELECT * FROM accounts WHERE id = ?').get(id) as Record<string, unknown> | undefined;
    return raw === undefined ? undefined : toAccountRow(raw);
  }

  findItem(accountId: number, kind: ItemKind, naturalKey: string): ItemRow | undefined {
    const raw = this.#prepare('SELECT * FROM items WHERE account_id = ? AND kind = ? AND natural_key = ?').get(
      accountId,
      kind,
      naturalKey,
    ) as Record<string, unknown> | undefined;
    return raw === undefined ? undefined : toItemRow(raw);
  }

  insertItem(item: NewItem): number {
    const result = this.#prepare(
      `INSERT INTO items (account_id, kind, natural_key, body, fingerprint, state, origin_file, origin_line, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ).run(
      item.accountId,
      item.kind,
      item.naturalKey,
      item.body,
      item.fingerprint,
      item.state,
      item.originFile,
      item.originLine,
      now(),
    );
    return Number(result.lastInsertRowid);
  }

  updateItemsNow(ids: readonly number[], patch: ItemPatch, event?: EventNote & { accountId: number }): void {
    const { sql, params } = setClause(patch, 'item');
    const statement = this.#prepare(`UPDATE items SET ${sql}${sql ? ', ' : ''}updated_at = ? WHERE id = ?`);
    for (const id of ids) statement.run(...params, now(), id);
    if (event !== undefined) {
      const detail = event.detail ?? null;
      for (const id of ids) this.#event(event.accountId, { ...event, to: patch.state ?? null, itemId: id, detail });
    }
  }

  // Engine (group commit) -------------------------------------------------------------------

  /** Applies a patch and records the event; resolves once durable. */
  updateAccount(id: number, patch: AccountPatch, event?: EventNote): Promise<void> {
    return this.#writer.write(() => this.updateAccountNow(id, patch, event));
  }

  /** An outcome nobody waits for: as updateAccount, committed with the next commit (GroupWriter's `deferred`). */
  updateAccountDeferred(id: number, patch: AccountPatch, event?: EventNote): Promise<void> {
    return this.#writer.write(() => this.updateAccountNow(id, patch, event), false, true);
  }

  /** An outcome nobody waits for: as updateItems, committed with the next commit. */
  updateItemsDeferred(
    ids: readonly number[],
    patch: ItemPatch,
    event?: EventNote & { accountId: number },
  ): Promise<void> {
    return this.#writer.write(() => this.updateItemsNow(ids, patch, event), false, true);
  }

  /** `durable`: fsynced even against a power loss (intents the service cannot deduplicate). */
  updateItems(
    ids: readonly number[],
    patch: ItemPatch,
    event?: EventNote & { accountId: number },
    durable = false,
  ): Promise<void> {
    return this.#writer.write(() => this.updateItemsNow(ids, patch, event), durable);
  }

  /** Several writes committed together (e.g. an item outcome and the account's next state). */
  commit(apply: () => void): Promise<void> {
    return this.#writer.write(apply);
  }

  /**
   * Commits queued writes now. The engine does not await outcomes (only intents), so every
   * read that decides which accounts to start work on flushes first: a stale state could
   * otherwise start an account twice. Reads inside one account's chain need no flush: only
   * that chain writes the account and its items while it runs.
   */
  flush(): void {
    this.#writer.flush();
  }

  /**
   * Accounts in `states` after `after` in external account number order (then id), up to `upTo`
   * (null: no bound): the engine's pages, keyset paging (never OFFSET) in the order the export is
   * staged in.
   */
  pageAccounts(
    states: readonly AccountState[],
    after: AccountCursor | undefined,
    limit: number,
    upTo: string | null = null,
  ): AccountRow[] {
    this.flush();
    const marks = states.map(() => '?').join(', ');
    // `+state`: walk the number index from the cursor and filter, O(rows) over a whole pass. With
    // the (state, id) index SQLite sorts every remaining match per page: quadratic at a million.
    const bounded = upTo === null ? '' : 'AND external_account_number <= ?';
    const rows = this.#prepare(
      `SELECT * FROM accounts WHERE (external_account_number, id) > (?, ?) ${bounded} ` +
        `AND +state IN (${marks}) ORDER BY external_account_number, id LIMIT ?`,
    ).all(after?.number ?? '', after?.id ?? 0, ...(upTo === null ? [] : [upTo]), ...states, limit) as Array<
      Record<string, unknown>
    >;
    return rows.map(toAccountRow);
  }

  /**
   * Scheduled accounts (and creates being reconciled) whose next status check is due, earliest
   * first, with an external account number up to `upTo` (null: any). `scheduledDueBy`: scheduled
   * accounts only count as due up to this time (the engine holds some back for a list call).
   */
  dueChecks(nowMs: number, limit: number, upTo: string | null = null, scheduledDueBy = nowMs): AccountRow[] {
    this.flush();
    // One indexed range scan per state (an IN list would sort every due row before the LIMIT).
    const query = this.#prepare(
      `SELECT * FROM accounts WHERE state = ? AND next_check_at <= ? ` +
        `${upTo === null ? '' : 'AND external_account_number <= ?'} ORDER BY next_check_at LIMIT ?`,
    );
    const bound = upTo === null ? [] : [upTo];
    const rows = [
      ...(query.all('scheduled', scheduledDueBy, ...bound, limit) as Array<Record<string, unknown>>),
      ...(query.all('creating', nowMs, ...bound, limit) as Array<Record<string, unknown>>),
    ];
    return rows
      .map(toAccountRow)
      .sort((a, b) => (a.nextCheckAt ?? 0) - (b.nextCheckAt ?? 0))
      .slice(0, limit);
  }

  /**
   * When the earliest check of a parked account is due (ms), or null when none is parked: scheduled accounts and
   * creates being reconciled, or only those in `states`.
   */
  nextCheckAt(states: ReadonlyArray<'scheduled' | 'creating'> = ['scheduled', 'creating']): number | null {
    this.flush();
    const query = this.#prepare(`SELECT MIN(next_check_at) AS at FROM accounts WHERE state = ?`);
    const times = states
      .map((state) => (query.get(state) as { at: number | null }).at)
      .filter((at): at is number => at !== null);
    return times.length === 0 ? null : Math.min(...times);
  }

  /**
   * Makes every scheduled account's status check due by `at` (a --no-wait run takes up what earlier runs left waiting
   * at once: it will not wait for a check due later). Returns how many were brought forward.
   */
  checksDueBy(at: number): number {
    this.flush();
    return this.#prepare(`UPDATE accounts SET next_check_at = ? WHERE state = 'scheduled' AND next_check_at > ?`).run(
      at,
      at,
    ).changes;
  }

  /** Import suppliers that have scheduled accounts (for the imported-accounts list call). */
  scheduledSuppliers(): string[] {
    const rows = this.#prepare(
      `SELECT DISTINCT import_supplier AS s FROM accounts WHERE state = 'scheduled' LIMIT 20`,
    ).all() as Array<{ s: string }>;
    return rows.map((row) => row.s);
  }

  /**
   * A supplier's scheduled accounts (bounded by how many wait for processing): external account number -> when its
   * first status check is due (ms), or null once it has been checked.
   */
  scheduledAccounts(importSupplier: string): Map<string, number | null> {
    this.flush();
    const rows = this.#prepare(
      `SELECT external_account_number, CASE WHEN polls = 0 THEN next_check_at END FROM accounts ` +
        `WHERE state = 'scheduled' AND import_supplier = ?`,
      true,
    ).all(importSupplier) as Array<[string, number | null]>;
    return new Map(rows);
  }

  countInState(state: AccountState): number {
    this.flush();
    return (this.#prepare('SELECT COUNT(*) AS n FROM accounts WHERE state = ?').get(state) as { n: number }).n;
  }

  /**
   * An account's items in some states, in id order (kind order is the caller's): read once per account by the
   * post-import steps, so only the columns they use, as arrays (a whole row as an object cost three times as much).
   */
  itemsOf(accountId: number, states: readonly ItemState[]): OpenItem[] {
    const marks = states.map(() => '?').join(', ');
    const statement = this.#prepare(
      'SELECT id, kind, natural_key, body, state, attempts, origin_file, origin_line FROM items ' +
        `WHERE account_id = ? AND state IN (${marks}) ORDER BY id`,
      true,
    );
    const rows = statement.all(accountId, ...states) as Array<
      [number, ItemKind, string, string, ItemState, number, string | null, number | null]
    >;
    return rows.map(([id, kind, naturalKey, body, state, attempts, originFile, originLine]) => ({
      id,
      kind,
      naturalKey,
      body,
      state,
      attempts,
      originFile,
      originLine,
    }));
  }

  #event(accountId: number, event: EventNote): void {
    this.#prepare(
      'INSERT INTO events (run_id, account_id, item_id, at, step, from_state, to_state, detail) VALUES (?, ?, ?, ' +
        '?, ?, ?, ?, ?)',
    ).run(
      this.#runId,
      accountId,
      event.itemId ?? null,
      now(),
      event.step,
      event.from ?? null,
      event.to ?? null,
      event.detail == null ? null : limitDetail(event.detail),
    );
  }

  /**
   * The control totals of the export this run read to its end (export-totals.ts): its unused rows come first, in
   * batches numbered on from `firstId` (each inside batch()), and the totals last, which mark the record complete.
   */
  recordUnusedRows(firstId: number, rows: readonly UnusedRow[]): void {
    if (this.#runId === null || rows.length === 0) return;
    const runId = this.#runId;
    this.batch(() => insertUnusedRows(this.db, runId, firstId, rows));
  }

  recordExportTotals(totals: ExportTotals): void {
    if (this.#runId === null) return;
    const runId = this.#runId;
    this.batch(() => insertExportTotals(this.db, runId, totals));
  }

  /** Commits what is queued, checkpoints the WAL and closes the database. */
  close(): void {
    this.#writer.flush();
    this.#writer.close();
    if (this.db.open) {
      this.db.pragma('wal_checkpoint(TRUNCATE)');
      this.db.close();
    }
  }
}
