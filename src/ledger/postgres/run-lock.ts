import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { Reconnecting } from './reconnect.js';

/** How long a lock lives without renewal: a runner that died frees the ledger within this. */
export const LOCK_TTL_MS = 30_000;

/** Another live run holds the ledger (exit 4, as for a state directory's lock). */
export class PostgresLedgerLockedError extends Error {
  constructor(label: string, holder: string) {
    super(
      `another migrate run (${holder}) holds the ledger ${label}; wait for it to finish (a run that died frees it ` +
        `within ${LOCK_TTL_MS / 1000} s), or use another ledger`,
    );
    this.name = 'PostgresLedgerLockedError';
  }
}

/** Who this process is, as a lock's or a lease's holder: host, pid and a random part (pids repeat across pods). */
export function holderId(): string {
  return `${hostname()} pid ${process.pid} ${randomUUID().slice(0, 8)}`;
}

/**
 * Takes the lock when it is free, expired, or held by `dead` (a holder known to be gone); returns its holder after.
 */
async function take(pgConnection: Reconnecting, holder: string, dead: string | null): Promise<string | undefined> {
  const result = await pgConnection.run((client) =>
    client.query<{ holder: string }>(
      `WITH taken AS (
         INSERT INTO ledger_lock (name, holder, expires_at) VALUES ('run', $1, now() + $2 * interval '1 millisecond')
         ON CONFLICT (name) DO UPDATE SET holder = EXCLUDED.holder, expires_at = EXCLUDED.expires_at
           WHERE ledger_lock.expires_at < now() OR ledger_lock.holder IN (EXCLUDED.holder, $3)
         RETURNING holder)
       SELECT holder FROM taken UNION ALL SELECT holder FROM ledger_lock WHERE name = 'run' AND NOT EXISTS (SELECT 1 FROM taken)`,
      [holder, LOCK_TTL_MS, dead],
    ),
  );
  return result.rows[0]?.holder;
}

/** True when `holder` names a process of this host that no longer runs. */
export function deadOnThisHost(holder: string): boolean {
  const match = /^(.*) pid (\d+) \S+$/.exec(holder);
  if (match === null || match[1] !== hostname()) return false;
  try {
    process.kill(Number(match[2]), 0);
    return false;
  } catch (error) {
    return (error as { code?: string }).code !== 'EPERM';
  }
}

/**
 * The ledger's run lock: a row with a holder and an expiry (not a session lock: it outlives a dropped connection and a
 * database restart), renewed every third of its life. A lock not renewed in time by a runner that died is taken over.
 */
export class RunLock {
  readonly #pg: Reconnecting;
  readonly #holder: string;
  #timer: NodeJS.Timeout | undefined;
  #lost: Error | undefined;
  #renewing = false;

  private constructor(pgConnection: Reconnecting, holder: string) {
    this.#pg = pgConnection;
    this.#holder = holder;
  }

  static async acquire(pgConnection: Reconnecting, label: string, holder: string): Promise<RunLock> {
    let current = await take(pgConnection, holder, null);
    // A run on this host whose process is gone (the crash-then-rerun case under cron) is taken over at once.
    if (current !== holder && current !== undefined && deadOnThisHost(current))
      current = await take(pgConnection, holder, current);
    if (current !== holder) throw new PostgresLedgerLockedError(label, current ?? 'unknown');
    const lock = new RunLock(pgConnection, holder);
    lock.#timer = setInterval(() => void lock.#renew(), LOCK_TTL_MS / 3);
    lock.#timer.unref();
    return lock;
  }

  /** Set once the lock was lost (taken over after this process could not renew it): the run must stop. */
  compromised(): Error | undefined {
    return this.#lost;
  }

  async #renew(): Promise<void> {
    if (this.#renewing) return;
    this.#renewing = true;
    try {
      const renewed = await this.#pg.run((client) =>
        client.query(
          `UPDATE ledger_lock SET expires_at = now() + $2 * interval '1 millisecond' WHERE name = 'run' AND holder = $1`,
          [this.#holder, LOCK_TTL_MS],
        ),
      );
      if (renewed.rowCount === 0) this.#lost = new Error('another run took the lock over');
    } catch (error) {
      this.#lost ??= error instanceof Error ? error : new Error(String(error));
    } finally {
      this.#renewing = false;
    }
  }

  async release(): Promise<void> {
    clearInterval(this.#timer);
    await this.#pg
      .run((client) => client.query(`DELETE FROM ledger_lock WHERE name = 'run' AND holder = $1`, [this.#holder]))
      .catch(() => undefined);
  }
}
