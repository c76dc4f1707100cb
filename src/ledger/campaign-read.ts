import type Database from 'better-sqlite3';
import { lastExportTotals, unusedRowsPage, type RecordedTotals, type UnusedRow } from './export-totals.js';
import { LedgerReader } from './read.js';
import { toAccountRow, toItemRow, toStoredIssue } from './rows.js';
import type { AccountRow, AccountState, ItemKind, ItemRow, ItemState, StoredIssue } from './types.js';

// Reads for `migrate status` and `migrate report` over a whole migration campaign: per import supplier, joined with
// the account's number, batched per page of accounts, on one read-only handle. Every list is paged by key
// (`afterId`), never OFFSET and never whole: a million accounts never sit in memory at once. Plain data in and out:
// another store implements the same methods.

type Raw = Record<string, unknown>;

/** An item with the account it belongs to (reports are keyed by external account number). */
export interface ItemWithAccount extends ItemRow {
  importSupplier: string;
  externalAccountNumber: string;
  accountState: AccountState;
}

/** The last push run of a ledger, as `status` tells it. */
export interface LastPush {
  id: number;
  started_at: string;
  status: string;
  exit_code: number | null;
  fatal: { code: string; detail: string } | null;
}

/** Outstanding (not done) items of one account, and done ones, for a row of accounts.csv or status. */
export interface ItemTally {
  done: number;
  outstanding: number;
}

/** A push run with the accounts that reached done in it. */
export interface PushRunRow {
  runId: number;
  startedAt: string;
  endedAt: string | null;
  status: string;
  exitCode: number | null;
  done: number;
}

const marks = (list: readonly unknown[]): string => list.map(() => '?').join(', ');

export class CampaignReader {
  readonly read: LedgerReader;
  readonly #db: Database.Database;

  constructor(db: Database.Database) {
    this.#db = db;
    this.read = new LedgerReader(db);
  }

  /**
   * Accounts (optionally of one supplier, optionally in one state) with id > afterId, in id order.
   * One state at a time, so that the (state, id) index yields rows in id order: with `state IN
   * (...)` SQLite sorts every remaining match for each page (quadratic over a million accounts).
   * `+import_supplier` keeps the planner off the (supplier, number) index, which would sort too.
   */
  accounts({
    supplier,
    state,
    afterId,
    limit,
  }: {
    supplier?: string | undefined;
    state?: AccountState | undefined;
    afterId: number;
    limit: number;
  }): AccountRow[] {
    const where = [
      state === undefined ? '' : 'state = ? AND',
      'id > ?',
      supplier === undefined ? '' : 'AND +import_supplier = ?',
    ].join(' ');
    const params = [
      ...(state === undefined ? [] : [state]),
      afterId,
      ...(supplier === undefined ? [] : [supplier]),
      limit,
    ];
    return (this.#db.prepare(`SELECT * FROM accounts WHERE ${where} ORDER BY id LIMIT ?`).all(...params) as Raw[]).map(
      toAccountRow,
    );
  }

  /** Done and outstanding item counts of several accounts, by account id. */
  itemTallies(accountIds: readonly number[]): Map<number, ItemTally> {
    const tallies = new Map<number, ItemTally>();
    if (accountIds.length === 0) return tallies;
    const rows = this.#db
      .prepare(
        `SELECT account_id AS id, state = 'done' AS done, COUNT(*) AS n FROM items WHERE account_id IN ` +
          `(${marks(accountIds)}) GROUP BY account_id, state = 'done'`,
      )
      .all(...accountIds) as Raw[];
    for (const row of rows) {
      const tally = tallies.get(Number(row['id'])) ?? { done: 0, outstanding: 0 };
      if (Number(row['done']) === 1) tally.done += Number(row['n']);
      else tally.outstanding += Number(row['n']);
      tallies.set(Number(row['id']), tally);
    }
    return tallies;
  }

  /** The last push run: how it ended and, if it stopped on a fatal failure, why (push records it with its counts). */
  lastPush(): LastPush | undefined {
    const row = this.#db
      .prepare(
        `SELECT id, started_at, status, exit_code, counts FROM runs WHERE command = 'push' ORDER BY id DESC LIMIT 1`,
      )
      .get() as Raw | undefined;
    if (row === undefined) return undefined;
    const counts = typeof row['counts'] === 'string' ? (JSON.parse(row['counts']) as { fatal?: unknown }) : {};
    const fatal = counts.fatal as { code?: unknown; detail?: unknown } | undefined;
    return {
      id: Number(row['id']),
      started_at: String(row['started_at']),
      status: String(row['status']),
      exit_code: row['exit_code'] === null ? null : Number(row['exit_code']),
      fatal:
        typeof fatal?.code === 'string' && typeof fatal.detail === 'string'
          ? { code: fatal.code, detail: fatal.detail }
          : null,
    };
  }

  /** Stored issues of several accounts, by account id (in the order they were stored). */
  issuesOf(accountIds: readonly number[]): Map<number, StoredIssue[]> {
    const issues = new Map<number, StoredIssue[]>();
    if (accountIds.length === 0) return issues;
    const rows = this.#db
      .prepare(`SELECT * FROM account_issues WHERE account_id IN (${marks(accountIds)}) ORDER BY rowid`)
      .all(...accountIds) as Raw[];
    for (const row of rows) {
      const id = Number(row['account_id']);
      issues.set(id, [...(issues.get(id) ?? []), toStoredIssue(row)]);
    }
    return issues;
  }

  /**
   * Items of one kind in one state joined with their account, paged by item id. One (state,
   * kind) at a time: the items_by_state (state, kind) index ends in the rowid, so rows come in id order.
   */
  items({
    state,
    kind,
    supplier,
    afterId,
    limit,
  }: {
    state: ItemState;
    kind: ItemKind;
    supplier?: string | undefined;
    afterId: number;
    limit: number;
  }): ItemWithAccount[] {
    const bySupplier = supplier === undefined ? '' : 'AND +a.import_supplier = ?';
    const rows = this.#db
      .prepare(
        `SELECT it.*, a.import_supplier AS a_supplier, a.external_account_number AS a_number, a.state AS a_state
         FROM items it JOIN accounts a ON a.id = it.account_id
         WHERE it.state = ? AND it.kind = ? AND it.id > ? ${bySupplier} ORDER BY it.id LIMIT ?`,
      )
      .all(state, kind, afterId, ...(supplier === undefined ? [] : [supplier]), limit) as Raw[];
    return rows.map((row) => ({
      ...toItemRow(row),
      importSupplier: String(row['a_supplier']),
      externalAccountNumber: String(row['a_number']),
      accountState: String(row['a_state']) as AccountState,
    }));
  }

  /** Account counts per state and item counts per kind and state, of one supplier or all. */
  counts(supplier?: string): {
    accounts: Partial<Record<AccountState, number>>;
    items: Record<string, Partial<Record<ItemState, number>>>;
  } {
    const params = supplier === undefined ? [] : [supplier];
    const accounts: Partial<Record<AccountState, number>> = {};
    const accountRows = this.#db
      .prepare(
        `SELECT state, COUNT(*) AS n FROM accounts ${supplier === undefined ? '' : 'WHERE import_supplier = ?'} ` +
          `GROUP BY state`,
      )
      .all(...params) as Raw[];
    for (const row of accountRows) accounts[row['state'] as AccountState] = Number(row['n']);
    const items: Record<string, Partial<Record<ItemState, number>>> = {};
    const itemRows = this.#db
      .prepare(
        `SELECT it.kind AS kind, it.state AS state, COUNT(*) AS n FROM items it JOIN accounts a ON a.id = ` +
          `it.account_id ${supplier === undefined ? '' : 'WHERE a.import_supplier = ?'} GROUP BY it.kind, it.state`,
      )
      .all(...params) as Raw[];
    for (const row of itemRows) (items[String(row['kind'])] ??= {})[row['state'] as ItemState] = Number(row['n']);
    return { accounts, items };
  }

  /**
   * The most frequent last-error codes of accounts and records not done, of one supplier (all when undefined).
   * `aborted` is not among them: it is the run's own stop (the operator's Ctrl-C, a run stopping on a fatal error), not
   * an error of an account or a record.
   */
  topErrorCodes(supplier: string | undefined, limit: number): Array<{ code: string; count: number }> {
    const accountFilter = supplier === undefined ? '' : 'AND import_supplier = ?';
    const itemFilter = supplier === undefined ? '' : 'AND a.import_supplier = ?';
    const params = supplier === undefined ? [] : [supplier, supplier];
    const rows = this.#db
      .prepare(
        `SELECT code, SUM(n) AS n FROM (
           SELECT error_code AS code, COUNT(*) AS n FROM accounts
             WHERE error_code IS NOT NULL AND error_code <> 'aborted'
             AND state <> 'done'
             ${accountFilter} GROUP BY error_code
           UNION ALL
           SELECT it.error_code AS code, COUNT(*) AS n FROM items it JOIN accounts a ON a.id = it.account_id
             WHERE it.error_code IS NOT NULL AND it.error_code <> 'aborted'
             AND it.state <> 'done' ${itemFilter} GROUP BY it.error_code
         ) GROUP BY code ORDER BY n DESC, code LIMIT ?`,
      )
      .all(...params, limit) as Raw[];
    return rows.map((row) => ({ code: String(row['code']), count: Number(row['n']) }));
  }

  /**
   * Push runs, oldest first, with the accounts that reached done in each (from the ledger's events:
   * an account counts in the run that finished it). One row per run.
   */
  pushRuns(supplier: string | undefined): PushRunRow[] {
    const rows = this.#db
      .prepare(
        `SELECT r.id AS id, r.started_at AS started_at, r.ended_at AS ended_at, r.status AS status,
                r.exit_code AS exit_code, COUNT(e.id) AS n FROM runs r
         LEFT JOIN events e ON e.run_id = r.id AND e.to_state = 'done' AND e.item_id IS NULL
           ${supplier === undefined ? '' : 'AND e.account_id IN (SELECT id FROM accounts WHERE import_supplier = ?)'}
         WHERE r.command = 'push' GROUP BY r.id ORDER BY r.id`,
      )
      .all(...(supplier === undefined ? [] : [supplier])) as Raw[];
    return rows.map((row) => ({
      runId: Number(row['id']),
      startedAt: String(row['started_at']),
      endedAt: (row['ended_at'] as string | null) ?? null,
      status: String(row['status']),
      exitCode: (row['exit_code'] as number | null) ?? null,
      done: Number(row['n']),
    }));
  }

  /**
   * Accounts done now, by the UTC hour (`2026-11-25T04`) they first reached done: the campaign's
   * progress over time. Oldest hour first; hours with none are absent.
   */
  doneByHour(supplier: string | undefined): Array<{ hour: string; done: number }> {
    const rows = this.#db
      .prepare(
        `SELECT substr(first_at, 1, 13) AS hour, COUNT(*) AS n FROM (
           SELECT MIN(e.at) AS first_at FROM events e JOIN accounts a ON a.id = e.account_id
           WHERE a.state = 'done' AND e.to_state = 'done' AND e.item_id IS NULL
             ${supplier === undefined ? '' : 'AND a.import_supplier = ?'}
           GROUP BY e.account_id
         ) GROUP BY hour ORDER BY hour`,
      )
      .all(...(supplier === undefined ? [] : [supplier])) as Raw[];
    return rows.map((row) => ({ hour: String(row['hour']), done: Number(row['n']) }));
  }

  /**
   * Runs `read` on one snapshot of the ledger (a read transaction), so that every file of a report
   * counts the same accounts while a push writes beside it.
   */
  async snapshot<T>(read: () => Promise<T>): Promise<T> {
    this.#db.exec('BEGIN');
    try {
      return await read();
    } finally {
      this.#db.exec('COMMIT');
    }
  }

  /** Where one error code was seen first (file and line in the export), for the report's sample. */
  sampleOfError(code: string, supplier: string | undefined): { file: string; line: number | null } | null {
    const filter = supplier === undefined ? '' : 'AND a.import_supplier = ?';
    const params = supplier === undefined ? [code, code] : [code, supplier, code, supplier];
    const row = this.#db
      .prepare(
        `SELECT file, line FROM (
           SELECT COALESCE(a.error_file, a.origin_file) AS file, COALESCE(a.error_line, a.origin_line) AS line
             FROM accounts a WHERE a.error_code = ? ${filter} AND a.state <> 'done' LIMIT 1)
         UNION ALL SELECT file, line FROM (
           SELECT COALESCE(it.error_file, it.origin_file) AS file, COALESCE(it.error_line, it.origin_line) AS line
             FROM items it JOIN accounts a ON a.id = it.account_id WHERE it.error_code = ? ${filter} AND it.state <>
               'done' LIMIT 1)
         LIMIT 1`,
      )
      .get(...params) as Raw | undefined;
    if (row === undefined || row['file'] === null) return null;
    return { file: row['file'] as string, line: row['line'] === null ? null : Number(row['line']) };
  }

  /** The control totals of the last push that read its export to the end (export-totals.ts); undefined: none. */
  exportTotals(): RecordedTotals | undefined {
    return lastExportTotals(this.#db);
  }

  /** A run's legacy rows that reached no record, with id > afterId, in id order. */
  unusedRows(runId: number, afterId: number, limit: number): Array<UnusedRow & { id: number }> {
    return unusedRowsPage(this.#db, runId, afterId, limit);
  }

  close(): void {
    this.#db.close();
  }
}
