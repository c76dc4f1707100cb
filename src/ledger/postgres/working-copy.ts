import { tmpdir } from 'node:os';
import type Database from 'better-sqlite3';
import { makePrivateDir, removePrivate } from '../../private-files.js';
import { openLedgerDb } from '../db.js';
import { Ledger } from '../ledger.js';
import { captureChanges, forgetChangesAfter, lastChange } from './capture.js';
import type { Columns, LeasedPage } from './lease-terms.js';
import { copyIntoSqlite } from './copy.js';
import type { Reconnecting } from './reconnect.js';
import { Shipper, type ShipmentRules } from './shipper.js';
import type { LedgerTable } from './tables.js';
import { tableSpec } from './tables.js';
import { inSnapshot } from './transaction.js';

/** Every table but the events: no engine step reads an account's history, and it is the largest table. */
export const WORKING_TABLES: readonly LedgerTable[] = ['runs', 'accounts', 'items', 'account_issues', 'settings'];

/** A local SQLite ledger whose writes are shipped to PostgreSQL (shipper.ts), in a temporary directory of its own. */
export class WorkingCopy {
  readonly dir: string;
  readonly db: Database.Database;
  readonly ledger: Ledger;
  readonly shipper: Shipper;
  readonly #timer: NodeJS.Timeout;

  private constructor(
    dir: string,
    db: Database.Database,
    connection: Reconnecting,
    rules: ShipmentRules,
    runId: number,
  ) {
    this.dir = dir;
    this.db = db;
    captureChanges(db);
    this.shipper = new Shipper(db, connection, rules);
    this.ledger = new Ledger(db, { afterCommit: () => this.shipper.ship(), runId });
    // Staging writes outside group commits: shipped at least this often, so PostgreSQL follows the run closely.
    this.#timer = setInterval(() => void this.shipper.ship().catch(() => undefined), 250);
    this.#timer.unref();
  }

  /** A working copy filled with `tables` of the PostgreSQL ledger (one consistent snapshot), then captured. */
  static async open(
    connection: Reconnecting,
    rules: ShipmentRules,
    runId: number,
    tables: readonly LedgerTable[],
  ): Promise<WorkingCopy> {
    const dir = makePrivateDir(tmpdir(), 'ledger');
    let db: Database.Database | undefined;
    try {
      db = openLedgerDb(dir);
      const filling = db;
      await connection.run((client) => inSnapshot(client, () => copyIntoSqlite(client, filling, tables)));
      return new WorkingCopy(dir, db, connection, rules, runId);
    } catch (error) {
      db?.close();
      removePrivate(dir);
      throw error;
    }
  }

  /** The SQLite columns a leased page is read with. */
  columns(): Columns {
    const of = (name: LedgerTable): string[] => tableSpec(this.db, name).columns;
    return { accounts: of('accounts'), items: of('items'), issues: of('account_issues').slice(0, -1) };
  }

  /**
   * Writes a leased page's rows as PostgreSQL holds them (a page leased again after this runner released it replaces
   * what it had); they are not changes of this runner, so nothing of them is shipped back.
   */
  load(page: LeasedPage, columns: Columns): void {
    const upsert = (table: string, names: string[]): Database.Statement =>
      this.db.prepare(
        `INSERT INTO main.${table} (${names.join(', ')}) VALUES (${names.map(() => '?').join(', ')}) ` +
          'ON CONFLICT (id) ' +
          `DO UPDATE SET ${names.map((name) => `${name} = excluded.${name}`).join(', ')}`,
      );
    const accounts = upsert('accounts', columns.accounts);
    const items = upsert('items', columns.items);
    const clear = this.db.prepare('DELETE FROM main.account_issues WHERE account_id = ?');
    const issue = this.db.prepare(
      `INSERT INTO main.account_issues (${columns.issues.join(', ')}) ` +
        `VALUES (${columns.issues.map(() => '?').join(', ')})`,
    );
    // batch() first commits the engine's queued writes: the changes to forget are those after them, inside it.
    this.ledger.batch(() => {
      const before = lastChange(this.db);
      for (const row of page.accounts) accounts.run(...row);
      for (const row of page.items) items.run(...row);
      for (const row of page.accounts) clear.run(row[0]);
      for (const row of page.issues) issue.run(...row);
      forgetChangesAfter(this.db, before);
    });
  }

  /**
   * Ships what is left and closes the file (the directory is removed). After a failed shipment (the run already
   * stopped for it) there is nothing to ship: the next run reconciles what was in flight.
   */
  async close(): Promise<void> {
    clearInterval(this.#timer);
    if (this.shipper.failed) return this.discard();
    try {
      this.ledger.flush();
      await this.shipper.ship();
    } finally {
      this.ledger.close();
      removePrivate(this.dir);
    }
  }

  /** Closes without shipping (the run failed to start, or a shipment failed). */
  discard(): void {
    clearInterval(this.#timer);
    try {
      this.ledger.close();
    } catch {
      // The writer failed already: its queue holds writes that were never committed anywhere.
    }
    removePrivate(this.dir);
  }
}
