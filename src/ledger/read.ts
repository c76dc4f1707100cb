import type Database from 'better-sqlite3';
import { readChangedAfterImport, type ChangedAfterImport } from './read-changed.js';
import { toAccountRow, toItemRow, toStoredIssue } from './rows.js';
import type {
  AccountRow,
  AccountState,
  ItemKind,
  ItemRow,
  ItemState,
  LedgerEvent,
  RunRow,
  StoredIssue,
} from './types.js';

type Raw = Record<string, unknown>;

/** The service a state directory is used with, as recorded in its settings. */
export interface RecordedService {
  /** The normalised base URL, or `sandbox:built-in` for the sandbox of --sandbox. */
  url: string;
  dialect: string;
  importSupplier?: string;
  /** How it came to be recorded, when not by the first push (a ledger older than the record, or a move). */
  note?: string;
}

/** Counts of accounts per state, and of items per kind and state. */
export interface LedgerCounts {
  accounts: Partial<Record<AccountState, number>>;
  items: Partial<Record<ItemKind, Partial<Record<ItemState, number>>>>;
  /** Accounts whose export data changed after they were imported (the service cannot update them). */
  changedAfterImport: number;
  /** Post-import records whose export data changed after they were sent, per kind (the service cannot update them). */
  recordsChangedAfterImport: Partial<Record<ItemKind, number>>;
  /** Transactions refused for, or moved into, the service's open statement period; absent when there are none. */
  openPeriod?: OpenPeriodCounts;
}

/**
 * The codes transactions refused for, or moved into, the service's open statement period are recorded under
 * (engine/open-period.ts).
 */
export const OPEN_PERIOD_CODES = {
  refused: 'transaction_outside_open_period',
  moved: 'transaction_moved_into_open_period',
} as const;

export interface OpenPeriodCounts {
  refused: number;
  moved: number;
  /** Accounts with a moved transaction: the service pinned a note to each. */
  movedAccounts: number;
  /** One recorded detail of each (the service's words, naming the period), for the summary to name the period. */
  details: string[];
}

/** Counts of OPEN_PERIOD_CODES, one row per code: code, n (records), accounts, detail (one of theirs). */
export const OPEN_PERIOD_COUNTS_SQL =
  `SELECT error_code AS code, COUNT(*) AS n, COUNT(DISTINCT account_id) AS accounts, MIN(error_detail) AS detail ` +
  `FROM items WHERE state IN ('done', 'failed') AND kind = 'transaction' ` +
  `AND error_code IN ('${OPEN_PERIOD_CODES.refused}', '${OPEN_PERIOD_CODES.moved}') GROUP BY error_code`;

/** OPEN_PERIOD_COUNTS_SQL's rows as counts, or undefined when there are none. */
export function openPeriodCounts(
  rows: ReadonlyArray<{ code: unknown; n: unknown; accounts: unknown; detail: unknown }>,
): OpenPeriodCounts | undefined {
  if (rows.length === 0) return undefined;
  const of = (code: string) => rows.find((row) => row.code === code);
  const refused = of(OPEN_PERIOD_CODES.refused);
  const moved = of(OPEN_PERIOD_CODES.moved);
  return {
    refused: Number(refused?.n ?? 0),
    moved: Number(moved?.n ?? 0),
    movedAccounts: Number(moved?.accounts ?? 0),
    details: rows.map((row) => (typeof row.detail === 'string' ? row.detail : '')),
  };
}

/**
 * Read-only queries over the ledger, for `push`'s summary and the `status` / `report` commands.
 * Every list is paged by key (`afterId`), never by OFFSET, so a page costs the same at any depth.
 */
export class LedgerReader {
  readonly #db: Database.Database;

  constructor(db: Database.Database) {
    this.#db = db;
  }

  /**
   * The dialect this state directory was pushed in, once recorded. A read-only handle on a ledger
   * written before settings existed: 'spec' if it has runs (the only dialect then).
   */
  dialect(): string | undefined {
    const hasSettings = this.#db
      .prepare(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'settings'`)
      .get();
    if (hasSettings === undefined)
      return this.#db.prepare('SELECT 1 FROM runs LIMIT 1').get() === undefined ? undefined : 'spec';
    const row = this.#db.prepare(`SELECT value FROM settings WHERE key = 'dialect'`).get() as
      { value: string } | undefined;
    return row?.value;
  }

  /**
   * The service this state directory is used with (config/ledger-service.ts), once a push recorded it; undefined
   * before (a new ledger, or one from before services were recorded: its `note` says so).
   */
  service(): RecordedService | undefined {
    const settings = this.#settings();
    const url = settings.get('service_url');
    const dialect = this.dialect();
    if (url === undefined || dialect === undefined) return undefined;
    const supplier = settings.get('import_supplier');
    const note = settings.get('service_note');
    return { url, dialect, ...(supplier ? { importSupplier: supplier } : {}), ...(note ? { note } : {}) };
  }

  /** Every setting (none in a read-only handle on a ledger from before settings existed). */
  #settings(): Map<string, string> {
    const hasSettings = this.#db
      .prepare(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'settings'`)
      .get();
    if (hasSettings === undefined) return new Map();
    const rows = this.#db.prepare('SELECT key, value FROM settings').all() as Array<{ key: string; value: string }>;
    return new Map(rows.map((row) => [row.key, row.value]));
  }

  /** The import suppliers the ledger holds accounts of, in code order. */
  suppliers(): string[] {
    const rows = this.#db.prepare('SELECT DISTINCT import_supplier AS s FROM accounts ORDER BY 1').all() as Raw[];
    return rows.map((row) => String(row['s']));
  }

  counts(): LedgerCounts {
    const accounts: LedgerCounts['accounts'] = {};
    for (const row of this.#db.prepare('SELECT state, COUNT(*) AS n FROM accounts GROUP BY state').all() as Raw[]) {
      accounts[row['state'] as AccountState] = Number(row['n']);
    }
    const items: LedgerCounts['items'] = {};
    for (const row of this.#db
      .prepare('SELECT kind, state, COUNT(*) AS n FROM items GROUP BY kind, state')
      .all() as Raw[]) {
      const kind = row['kind'] as ItemKind;
      (items[kind] ??= {})[row['state'] as ItemState] = Number(row['n']);
    }
    const changed = this.#db
      .prepare('SELECT COUNT(*) AS n FROM accounts WHERE changed_fingerprint IS NOT NULL')
      .get() as Raw;
    const changedRecords = this.#db
      .prepare('SELECT kind, COUNT(*) AS n FROM items WHERE changed_fingerprint IS NOT NULL GROUP BY kind')
      .all() as Raw[];
    const openPeriod = openPeriodCounts(
      this.#db.prepare(OPEN_PERIOD_COUNTS_SQL).all() as Array<{
        code: unknown;
        n: unknown;
        accounts: unknown;
        detail: unknown;
      }>,
    );
    return {
      accounts,
      items,
      changedAfterImport: Number(changed['n']),
      recordsChangedAfterImport: Object.fromEntries(
        changedRecords.map((row) => [String(row['kind']), Number(row['n'])]),
      ),
      ...(openPeriod === undefined ? {} : { openPeriod }),
    };
  }

  /** Records waiting to be sent (pending or sending) per kind, of accounts in the given states. */
  waitingItems(accountStates: readonly AccountState[]): Partial<Record<ItemKind, number>> {
    const marks = accountStates.map(() => '?').join(', ');
    const rows = this.#db
      .prepare(
        `SELECT i.kind AS kind, COUNT(*) AS n FROM items i JOIN accounts a ON a.id = i.account_id
         WHERE i.state IN ('pending', 'sending') AND a.state IN (${marks}) GROUP BY i.kind`,
      )
      .all(...accountStates) as Raw[];
    return Object.fromEntries(rows.map((row) => [String(row['kind']), Number(row['n'])]));
  }

  /**
   * Records waiting to be sent (pending or sending) of several accounts, per account and kind: what a push would send
   * (the plan of --dry-run and of `status`).
   */
  waitingItemsOf(accountIds: readonly number[]): Map<number, Partial<Record<ItemKind, number>>> {
    const waiting = new Map<number, Partial<Record<ItemKind, number>>>();
    if (accountIds.length === 0) return waiting;
    const marks = accountIds.map(() => '?').join(', ');
    const rows = this.#db
      .prepare(
        `SELECT account_id AS id, kind, COUNT(*) AS n FROM items WHERE account_id IN (${marks}) AND ` +
          `state IN ('pending', 'sending') GROUP BY account_id, kind`,
      )
      .all(...accountIds) as Raw[];
    for (const row of rows) {
      const id = Number(row['id']);
      waiting.set(id, { ...waiting.get(id), [String(row['kind'])]: Number(row['n']) });
    }
    return waiting;
  }

  /** Accounts, optionally only in some states, in id order after `afterId`. */
  accounts(options: { states?: readonly AccountState[]; afterId?: number; limit?: number } = {}): AccountRow[] {
    const states = options.states ?? [];
    // `+state`: walk the primary key, not the (state, id) index (see Ledger.pageAccounts).
    const where = states.length > 0 ? `AND +state IN (${states.map(() => '?').join(', ')})` : '';
    const rows = this.#db
      .prepare(`SELECT * FROM accounts WHERE id > ? ${where} ORDER BY id LIMIT ?`)
      .all(options.afterId ?? 0, ...states, options.limit ?? 100) as Raw[];
    return rows.map(toAccountRow);
  }

  account(importSupplier: string, externalAccountNumber: string): AccountRow | undefined {
    const raw = this.#db
      .prepare('SELECT * FROM accounts WHERE import_supplier = ? AND external_account_number = ?')
      .get(importSupplier, externalAccountNumber) as Raw | undefined;
    return raw === undefined ? undefined : toAccountRow(raw);
  }

  /** Accounts with this external account number under any supplier. */
  accountsByNumber(externalAccountNumber: string): AccountRow[] {
    return (
      this.#db
        .prepare('SELECT * FROM accounts WHERE external_account_number = ? ORDER BY id')
        .all(externalAccountNumber) as Raw[]
    ).map(toAccountRow);
  }

  /** One account's history, oldest first. */
  history(accountId: number): LedgerEvent[] {
    const rows = this.#db.prepare('SELECT * FROM events WHERE account_id = ? ORDER BY id').all(accountId) as Raw[];
    return rows.map((row) => ({
      id: Number(row['id']),
      runId: row['run_id'] === null ? null : Number(row['run_id']),
      accountId: Number(row['account_id']),
      itemId: row['item_id'] === null ? null : Number(row['item_id']),
      at: String(row['at']),
      step: String(row['step']),
      fromState: (row['from_state'] as string | null) ?? null,
      toState: (row['to_state'] as string | null) ?? null,
      detail: (row['detail'] as string | null) ?? null,
    }));
  }

  items(accountId: number): ItemRow[] {
    return (this.#db.prepare('SELECT * FROM items WHERE account_id = ? ORDER BY kind, id').all(accountId) as Raw[]).map(
      toItemRow,
    );
  }

  /** Items in some states (e.g. failed, unknown) across accounts, paged by item id. */
  itemsInStates(states: readonly ItemState[], options: { afterId?: number; limit?: number } = {}): ItemRow[] {
    const marks = states.map(() => '?').join(', ');
    const rows = this.#db
      .prepare(`SELECT * FROM items WHERE id > ? AND +state IN (${marks}) ORDER BY id LIMIT ?`)
      .all(options.afterId ?? 0, ...states, options.limit ?? 100) as Raw[];
    return rows.map(toItemRow);
  }

  issues(accountId: number): StoredIssue[] {
    const rows = this.#db
      .prepare('SELECT * FROM account_issues WHERE account_id = ? ORDER BY rowid')
      .all(accountId) as Raw[];
    return rows.map(toStoredIssue);
  }

  /** Runs, newest first. */
  runs(limit = 20): RunRow[] {
    const rows = this.#db.prepare('SELECT * FROM runs ORDER BY id DESC LIMIT ?').all(limit) as Raw[];
    return rows.map((row) => ({
      id: Number(row['id']),
      command: String(row['command']),
      startedAt: String(row['started_at']),
      endedAt: (row['ended_at'] as string | null) ?? null,
      status: String(row['status']),
      exitCode: (row['exit_code'] as number | null) ?? null,
      options: JSON.parse(String(row['options'])) as Record<string, unknown>,
      counts: typeof row['counts'] === 'string' ? (JSON.parse(row['counts']) as Record<string, unknown>) : null,
    }));
  }

  /**
   * The export directories push runs read, as recorded with each run: the real path (`exportDir`), else the path as
   * given (`dir`, from runs before the real path was recorded; relative to that run's working directory). In the
   * order of their latest push: the last push's directory last.
   */
  pushExportDirs(): string[] {
    const rows = this.#db
      .prepare(
        `SELECT COALESCE(json_extract(options, '$.exportDir'), json_extract(options, '$.dir')) AS dir
         FROM runs WHERE command = 'push' GROUP BY dir ORDER BY MAX(id)`,
      )
      .all() as Raw[];
    return rows.flatMap((row) => (typeof row['dir'] === 'string' ? [row['dir']] : []));
  }

  /** Accounts and records changed in the export after they were sent (read-changed.ts). */
  changedAfterImport(supplier: string | undefined, limit: number): ChangedAfterImport {
    return readChangedAfterImport(this.#db, supplier, limit);
  }

  /**
   * The most frequent last-error codes of accounts and items (summary table).
   * `aborted` is not among them: it is the run's own stop (the operator's Ctrl-C, a run stopping on a fatal error), not
   * an error of an account or a record.
   */
  topErrorCodes(limit = 5): Array<{ code: string; count: number }> {
    const rows = this.#db
      .prepare(
        `SELECT code, SUM(n) AS n FROM (
           SELECT error_code AS code, COUNT(*) AS n FROM accounts
             WHERE error_code IS NOT NULL AND error_code <> 'aborted'
             AND state IN
             ('invalid','errored','staged','unresolved') GROUP BY error_code
           UNION ALL
           SELECT error_code AS code, COUNT(*) AS n FROM items WHERE error_code IS NOT NULL AND error_code <> 'aborted'
             AND state IN
             ('failed','unknown','held','pending') GROUP BY error_code
         ) GROUP BY code ORDER BY n DESC, code LIMIT ?`,
      )
      .all(limit) as Raw[];
    return rows.map((row) => ({ code: String(row['code']), count: Number(row['n']) }));
  }
}
