import type pg from 'pg';
import { newClient } from './url.js';

// A stop signal (SIGINT, SIGTERM, SIGHUP) during `ledger copy` or `ledger purge` on PostgreSQL: the statement the
// command's connection runs is cancelled (from a connection of its own, as psql's Ctrl-C does: a closed socket alone
// would leave a long UPDATE or VACUUM FULL, or one waiting on a lock, running on the server), then the connection is
// ended, so the server rolls its open transaction back. Once the transaction's COMMIT is under way the stop waits for
// it: a stop as it commits never leaves the command unsure whether the work was kept.

export interface EndOnStop {
  /** The COMMIT is under way: a stop from now on waits for it. */
  committing(): void;
  /** The transaction is over (committed or rolled back): a stop that waited now ends the connection. */
  committed(): void;
  dispose(): void;
}

interface Stopped {
  url: string;
  /** The command's connection, connected. */
  client: pg.Client;
  /** How the command ends it (default: client.end()). */
  end?: () => Promise<void>;
}

/** Cancels what backend `pid` runs, on a connection of its own; a database gone away has nothing left to cancel. */
async function cancel(url: string, pid: number | undefined): Promise<void> {
  if (pid === undefined) return;
  const canceller = newClient(url);
  try {
    await canceller.connect();
    await canceller.query('SELECT pg_cancel_backend($1)', [pid]);
  } catch {
    // Unreachable: ending the connection is all that is left.
  } finally {
    await canceller.end().catch(() => undefined);
  }
}

export async function endOnStop(signal: AbortSignal | undefined, stopped: Stopped): Promise<EndOnStop> {
  const { url, client } = stopped;
  const pid = (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]?.pid;
  const end = (): void =>
    void cancel(url, pid).finally(() => (stopped.end ?? (() => client.end()))().catch(() => undefined));
  let holding = false;
  let pending = false;
  const onAbort = (): void => {
    if (holding) pending = true;
    else end();
  };
  if (signal?.aborted === true) end();
  else signal?.addEventListener('abort', onAbort, { once: true });
  return {
    committing: () => {
      holding = true;
    },
    committed: () => {
      holding = false;
      if (pending) end();
    },
    dispose: () => signal?.removeEventListener('abort', onAbort),
  };
}
