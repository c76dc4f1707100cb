import { setTimeout as delay } from 'node:timers/promises';
import type pg from 'pg';
import { OPEN_PERIOD_COUNTS_SQL, openPeriodCounts, type LedgerCounts } from '../read.js';
import type { AccountState, ItemKind, ItemState } from '../types.js';
import type { Columns, LeasedPage } from './lease-terms.js';
import { deadOnThisHost } from './holder.js';
import type { Reconnecting } from './reconnect.js';

// Reads of the PostgreSQL ledger for a sharing runner: a leased page's rows, the whole ledger's counts.

/** The rows of leased accounts, their items and issues, in the SQLite columns of the working copy. */
export async function readRows(client: pg.Client, ids: number[], columns: Columns): Promise<LeasedPage> {
  const read = async (sql: string): Promise<unknown[][]> =>
    (await client.query({ text: sql, values: [ids], rowMode: 'array' })).rows as unknown[][];
  return {
    staging: false,
    accounts: await read(
      `SELECT ${columns.accounts.join(', ')} FROM accounts WHERE id = ANY($1) ORDER BY external_account_number, id`,
    ),
    items: await read(`SELECT ${columns.items.join(', ')} FROM items WHERE account_id = ANY($1) ORDER BY id`),
    issues: await read(
      `SELECT ${columns.issues.join(', ')} FROM account_issues WHERE account_id = ANY($1) ORDER BY account_id, pos`,
    ),
  };
}

/** Waits `ms`, or less when `signal` aborts. */
export function pause(ms: number, signal: AbortSignal): Promise<void> {
  return delay(ms, undefined, { signal }).catch(() => undefined);
}

/** Counts of accounts per state and of items per kind and state, as LedgerReader.counts() gives them. */
export async function countLedger(client: pg.Client): Promise<LedgerCounts> {
  const accounts: LedgerCounts['accounts'] = {};
  const items: LedgerCounts['items'] = {};
  const byState = await client.query<{ state: AccountState; n: number }>(
    'SELECT state, COUNT(*) AS n FROM accounts GROUP BY state',
  );
  for (const row of byState.rows) accounts[row.state] = row.n;
  const byKind = await client.query<{ kind: ItemKind; state: ItemState; n: number }>(
    'SELECT kind, state, COUNT(*) AS n FROM items GROUP BY kind, state',
  );
  for (const row of byKind.rows) (items[row.kind] ??= {})[row.state] = row.n;
  const changed = await client.query<{ n: number }>(
    'SELECT COUNT(*) AS n FROM accounts WHERE changed_fingerprint IS NOT NULL',
  );
  const changedRecords = await client.query<{ kind: ItemKind; n: number }>(
    'SELECT kind, COUNT(*) AS n FROM items WHERE changed_fingerprint IS NOT NULL GROUP BY kind',
  );
  const openPeriod = openPeriodCounts(
    (await client.query<{ code: string; n: number; accounts: number; detail: string }>(OPEN_PERIOD_COUNTS_SQL)).rows,
  );
  return {
    accounts,
    items,
    changedAfterImport: changed.rows[0]?.n ?? 0,
    recordsChangedAfterImport: Object.fromEntries(changedRecords.rows.map((row) => [row.kind, row.n])),
    ...(openPeriod === undefined ? {} : { openPeriod }),
  };
}

/**
 * Holders of live leases that are processes of this host no longer running: their leases are taken over at once
 * (the crash-then-rerun case), as a lease of a runner elsewhere is once it expires.
 */
export async function deadLeaseHolders(connection: Reconnecting, holder: string): Promise<string[]> {
  const holders = await connection.run((client) =>
    client.query<{ holder: string }>(
      `SELECT DISTINCT lease_owner AS holder FROM accounts WHERE lease_owner IS NOT NULL AND lease_owner <> $1 ` +
        `AND lease_until > now()`,
      [holder],
    ),
  );
  return holders.rows.map((row) => row.holder).filter(deadOnThisHost);
}
