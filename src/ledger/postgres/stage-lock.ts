import type pg from 'pg';
import { LeaseLostError, LEASE_TTL_MS } from './lease-terms.js';
import { deadOnThisHost } from './holder.js';
import { deadLeaseHolders, pause } from './lease-rows.js';
import type { Reconnecting } from './reconnect.js';
import type { ShipmentRules } from './shipper.js';
import { inTransaction } from './transaction.js';

const TTL = `$2 * interval '1 millisecond'`;

/**
 * The stage lock of a shared ledger: one runner at a time holds it, to stage an export while no account is leased,
 * or for a whole run that needs the ledger alone. A row with a holder and an expiry (it outlives a dropped connection
 * and a database restart), renewed with the holder's leases; a holder that died frees it when it expires (at once
 * when it was a process of this host).
 */
export class StageLock {
  readonly #pg: Reconnecting;
  readonly #holder: string;
  readonly #label: string;
  #held = false;

  constructor(pgConnection: Reconnecting, holder: string, label: string) {
    this.#pg = pgConnection;
    this.#holder = holder;
    this.#label = label;
  }

  /**
   * Takes the stage lock, waiting while another live runner holds it; false when `signal` ended the wait or
   * `stillNeeded` says no. With it, in the same transaction: nothing staged yet (`staged_up_to` '', so a runner
   * leases nothing that staging may touch) and what is staged (`staging_export`: the export's identity; '' for a run
   * that needs the ledger alone).
   */
  async take(
    signal: AbortSignal,
    identity = '',
    stillNeeded: () => Promise<boolean> = () => Promise.resolve(true),
  ): Promise<boolean> {
    for (;;) {
      if (signal.aborted || !(await stillNeeded())) return false;
      const holder = await this.#query<{ holder: string }>(`SELECT holder FROM ledger_lock WHERE name = 'stage'`, []);
      const current = holder.rows[0]?.holder ?? '';
      const dead = current !== '' && deadOnThisHost(current) ? current : null;
      if (await this.#pg.run((client) => this.#takeOnce(client, dead, identity))) {
        this.#held = true;
        return true;
      }
      await pause(250, signal);
    }
  }

  async #takeOnce(client: pg.Client, dead: string | null, identity: string): Promise<boolean> {
    return inTransaction(client, async () => {
      const taken = await client.query(
        `UPDATE ledger_lock SET holder = $1, expires_at = now() + ${TTL} ` +
          `WHERE name = 'stage' AND (expires_at < now() OR holder = $1 OR holder = $3)`,
        [this.#holder, LEASE_TTL_MS, dead],
      );
      if (taken.rowCount === 1)
        await client.query(
          `INSERT INTO settings (key, value) VALUES ('staged_up_to', ''), ('staging_export', $1) ` +
            `ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value`,
          [identity],
        );
      return taken.rowCount === 1;
    });
  }

  /** Waits until no other runner holds a live lease (the stage lock keeps new ones from being taken meanwhile). */
  async waitForNoLeases(signal: AbortSignal): Promise<boolean> {
    for (;;) {
      if (signal.aborted) return false;
      const held = await this.#query<{ n: number }>(
        `SELECT COUNT(*) AS n FROM accounts WHERE lease_owner IS NOT NULL AND lease_owner <> $1 ` +
          `AND lease_until > now() AND lease_owner <> ALL($2)`,
        [this.#holder, await deadLeaseHolders(this.#pg, this.#holder)],
      );
      if ((held.rows[0]?.n ?? 0) === 0) return true;
      await pause(250, signal);
    }
  }

  async release(): Promise<void> {
    if (!this.#held) return;
    this.#held = false;
    await this.#query(
      `UPDATE ledger_lock SET holder = '', expires_at = '-infinity' WHERE name = 'stage' AND holder = $1`,
      [this.#holder],
    );
  }

  /** Renews the lock when held; false when it was taken over meanwhile. */
  async renew(): Promise<boolean> {
    if (!this.#held) return true;
    const held = await this.#query(
      `UPDATE ledger_lock SET expires_at = now() + ${TTL} WHERE name = 'stage' AND holder = $1`,
      [this.#holder, LEASE_TTL_MS],
    );
    return held.rowCount === 1;
  }

  /** The rules of a shipment made under the stage lock (staging, or a run that needs the ledger alone). */
  rules(origin: string): ShipmentRules {
    return {
      origin,
      allowed: async (client) => {
        const held = await client.query(
          `UPDATE ledger_lock SET expires_at = now() + ${TTL} WHERE name = 'stage' AND holder = $1`,
          [this.#holder, LEASE_TTL_MS],
        );
        if (held.rowCount !== 1) throw new LeaseLostError(this.#label, 'the stage lock');
      },
    };
  }

  #query<T extends pg.QueryResultRow>(sql: string, values: unknown[]): Promise<pg.QueryResult<T>> {
    return this.#pg.run((client) => client.query<T>(sql, values));
  }
}
