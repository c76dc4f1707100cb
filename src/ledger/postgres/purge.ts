import type pg from 'pg';
import { ExitCode, MigrateError, UsageError } from '../../errors.js';
import { PURGED_SETTING, purgeStatements, scopeStatement, type PurgeCounts, type PurgeScope } from '../purge-sql.js';
import { firstContact } from './first-contact.js';
import { holderId } from './holder.js';
import { inTransaction } from './transaction.js';
import { endOnStop, type EndOnStop } from './stop.js';
import { newClient, redactUrl } from './url.js';

/** The tables a purge rewrites with VACUUM FULL (every table that held personal data). */
const REWRITTEN = ['accounts', 'items', 'account_issues', 'events', 'runs'];

/** What a purge of a PostgreSQL ledger did. */
interface PostgresPurge extends PurgeCounts {
  label: string;
  /** Whether CHECKPOINT could be run (superuser or pg_checkpoint): the rewritten tables on disk, the WAL free to go. */
  checkpointed: boolean;
}

/**
 * `migrate ledger purge --ledger URL`: the same rows changed as on a state directory's ledger (purge-sql.ts), in one
 * transaction under the ledger's stage lock (taken only while no runner is live and no account leased: a push would
 * work on copies of the rows); then every table that held personal data rewritten by VACUUM FULL, which writes new
 * files and removes the old ones (an UPDATE alone leaves the old row versions in the table's pages), and a CHECKPOINT
 * asked for. What PostgreSQL keeps beyond the tables (its write-ahead log until recycled, base backups, replicas) is
 * the database's administrators' (docs/data-protection.md).
 */
export async function purgePostgresLedger(
  url: string,
  scope: PurgeScope,
  stopping: { signal?: AbortSignal; onRowsPurged?: () => void } = {},
): Promise<PostgresPurge> {
  const label = redactUrl(url);
  const client = await firstContact(url, label);
  const holder = holderId();
  let locked = false;
  let stop: EndOnStop | undefined;
  try {
    // A stop cancels the running statement and ends the connection: the purge's transaction is rolled back, a VACUUM
    // FULL given up.
    stop = await endOnStop(stopping.signal, { url, client });
    const exists = await client.query<{ found: boolean }>(`SELECT to_regclass('ledger_lock') IS NOT NULL AS found`);
    if (exists.rows[0]?.found !== true)
      throw new UsageError(
        `no ledger in ${label} (the database holds no migrate ledger): give the --ledger of the migration's push runs`,
        'ledger_not_found',
      );
    // Given back in any case (only if ours): a stop may end the connection as the server takes it.
    locked = true;
    const taken = await client.query(
      `UPDATE ledger_lock SET holder = $1, expires_at = now() + interval '1 hour' ` +
        `WHERE name = 'stage' AND expires_at < now() ` +
        `AND NOT EXISTS (SELECT 1 FROM runners WHERE expires_at > now()) ` +
        `AND NOT EXISTS (SELECT 1 FROM accounts WHERE lease_owner IS NOT NULL AND lease_until > now())`,
      [holder],
    );
    if (taken.rowCount !== 1)
      throw new MigrateError(
        `a push is running on the PostgreSQL ledger ${label}; wait for it to finish (or stop it), then purge`,
        { code: 'state_locked', exitCode: ExitCode.locked },
      );
    const counts = await inTransaction(client, async () => {
      await client.query(scopeStatement('postgres', scope));
      const count = async (sql: string): Promise<number> => (await client.query<{ n: number }>(sql)).rows[0]?.n ?? 0;
      const accounts = await count('SELECT COUNT(*) AS n FROM purge_scope');
      const total = await count('SELECT COUNT(*) AS n FROM accounts');
      const changed: Record<string, number> = {};
      for (const { table, sql } of purgeStatements('postgres'))
        changed[table] = (changed[table] ?? 0) + ((await client.query(sql)).rowCount ?? 0);
      await client.query(
        `INSERT INTO settings (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value`,
        [PURGED_SETTING, JSON.stringify({ at: new Date().toISOString(), scope, accounts })],
      );
      stop?.committing();
      return { accounts, kept: total - accounts, changed };
    }).finally(() => stop?.committed());
    stopping.onRowsPurged?.();
    for (const table of REWRITTEN) await client.query(`VACUUM FULL ${table}`);
    const checkpointed = await client.query('CHECKPOINT').then(
      () => true,
      () => false,
    );
    return { ...counts, label, checkpointed };
  } finally {
    stop?.dispose();
    if (locked) await releaseStageLock(client, url, holder);
    await client.end().catch(() => undefined);
  }
}

/** The stage lock given back, on a new connection when a stop ended the command's own. */
async function releaseStageLock(client: pg.Client, url: string, holder: string): Promise<void> {
  const release = (on: pg.Client): Promise<unknown> =>
    on.query(`UPDATE ledger_lock SET holder = '', expires_at = '-infinity' WHERE name = 'stage' AND holder = $1`, [
      holder,
    ]);
  await release(client).catch(async () => {
    const fresh = newClient(url);
    try {
      await fresh.connect();
      await release(fresh);
    } catch {
      // The database is away: the lock expires by itself (within the hour it was taken for).
    } finally {
      await fresh.end().catch(() => undefined);
    }
  });
}
