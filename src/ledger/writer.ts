import type Database from 'better-sqlite3';

/**
 * Group commit. Writes queued in the same turn of the event loop are applied in one
 * transaction, so one fsync (synchronous=FULL) covers many intents and outcomes: the engine
 * awaits an intent's commit before sending its request (write-ahead), without paying one
 * fsync per request. Order is kept: writes commit in the order they were queued.
 */
export class GroupWriter {
  readonly #db: Database.Database;
  #pending: Array<{ apply: () => void; resolve: () => void; reject: (error: unknown) => void }> = [];
  #scheduled = false;
  #failure: unknown;
  #batches = 0;

  constructor(db: Database.Database) {
    this.#db = db;
  }

  /** Queues a write; resolves once it is committed (durable). */
  write(apply: () => void): Promise<void> {
    if (this.#failure !== undefined) return Promise.reject(this.#failure);
    return new Promise((resolve, reject) => {
      this.#pending.push({ apply, resolve, reject });
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
    try {
      this.#db.transaction(() => {
        for (const entry of batch) entry.apply();
      })();
      this.#batches += 1;
      for (const entry of batch) entry.resolve();
    } catch (error) {
      // A failed commit (disk full, I/O error) means nothing more can be recorded: the run must stop.
      this.#failure = error;
      for (const entry of batch) entry.reject(error);
    }
  }

  get batches(): number {
    return this.#batches;
  }
}
