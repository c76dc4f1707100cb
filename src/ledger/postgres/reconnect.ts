import type pg from 'pg';
import { monotonicNow } from '../../clock.js';
import { errnoOf, FatalError, messageOf } from '../../errors.js';

// The database going away (a restart, a failover, a network cut) is waited out: every ledger write is idempotent (an
// upsert of rows as the working copy holds them), so a transaction whose answer was lost is simply sent again.

/** Errors that mean "the server is not there right now", not "this statement is wrong". */
export function isConnectionFailure(error: unknown): boolean {
  const code = errnoOf(error);
  if (typeof code === 'string') {
    // Class 08: connection exception; 57P01-57P03: shutdown, crash shutdown, cannot connect now; 53300: too many
    // connections.
    if (/^08|^57P0[123]$|^53300$/.test(code)) return true;
    if (/^(ECONNREFUSED|ECONNRESET|EPIPE|ETIMEDOUT|ENOTFOUND|EAI_AGAIN|EHOSTUNREACH|ENOENT)$/.test(code)) return true;
  }
  const message = messageOf(error);
  return /Connection terminated|connection timeout|Client has encountered a connection error|not queryable/i.test(
    message,
  );
}

/**
 * 40P01 deadlock_detected, 40001 serialization_failure: the transaction was rolled back and may simply be run again.
 */
function isRetryable(error: unknown): boolean {
  const code = errnoOf(error);
  return code === '40P01' || code === '40001';
}

/** The ledger's database stayed unreachable past the limit: the run stops (exit 3); nothing more is sent. */
export class LedgerUnreachableError extends FatalError {
  /** How long, and the last failure: `unreachable for 120 s (ECONNREFUSED)`. */
  readonly away: string;

  constructor(label: string, seconds: number, cause: unknown) {
    const away = `unreachable for ${seconds} s (${describe(cause)})`;
    super(
      `the PostgreSQL ledger ${label} was ${away}; nothing more was sent. ` +
        'What was sent is recorded or is reconciled by the next push: bring the database back, then run push again.',
      'ledger_unreachable',
      cause,
    );
    this.away = away;
  }
}

function describe(error: unknown): string {
  const code = errnoOf(error);
  return typeof code === 'string' ? code : messageOf(error);
}

/** How long the ledger's database may stay away before the run stops, and how to reach it again. */
export interface ReconnectOptions {
  label: string;
  connect: () => Promise<pg.Client>;
  unreachableMs: number;
  /** Told once when the database goes away and once when it is back (for a progress line). */
  onAway?: (away: boolean) => void;
  /** A client connected already (the command's first contact), used until it fails. */
  connected?: pg.Client;
}

/**
 * One connection, kept: `run(fn)` runs fn on it and, when the server went away, connects again and runs fn again
 * until it succeeds or the database has been away for `unreachableMs`.
 */
export class Reconnecting {
  readonly #options: ReconnectOptions;
  #client: pg.Client | undefined;
  #closed = false;

  constructor(options: ReconnectOptions) {
    this.#options = options;
    this.#client = options.connected;
  }

  async run<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
    let awaySince: number | undefined;
    let delay = 50;
    for (;;) {
      try {
        this.#client ??= await this.#options.connect();
        const result = await fn(this.#client);
        if (awaySince !== undefined) this.#options.onAway?.(false);
        return result;
      } catch (error) {
        // A deadlock or serialization failure rolled the transaction back: run it again at once (every ledger write
        // is idempotent).
        if (isRetryable(error) && !this.#closed) continue;
        if (!isConnectionFailure(error) || this.#closed) throw error;
        this.#drop();
        if (awaySince === undefined) {
          awaySince = monotonicNow();
          this.#options.onAway?.(true);
        }
        if (monotonicNow() - awaySince >= this.#options.unreachableMs)
          throw new LedgerUnreachableError(this.#options.label, Math.round(this.#options.unreachableMs / 1000), error);
        await new Promise((resolve) => setTimeout(resolve, delay));
        delay = Math.min(delay * 2, 1_000);
      }
    }
  }

  #drop(): void {
    const client = this.#client;
    this.#client = undefined;
    void client?.end().catch(() => undefined);
  }

  async close(): Promise<void> {
    this.#closed = true;
    const client = this.#client;
    this.#client = undefined;
    await client?.end().catch(() => undefined);
  }
}
