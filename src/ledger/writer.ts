import type Database from 'better-sqlite3';

/**
 * Group commit. Writes queued in the same turn of the event loop are applied in one
 * transaction: the engine awaits an intent's commit before sending its request (write-ahead)
 * without paying one commit per request. Order is kept: writes commit in the order queued.
 */
export class GroupWriter {
  readonly #db: Database.Database;
  #pending: Array<{ apply: () => void; resolve: () => void; reject: (error: unknown) => void; durable: boolean }> = [];
  #scheduled = false;
  #failure: Error | undefined;
  #batches = 0;

  constructor(db: Database.Database) {
    this.#db = db;
  }

  /**
   * Queues a write; resolves once it is committed. `durable`: the commit is also fsynced
   * (survives a power loss, not only a crash of the process): see db.ts.
   */
  write(apply: () => void, durable = false): Promise<void> {
    if (this.#failure !== undefined) return Promise.reject(this.#failure);
    return new Promise((resolve, reject) => {
      this.#pending.push({ apply, resolve, reject, durable });
      if (!this.#scheduled) {
        this.#scheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  /** Commits everything queued now (also called before closing). */
  flush(): void {
    this.#scheduled = false;
    const batch = this.#pending;
    if (batch.length === 0) return;
    this.#pending = [];
    const durable = batch.some((entry) => entry.durable);
    try {
      if (durable) this.#db.pragma('synchronous = FULL');
      this.#db.transaction(() => {
        for (const entry of batch) entry.apply();
      })();
      if (durable) this.#db.pragma('synchronous = NORMAL');
      this.#batches += 1;
      for (const entry of batch) entry.resolve();
    } catch (error) {
      // A failed commit (disk full, I/O error) means nothing more can be recorded: the run must stop.
      this.#failure = error instanceof Error ? error : new Error(String(error));
      for (const entry of batch) entry.reject(error);
    }
  }

  get batches(): number {
    return this.#batches;
  }
}
