import type pg from 'pg';
import type { LedgerCounts } from '../read.js';
import type { AccountState } from '../types.js';
import type { Reconnecting } from './reconnect.js';
import { countLedger, deadLeaseHolders, readRows } from './lease-rows.js';
import { LEASE_TTL_MS, LeaseLostError, type Columns, type LeasedPage } from './lease-terms.js';
import { deadOnThisHost } from './holder.js';
import { StageLock } from './stage-lock.js';
import type { ShipmentRules } from './shipper.js';
import { inTransaction } from './transaction.js';

// How runners share one PostgreSQL ledger (docs/postgres.md "Several runners"): accounts are leased a page at a time
// (FOR UPDATE SKIP LOCKED), a lease lives LEASE_TTL_MS unless its runner renews it, and every shipment of a runner
// renews the leases of the accounts it writes, or fails when another runner has taken one over. One runner at a time
// holds the stage lock: to stage an export (while no account is leased), or for a whole run that needs the ledger
// alone (--limit, --accounts, --retry-invalid, --max-errors N%).

const TTL = `$2 * interval '1 millisecond'`;

/**
 * One runner's side of the sharing, on its own connection (not the shipper's: a renewal never waits for a shipment).
 */
export class Coordinator {
  readonly #pg: Reconnecting;
  readonly #holder: string;
  readonly #label: string;
  readonly #states: readonly AccountState[];
  /** The stage lock (stage-lock.ts), renewed with this runner's leases. */
  readonly stageLock: StageLock;
  #cursor: { number: string; id: number } | undefined;
  #lost: Error | undefined;
  #timer: NodeJS.Timeout | undefined;
  #renewing = false;

  /** `states`: the account states that hold work for this run (leased; the others are released once written). */
  constructor(pgConnection: Reconnecting, holder: string, label: string, states: readonly AccountState[]) {
    this.#pg = pgConnection;
    this.#holder = holder;
    this.#label = label;
    this.#states = states;
    this.stageLock = new StageLock(pgConnection, holder, label);
  }

  get holder(): string {
    return this.#holder;
  }

  /** Set once a renewal failed for good (the database away past the limit, the stage lock taken over). */
  compromised(): Error | undefined {
    return this.#lost;
  }

  /** Registers this runner, marks the runs of runners that are gone crashed, and draws this run's id. */
  async register(): Promise<number> {
    const runId = await this.#pg.run(async (client) => {
      return inTransaction(client, async () => {
        const holders = await client.query<{ holder: string }>('SELECT holder FROM runners');
        const dead = holders.rows.map((row) => row.holder).filter(deadOnThisHost);
        await client.query(
          `UPDATE runs SET status = 'crashed' WHERE status = 'running' AND id NOT IN ` +
            `(SELECT run_id FROM runners WHERE expires_at > now() AND run_id IS NOT NULL AND holder <> ALL($1))`,
          [dead],
        );
        await client.query('DELETE FROM runners WHERE expires_at < now() OR holder = ANY($1)', [dead]);
        const id = (await client.query<{ id: number }>(`SELECT nextval('runs_id_seq') AS id`)).rows[0]?.id ?? 0;
        await client.query(`INSERT INTO runners (holder, run_id, expires_at) VALUES ($1, $3, now() + ${TTL})`, [
          this.#holder,
          LEASE_TTL_MS,
          id,
        ]);
        return id;
      });
    });
    this.#timer = setInterval(() => void this.#renew(), LEASE_TTL_MS / 3);
    this.#timer.unref();
    return runId;
  }

  /** Whether the export named `identity` still needs staging: not staged last, nor being staged by a live runner. */
  async stagingNeeded(identity: string): Promise<boolean> {
    const rows = await this.#query<{ staged: string | null; staging: string | null; holder: string; live: boolean }>(
      `SELECT (SELECT value FROM settings WHERE key = 'staged_export') AS staged,
              (SELECT value FROM settings WHERE key = 'staging_export') AS staging,
              holder, expires_at > now() AS live
         FROM ledger_lock WHERE name = 'stage'`,
      [],
    );
    const row = rows.rows[0];
    if (row === undefined || row.staged === identity) return false;
    const stagingNow = row.live && row.holder !== this.#holder && !deadOnThisHost(row.holder);
    return !(stagingNow && row.staging === identity);
  }

  #query<T extends pg.QueryResultRow>(sql: string, values: unknown[]): Promise<pg.QueryResult<T>> {
    return this.#pg.run((client) => client.query<T>(sql, values));
  }

  /**
   * Leases up to `limit` accounts that hold work and no live lease, in external account number order after the last
   * page (then from the start again, for leases that expired behind it), and reads their rows. A page whose answer
   * is lost on a dropped connection stays leased to this runner, unread: it is released when the runner ends.
   */
  async lease(limit: number, columns: Columns): Promise<LeasedPage> {
    const dead = await deadLeaseHolders(this.#pg, this.#holder);
    for (let pass = 0; pass < 2; pass += 1) {
      const page = await this.#pg.run((client) => this.#leasePage(client, limit, columns, dead));
      if (page.accounts.length > 0 || this.#cursor === undefined) return page;
      this.#cursor = undefined;
    }
    return { staging: false, accounts: [], items: [], issues: [] };
  }

  async #leasePage(client: pg.Client, limit: number, columns: Columns, dead: string[]): Promise<LeasedPage> {
    return inTransaction(client, async () => {
      // While a runner stages, only accounts it has staged (up to `staged_up_to`) are leased: it never touches them
      // again (staging goes in number order), and a runner that has the ledger alone leaves it at ''.
      const stage = await client.query<{ holder: string; live: boolean; upTo: string | null }>(
        `SELECT holder, expires_at > now() AS live, ` +
          `(SELECT value FROM settings WHERE key = 'staged_up_to') AS "upTo" ` +
          `FROM ledger_lock WHERE name = 'stage' FOR SHARE`,
      );
      const lock = stage.rows[0];
      const staging = lock !== undefined && lock.live && !deadOnThisHost(lock.holder);
      const leased = await client.query<{ id: number }>(
        `UPDATE accounts SET lease_owner = $1, lease_until = now() + ${TTL} WHERE id IN (
           SELECT id FROM accounts WHERE state = ANY($3)
             AND (lease_owner IS NULL OR lease_until < now() OR lease_owner = ANY($7))
             AND (external_account_number, id) > ($4, $5) AND ($8::text IS NULL OR external_account_number <= $8)
           ORDER BY external_account_number, id LIMIT $6 FOR UPDATE SKIP LOCKED)
         RETURNING id`,
        [
          this.#holder,
          LEASE_TTL_MS,
          this.#states,
          this.#cursor?.number ?? '',
          this.#cursor?.id ?? 0,
          limit,
          dead,
          staging ? (lock.upTo ?? '') : null,
        ],
      );
      const ids = leased.rows.map((row) => row.id);
      const page = { ...(await readRows(client, ids, columns)), staging };
      const last = page.accounts.at(-1);
      const at = columns.accounts.indexOf('external_account_number');
      if (last !== undefined) this.#cursor = { number: String(last[at]), id: Number(last[0]) };
      return page;
    });
  }

  /**
   * True while another runner holds work (a live lease on an account with work: one of a runner that is gone is
   * taken over by the next lease) or stages an export.
   */
  async othersHoldWork(): Promise<boolean> {
    const result = await this.#query<{ busy: boolean }>(
      `SELECT EXISTS (SELECT 1 FROM accounts WHERE state = ANY($2) AND lease_owner IS NOT NULL AND lease_owner <> $1
           AND lease_until > now())
         OR EXISTS (SELECT 1 FROM ledger_lock WHERE name = 'stage' AND holder <> $1 AND expires_at > now()
           AND holder <> ALL($3)) AS busy`,
      [this.#holder, this.#states, await deadLeaseHolders(this.#pg, this.#holder)],
    );
    return result.rows[0]?.busy === true;
  }

  /** The rules of a shipment from a working copy that holds leases. */
  leaseRules(origin: string): ShipmentRules {
    return {
      origin,
      allowed: async (client, accounts) => {
        if (accounts.length === 0) return;
        // An account this runner released once it had no work left (the shipment that settled it) is taken again for
        // the writes that follow its settling (its issues, a late outcome): nobody else leases a settled account, and
        // no runner stages meanwhile.
        const renewed = await client.query(
          `UPDATE accounts SET lease_owner = $1, lease_until = now() + ${TTL} WHERE id IN ` +
            `(SELECT id FROM accounts WHERE id = ANY($3) AND (lease_owner = $1 OR (lease_owner IS NULL ` +
            `AND state <> ALL($4) AND NOT EXISTS (SELECT 1 FROM ledger_lock WHERE name = 'stage' AND holder <> $1 ` +
            `AND expires_at > now()))) ORDER BY id FOR UPDATE)`,
          [this.#holder, LEASE_TTL_MS, accounts, this.#states],
        );
        if (renewed.rowCount !== accounts.length)
          throw new LeaseLostError(this.#label, `the lease of ${accounts.length - (renewed.rowCount ?? 0)} account(s)`);
      },
      // An account with no work left for this run is released at once: a lease costs a renewal until then.
      written: async (client, accounts, states) => {
        // Only when an account row written is in a state without work (most shipments: none, and no round trip).
        if ([...states].every((state) => (this.#states as readonly string[]).includes(state))) return;
        await client.query(
          `UPDATE accounts SET lease_owner = NULL, lease_until = NULL ` +
            `WHERE id = ANY($2) AND lease_owner = $1 AND state <> ALL($3)`,
          [this.#holder, accounts, this.#states],
        );
      },
    };
  }

  async #renew(): Promise<void> {
    if (this.#renewing) return;
    this.#renewing = true;
    try {
      // Rows locked in id order, as a shipment locks its accounts: the two never wait for each other in a circle.
      await this.#query(
        `UPDATE accounts SET lease_until = now() + ${TTL} WHERE id IN ` +
          `(SELECT id FROM accounts WHERE lease_owner = $1 ORDER BY id FOR UPDATE)`,
        [this.#holder, LEASE_TTL_MS],
      );
      await this.#query(`UPDATE runners SET expires_at = now() + ${TTL} WHERE holder = $1`, [
        this.#holder,
        LEASE_TTL_MS,
      ]);
      if (!(await this.stageLock.renew())) this.#lost ??= new LeaseLostError(this.#label, 'the stage lock');
    } catch (error) {
      this.#lost ??= error instanceof Error ? error : new Error(String(error));
    } finally {
      this.#renewing = false;
    }
  }

  /** Counts of the whole ledger (every runner's accounts), for the run's summary and exit code. */
  counts(): Promise<LedgerCounts> {
    return this.#pg.run((client) => countLedger(client));
  }

  /** Releases every lease and the stage lock, and unregisters the runner. */
  async close(): Promise<void> {
    clearInterval(this.#timer);
    await this.stageLock.release().catch(() => undefined);
    await this.#query('UPDATE accounts SET lease_owner = NULL, lease_until = NULL WHERE lease_owner = $1', [
      this.#holder,
    ]).catch(() => undefined);
    await this.#query('DELETE FROM runners WHERE holder = $1', [this.#holder]).catch(() => undefined);
  }
}
