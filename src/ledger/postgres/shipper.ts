import type Database from 'better-sqlite3';
import type pg from 'pg';
import { changedRows, forgetChanges, lastChange } from './capture.js';
import type { Reconnecting } from './reconnect.js';
import {
  CHANGE_COLUMN,
  insertEvents,
  LEDGER_TABLES,
  tableSpec,
  upsertRows,
  withPositions,
  type LedgerTable,
  type TableSpec,
} from './tables.js';
import { inTransaction } from './transaction.js';

/** Rows read from the working copy for one shipment, per table, and the keys of rows to replace whole. */
interface Shipment {
  upTo: number;
  tables: Array<{ spec: TableSpec; keys: unknown[]; rows: unknown[][] }>;
  /** Every account the shipment writes: its own row, its items or its issues. */
  accounts: number[];
  /** The states of the account rows it writes. */
  states: Set<string>;
}

/** What a shipment checks and does besides writing rows: the lease or lock it is allowed by (leases.ts). */
export interface ShipmentRules {
  /** Names this working copy's events (see tables.ts insertEvents). */
  origin: string;
  /** Throws when the runner may no longer write these accounts; called first, in the shipment's transaction. */
  allowed(client: pg.Client, accounts: readonly number[]): Promise<void>;
  /**
   * Called last in the shipment's transaction with the accounts it wrote and the states of the account rows it wrote
   * (e.g. to release settled ones).
   */
  written?(client: pg.Client, accounts: readonly number[], states: ReadonlySet<string>): Promise<void>;
}

/** How many rows one statement carries (and how many ids one read of the working copy asks for). */
const CHUNK = 2_000;

/**
 * Ships a working copy's changes to PostgreSQL: every call of `ship()` resolves once every change committed to the
 * working copy before the call is committed in PostgreSQL, in one transaction per shipment (a group commit's writes
 * arrive together or not at all). Shipments never overlap: calls made while one is under way share the next one, so
 * the round trips follow the load, as the SQLite ledger's group commit does.
 */
export class Shipper {
  readonly #db: Database.Database;
  readonly #pg: Reconnecting;
  readonly #specs: Map<LedgerTable, TableSpec>;
  readonly #rules: ShipmentRules;
  #waiting: Array<{ resolve: () => void; reject: (error: unknown) => void }> = [];
  #busy = false;
  #failure: Error | undefined;
  shipments = 0;

  constructor(db: Database.Database, pgConnection: Reconnecting, rules: ShipmentRules) {
    this.#db = db;
    this.#pg = pgConnection;
    this.#rules = rules;
    this.#specs = new Map(LEDGER_TABLES.map((name) => [name, tableSpec(db, name)]));
  }

  /** True once a shipment failed for good: nothing more can be recorded. */
  get failed(): boolean {
    return this.#failure !== undefined;
  }

  ship(): Promise<void> {
    if (this.#failure !== undefined) return Promise.reject(this.#failure);
    return new Promise((resolve, reject) => {
      this.#waiting.push({ resolve, reject });
      if (!this.#busy) void this.#loop();
    });
  }

  async #loop(): Promise<void> {
    this.#busy = true;
    while (this.#waiting.length > 0) {
      const batch = this.#waiting;
      this.#waiting = [];
      try {
        await this.#shipOnce();
        for (const waiter of batch) waiter.resolve();
      } catch (error) {
        // Nothing more can be recorded: every later write fails too, and the run stops.
        this.#failure = error instanceof Error ? error : new Error(String(error));
        for (const waiter of [...batch, ...this.#waiting]) waiter.reject(error);
        this.#waiting = [];
      }
    }
    this.#busy = false;
  }

  async #shipOnce(): Promise<void> {
    const shipment = this.#read();
    if (shipment === undefined) return;
    await this.#pg.run((client) => this.#write(client, shipment));
    forgetChanges(this.#db, shipment.upTo);
    this.shipments += 1;
  }

  /** Reads, in one synchronous pass (one consistent state of the working copy), the rows changed so far. */
  #read(): Shipment | undefined {
    const upTo = lastChange(this.#db);
    if (upTo === 0) return undefined;
    const changed = changedRows(this.#db, upTo);
    const tables: Shipment['tables'] = [];
    const accounts = new Set<number>();
    const states = new Set<string>();
    for (const name of LEDGER_TABLES) {
      const keys = changed.get(name);
      const spec = this.#specs.get(name);
      if (keys === undefined || spec === undefined) continue;
      const rows = this.#rowsOf(spec, keys);
      tables.push({ spec, keys, rows });
      if (name === 'accounts') for (const row of rows) states.add(String(row[spec.columns.indexOf('state')]));
      const column = { accounts: 'id', items: 'account_id', account_issues: 'account_id' }[name as string];
      if (column === undefined) continue;
      const at = spec.columns.indexOf(column);
      for (const row of rows) accounts.add(Number(row[at]));
      if (name === 'account_issues') for (const key of keys) accounts.add(Number(key));
    }
    return { upTo, tables, accounts: [...accounts], states };
  }

  #rowsOf(spec: TableSpec, keys: unknown[]): unknown[][] {
    const issues = spec.name === 'account_issues';
    const columns = issues ? spec.columns.slice(0, -1) : spec.columns;
    const keyColumn = CHANGE_COLUMN[spec.name] ?? spec.key[0] ?? 'id';
    const rows: unknown[][] = [];
    for (let start = 0; start < keys.length; start += CHUNK) {
      const chunk = keys.slice(start, start + CHUNK);
      const sql =
        `SELECT ${columns.join(', ')} FROM main.${spec.name} ` +
        `WHERE ${keyColumn} IN (${chunk.map(() => '?').join(', ')})` +
        (issues ? ' ORDER BY account_id, rowid' : '');
      rows.push(
        ...(this.#db
          .prepare(sql)
          .raw(true)
          .all(...chunk) as unknown[][]),
      );
    }
    return issues ? withPositions(rows) : rows;
  }

  async #write(client: pg.Client, shipment: Shipment): Promise<void> {
    await inTransaction(client, async () => {
      await this.#rules.allowed(client, shipment.accounts);
      for (const { spec, keys, rows } of shipment.tables) {
        // Issues and settings are replaced whole (an account's issues, a setting that may have been removed).
        if (spec.name === 'account_issues')
          await client.query('DELETE FROM account_issues WHERE account_id = ANY($1::bigint[])', [keys]);
        if (spec.name === 'settings') await client.query('DELETE FROM settings WHERE key = ANY($1::text[])', [keys]);
        for (let start = 0; start < rows.length; start += CHUNK) {
          const chunk = rows.slice(start, start + CHUNK);
          if (spec.name === 'events') await insertEvents(client, spec, chunk, this.#rules.origin, false);
          else await upsertRows(client, spec, chunk);
        }
      }
      await this.#rules.written?.(client, shipment.accounts, shipment.states);
    });
  }
}
