import type pg from 'pg';
import { inTransaction } from './transaction.js';

// The PostgreSQL ledger's schema, versioned as the SQLite ledger's (migrations.ts): `ledger_schema` holds the number
// of migrations applied; a migration is never edited once released. Version 1 is the SQLite ledger's schema at its
// version 8, column for column (the working copy and the snapshots of status and report are SQLite files of that
// schema), with what sharing needs: the lease of each account, the stage lock, the live runners, and the ids of runs
// and events drawn from sequences.
const MIGRATIONS: readonly string[] = [
  `
  CREATE SEQUENCE runs_id_seq;
  CREATE TABLE runs (
    id BIGINT PRIMARY KEY DEFAULT nextval('runs_id_seq'), command TEXT NOT NULL, started_at TEXT NOT NULL,
    ended_at TEXT, status TEXT NOT NULL, exit_code BIGINT, options TEXT NOT NULL, counts TEXT
  );
  CREATE TABLE accounts (
    id BIGINT PRIMARY KEY,
    -- "C": code point order, as SQLite's BINARY and the export's key order (sources/key-order.ts), whatever the
    -- database's default collation: leases go in the order staging goes.
    import_supplier TEXT NOT NULL, external_account_number TEXT COLLATE "C" NOT NULL, state TEXT NOT NULL,
    payload TEXT, fingerprint TEXT, sent_fingerprint TEXT, changed_fingerprint TEXT,
    origin_file TEXT, origin_line BIGINT, origins TEXT, platform_account_number TEXT, platform_identifier TEXT,
    attempts BIGINT NOT NULL DEFAULT 0, polls BIGINT NOT NULL DEFAULT 0, next_check_at BIGINT,
    error_code TEXT, error_detail TEXT, error_attr TEXT, error_file TEXT, error_line BIGINT, error_column TEXT,
    last_run_id BIGINT, created_at TEXT NOT NULL, updated_at TEXT NOT NULL,
    lease_owner TEXT, lease_until TIMESTAMPTZ,
    UNIQUE (import_supplier, external_account_number)
  );
  CREATE INDEX accounts_by_number ON accounts (external_account_number, id);
  CREATE INDEX accounts_by_lease ON accounts (lease_owner) WHERE lease_owner IS NOT NULL;
  CREATE TABLE account_issues (
    account_id BIGINT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    pos INTEGER NOT NULL,
    code TEXT NOT NULL, message TEXT NOT NULL, attr TEXT, file TEXT, line BIGINT, column_name TEXT,
    source TEXT NOT NULL,
    PRIMARY KEY (account_id, pos)
  );
  CREATE TABLE items (
    id BIGINT PRIMARY KEY,
    account_id BIGINT NOT NULL REFERENCES accounts (id),
    kind TEXT NOT NULL, natural_key TEXT NOT NULL, body TEXT NOT NULL, fingerprint TEXT NOT NULL,
    changed_fingerprint TEXT, state TEXT NOT NULL, result TEXT, attempts BIGINT NOT NULL DEFAULT 0,
    origin_file TEXT, origin_line BIGINT,
    error_code TEXT, error_detail TEXT, error_attr TEXT, error_file TEXT, error_line BIGINT, error_column TEXT,
    updated_at TEXT NOT NULL, settled_by TEXT,
    UNIQUE (account_id, kind, natural_key)
  );
  CREATE INDEX items_by_account ON items (account_id);
  -- What changed in the export after it was sent (SQLite migration 8): counted and listed at every run.
  CREATE INDEX accounts_changed ON accounts (id) WHERE changed_fingerprint IS NOT NULL;
  CREATE INDEX items_changed ON items (account_id) WHERE changed_fingerprint IS NOT NULL;
  -- An event's id is PostgreSQL's (runners write events at once); (origin, local_id) makes a shipment sent again after
  -- a lost answer land once.
  CREATE SEQUENCE events_id_seq;
  CREATE TABLE events (
    id BIGINT PRIMARY KEY DEFAULT nextval('events_id_seq'), run_id BIGINT, account_id BIGINT NOT NULL,
    item_id BIGINT, at TEXT NOT NULL, step TEXT NOT NULL, from_state TEXT, to_state TEXT, detail TEXT,
    origin TEXT NOT NULL, local_id BIGINT NOT NULL,
    UNIQUE (origin, local_id)
  );
  CREATE INDEX events_by_account ON events (account_id, id);
  CREATE TABLE settings (key TEXT PRIMARY KEY, value TEXT NOT NULL);
  -- 'stage': held by the runner that stages an export (and for a whole run by one that needs the ledger alone).
  CREATE TABLE ledger_lock (name TEXT PRIMARY KEY, holder TEXT NOT NULL, expires_at TIMESTAMPTZ NOT NULL);
  INSERT INTO ledger_lock (name, holder, expires_at) VALUES ('stage', '', '-infinity');
  -- The live runners and their runs: a run left 'running' by a runner that is gone is marked crashed.
  CREATE TABLE runners (holder TEXT PRIMARY KEY, run_id BIGINT, expires_at TIMESTAMPTZ NOT NULL);
  `,
  // 2: the control totals of a push's export (SQLite migration 9). An unused row's id counts within its run, and a
  // run's id is drawn here: runners never write the same (run_id, id).
  `
  CREATE TABLE export_totals (run_id BIGINT PRIMARY KEY, totals TEXT NOT NULL);
  CREATE TABLE unused_rows (
    run_id BIGINT NOT NULL, id BIGINT NOT NULL, source TEXT NOT NULL, file TEXT NOT NULL, line BIGINT NOT NULL,
    PRIMARY KEY (run_id, id)
  );
  `,
];

/** The SQLite ledger schema version the PostgreSQL schema's columns match (migrations.ts). */
export const MATCHING_SQLITE_VERSION = 9;

/** Applies the migrations not applied yet, each in its own transaction; one process at a time (an advisory lock). */
export async function migratePostgres(client: pg.Client): Promise<void> {
  await client.query('SELECT pg_advisory_lock(hashtext($1))', ['migrate ledger schema']);
  try {
    await client.query('CREATE TABLE IF NOT EXISTS ledger_schema (version INTEGER NOT NULL)');
    const rows = (await client.query<{ version: number }>('SELECT version FROM ledger_schema')).rows;
    const current = rows[0]?.version ?? 0;
    if (current > MIGRATIONS.length)
      throw new Error(
        `the ledger has schema version ${current}, newer than this migrate (${MIGRATIONS.length}); upgrade migrate`,
      );
    for (let version = current; version < MIGRATIONS.length; version += 1) {
      await inTransaction(client, async () => {
        await client.query(MIGRATIONS[version] ?? '');
        await client.query('DELETE FROM ledger_schema');
        await client.query('INSERT INTO ledger_schema (version) VALUES ($1)', [version + 1]);
      });
    }
  } finally {
    await client.query('SELECT pg_advisory_unlock(hashtext($1))', ['migrate ledger schema']).catch(() => undefined);
  }
}
