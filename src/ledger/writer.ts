import { closeSync, fsync, openSync } from 'node:fs';
import type Database from 'better-sqlite3';

/** How long a deferred write may wait for a commit to ride with. */
const DEFER_MS = 10;

interface Entry {
  apply: () => void;
  resolve: () => void;
  reject: (error: unknown) => void;
  durable: boolean;
}

/**
 * Group commit. Writes queued in the same turn of the event loop are applied in one
 * transaction: the engine awaits an intent's commit before sending its request (write-ahead)
 * without paying one commit per request. Order is kept: writes commit in the order queued.
 *
 * A durable write (fsynced: survives a power loss, see db.ts) is committed with the others and
 * resolves once the write-ahead log file is fsynced, off the event loop (the thread pool): with
 * synchronous=NORMAL a commit is complete in the log, and an fsync of the log makes it durable,
 * as synchronous=FULL would, without blocking every request behind the disk. The first durable
 * write of a run commits with synchronous=FULL (which also syncs the new log file's directory
 * entry); the log file is opened for the fsyncs after it.
 */
export class GroupWriter {
  readonly #db: Database.Database;
  #pending: Entry[] = [];
  #scheduled = false;
  #failure: Error | undefined;
  #batches = 0;
  /** The write-ahead log, opened after the first durable commit; undefined for an in-memory database. */
  #wal: number | undefined;
  #fsyncsInFlight = 0;
  #closed = false;
  #timer: NodeJS.Timeout | undefined;
  /**
   * A ledger whose system of record is elsewhere (PostgreSQL): a write resolves once this has made it durable there.
   */
  readonly #afterCommit: (() => Promise<void>) | undefined;

  constructor(db: Database.Database, afterCommit?: () => Promise<void>) {
    this.#db = db;
    this.#afterCommit = afterCommit;
  }

  /**
   * Queues a write; resolves once it is committed. `durable`: the commit is also fsynced
   * (survives a power loss, not only a crash of the process): see db.ts. `deferred`: nobody
   * waits for it (an outcome): it rides with the next commit, at most DEFER_MS later, so that
   * turns of the event loop that only record outcomes do not each pay a commit.
   */
  write(apply: () => void, durable = false, deferred = false): Promise<void> {
    if (this.#failure !== undefined) return Promise.reject(this.#failure);
    return new Promise((resolve, reject) => {
      this.#pending.push({ apply, resolve, reject, durable });
      if (this.#scheduled) return;
      if (deferred && !durable) {
        this.#timer ??= setTimeout(() => this.flush(), DEFER_MS).unref();
        return;
      }
      this.#scheduled = true;
      setImmediate(() => this.flush());
    });
  }

  /** Commits everything queued now (also called before closing). */
  flush(): void {
    this.#scheduled = false;
    if (this.#timer !== undefined) {
      clearTimeout(this.#timer);
      this.#timer = undefined;
    }
    const batch = this.#pending;
    if (batch.length === 0) return;
    this.#pending = [];
    // Durable there, not in this file: a working copy needs no fsync of its own.
    const durable = this.#afterCommit === undefined && batch.some((entry) => entry.durable);
    const fsyncAfter = durable && this.#wal !== undefined && !this.#closed;
    try {
      if (durable && !fsyncAfter) this.#db.pragma('synchronous = FULL');
      this.#db.transaction(() => {
        for (const entry of batch) entry.apply();
      })();
      if (durable && !fsyncAfter) {
        this.#db.pragma('synchronous = NORMAL');
        this.#openWal();
      }
      this.#batches += 1;
    } catch (error) {
      this.#fail(error, batch);
      return;
    }
    if (this.#afterCommit !== undefined) {
      this.#afterCommit().then(
        () => batch.forEach((entry) => entry.resolve()),
        (error: unknown) => this.#fail(error, batch),
      );
      return;
    }
    if (!fsyncAfter) {
      for (const entry of batch) entry.resolve();
      return;
    }
    const waiting: Entry[] = [];
    for (const entry of batch) {
      if (entry.durable) waiting.push(entry);
      else entry.resolve();
    }
    this.#fsyncWal(waiting);
  }

  /** Closes the log file once no fsync is in flight (the database itself is closed by the caller). */
  close(): void {
    this.#closed = true;
    if (this.#fsyncsInFlight === 0) this.#closeWal();
  }

  get batches(): number {
    return this.#batches;
  }

  #fsyncWal(waiting: Entry[]): void {
    const fd = this.#wal;
    if (fd === undefined) return;
    this.#fsyncsInFlight += 1;
    fsync(fd, (error) => {
      this.#fsyncsInFlight -= 1;
      if (error) this.#fail(error, waiting);
      else for (const entry of waiting) entry.resolve();
      if (this.#closed && this.#fsyncsInFlight === 0) this.#closeWal();
    });
  }

  #openWal(): void {
    if (this.#wal !== undefined || this.#db.memory) return;
    try {
      this.#wal = openSync(`${this.#db.name}-wal`, 'r');
    } catch {
      // No log file to open (another journal mode): every durable commit keeps synchronous=FULL.
    }
  }

  #closeWal(): void {
    if (this.#wal === undefined) return;
    closeSync(this.#wal);
    this.#wal = undefined;
  }

  /** A failed commit or fsync (disk full, I/O error) means nothing more can be recorded: the run must stop. */
  #fail(error: unknown, entries: Entry[]): void {
    this.#failure = error instanceof Error ? error : new Error(String(error));
    for (const entry of entries) entry.reject(error);
  }
}
