import type Database from 'better-sqlite3';

// Versioned schema of the ledger. PRAGMA user_version holds the number of migrations applied;
// a migration is never edited once released: add a new one instead.
const MIGRATIONS: readonly string[] = [
  `
  CREATE TABLE runs (
    id INTEGER PRIMARY KEY,
    command TEXT NOT NULL,
    started_at TEXT NOT NULL,
    ended_at TEXT,
    status TEXT NOT NULL,            -- running | finished | interrupted | fatal | crashed
    exit_code INTEGER,
    options TEXT NOT NULL,           -- JSON; never holds a secret
    counts TEXT                      -- JSON of the final counts
  );
  CREATE TABLE accounts (
    id INTEGER PRIMARY KEY,
    import_supplier TEXT NOT NULL,
    external_account_number TEXT NOT NULL,
    state TEXT NOT NULL,
    payload TEXT,                    -- canonical JSON of the staged payload; NULL: known only by post-import records
    fingerprint TEXT,                -- sha256 of payload
    sent_fingerprint TEXT,           -- fingerprint of the payload the service was sent
    changed_fingerprint TEXT,        -- set when the data changed after the account was imported
    origin_file TEXT,
    origin_line INTEGER,
    origins TEXT,                    -- JSON: payload attr prefix -> {file, line, column}
    platform_account_number TEXT,
    platform_identifier TEXT,
    attempts INTEGER NOT NULL DEFAULT 0,
    polls INTEGER NOT NULL DEFAULT 0,
    next_check_at INTEGER,           -- ms since epoch: when a scheduled account is polled next
    error_code TEXT, error_detail TEXT, error_attr TEXT, error_file TEXT, error_line INTEGER, error_column TEXT,
    last_run_id INTEGER,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    UNIQUE (import_supplier, external_account_number)
  );
  CREATE INDEX accounts_by_state ON accounts (state, id);
  CREATE INDEX accounts_by_check ON accounts (state, next_check_at);
  CREATE TABLE account_issues (
    account_id INTEGER NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    code TEXT NOT NULL, message TEXT NOT NULL, attr TEXT, file TEXT, line INTEGER, column_name TEXT,
    source TEXT NOT NULL             -- local | service
  );
  CREATE INDEX account_issues_by_account ON account_issues (account_id);
  CREATE TABLE items (
    id INTEGER PRIMARY KEY,
    account_id INTEGER NOT NULL REFERENCES accounts (id),
    kind TEXT NOT NULL,              -- note | transaction | statement | payment_instruction
    natural_key TEXT NOT NULL,
    body TEXT NOT NULL,              -- canonical JSON of the record as sent
    fingerprint TEXT NOT NULL,
    changed_fingerprint TEXT,
    state TEXT NOT NULL,             -- pending | held | sending | done | failed | unknown
    result TEXT,                     -- the service's answer, e.g. NOTE_ALREADY_EXISTS
    attempts INTEGER NOT NULL DEFAULT 0,
    origin_file TEXT, origin_line INTEGER,
    error_code TEXT, error_detail TEXT, error_attr TEXT, error_file TEXT, error_line INTEGER, error_column TEXT,
    updated_at TEXT NOT NULL,
    UNIQUE (account_id, kind, natural_key)
  );
  CREATE INDEX items_by_account ON items (account_id, kind, state);
  CREATE INDEX items_by_state ON items (state, kind);
  CREATE TABLE events (
    id INTEGER PRIMARY KEY,
    run_id INTEGER,
    account_id INTEGER NOT NULL,
    item_id INTEGER,
    at TEXT NOT NULL,
    step TEXT NOT NULL,
    from_state TEXT,
    to_state TEXT,
    detail TEXT
  );
  CREATE INDEX events_by_account ON events (account_id, id);
  `,
  // Settings chosen once per state directory. `dialect`: the wire format of the service
  // (docs/real-platform.md); a ledger that already has runs was pushed in the spec's.
  `
  CREATE TABLE settings (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
  );
  INSERT INTO settings (key, value) SELECT 'dialect', 'spec' WHERE EXISTS (SELECT 1 FROM runs);
  `,
  // 3: how each done item was settled (types.ts SettledBy). Items done before it are backfilled
  // from the service's answer kept in `result`; a payment instruction done then was created.
  `
  ALTER TABLE items ADD COLUMN settled_by TEXT;  -- created | already_exists | reconciled; set when done
  UPDATE items SET settled_by = CASE
    WHEN result IN ('NOTE_ALREADY_EXISTS', 'TRANSACTION_ALREADY_EXISTS', 'historical_statement_already_exists')
      THEN 'already_exists'
    ELSE 'created' END
  WHERE state = 'done';
  `,
  // 4: accounts in external account number order, the order the export is read in: a push sends
  // an account once staging has passed its number (engine/staging-gate.ts).
  `
  CREATE INDEX accounts_by_number ON accounts (external_account_number, id);
  `,
  // 5: an account's records are found through the (account_id, kind, natural_key) key's own index;
  // items_by_account (account_id, kind, state) repeated it and was rewritten at every state change.
  `
  DROP INDEX IF EXISTS items_by_account;
  `,
  // 6: the service a state directory is used with (settings 'service_url', 'import_supplier', beside 'dialect';
  // docs/reruns.md), recorded by a push when it first has none. A ledger from before this has runs against a
  // service nobody recorded: the first later push records its own, and this note says so.
  `
  INSERT INTO settings (key, value)
    SELECT 'service_note', 'recorded by the first push after runs 1-' || MAX(id) || ', whose service was not recorded'
    FROM runs HAVING COUNT(*) > 0;
  `,
  // 7: accounts the service refused because their customers or supply addresses were missing are staged again. Earlier
  // versions could send an account before every row of a scattered export was read (docs/complete-or-not.md):
  // the refusal was the tool's doing, not the data's. The next push checks them as any staged account (an account
  // whose export really lacks them is held back locally) and sends the others.
  `
  CREATE TEMP TABLE released AS
    SELECT a.id FROM accounts a WHERE a.state = 'invalid'
      AND NOT EXISTS (SELECT 1 FROM account_issues i WHERE i.account_id = a.id AND i.source = 'local')
      AND (
        (a.error_code = 'required' AND a.error_attr IN ('customers', 'supply_addresses'))
        OR EXISTS (SELECT 1 FROM account_issues i WHERE i.account_id = a.id AND i.source = 'service'
          AND i.code = 'required' AND i.attr IN ('customers', 'supply_addresses')));
  INSERT INTO events (run_id, account_id, at, step, from_state, to_state, detail)
    SELECT NULL, id, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), 'release', 'invalid', 'staged',
      'ledger migration 7: refused for parts an earlier version had not read yet'
    FROM released;
  DELETE FROM account_issues WHERE source = 'service' AND account_id IN (SELECT id FROM released);
  UPDATE accounts SET state = 'staged', error_code = NULL, error_detail = NULL, error_attr = NULL, error_file = NULL,
    error_line = NULL, error_column = NULL, updated_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
    WHERE id IN (SELECT id FROM released);
  DROP TABLE released;
  `,
  // 8: what changed in the export after it was sent (docs/reruns.md), counted and listed by push, status and
  // report at every run: partial indexes hold only those rows, so finding them reads no other.
  `
  CREATE INDEX IF NOT EXISTS accounts_changed ON accounts (id) WHERE changed_fingerprint IS NOT NULL;
  CREATE INDEX IF NOT EXISTS items_changed ON items (account_id) WHERE changed_fingerprint IS NOT NULL;
  `,
  // 9: the control totals of the export a push read to its end (docs/control-totals.md): per record kind the records
  // shaped and valid with their sums, per legacy file the rows read and used (export_totals, one JSON document per
  // run), and every legacy row that reached no record (unused_rows, numbered from 1 within its run).
  `
  CREATE TABLE IF NOT EXISTS export_totals (
    run_id INTEGER PRIMARY KEY,
    totals TEXT NOT NULL            -- JSON (export-totals.ts ExportTotals)
  );
  CREATE TABLE IF NOT EXISTS unused_rows (
    run_id INTEGER NOT NULL,
    id INTEGER NOT NULL,
    source TEXT NOT NULL,
    file TEXT NOT NULL,
    line INTEGER NOT NULL,
    PRIMARY KEY (run_id, id)
  );
  `,
];

export const LEDGER_SCHEMA_VERSION = MIGRATIONS.length;

/** Applies the migrations not applied yet, each in its own transaction. */
export function migrate(db: Database.Database): void {
  const current = db.pragma('user_version', { simple: true }) as number;
  if (current > MIGRATIONS.length) {
    throw new Error(
      `the ledger has schema version ${current}, newer than this migrate (${MIGRATIONS.length}); upgrade migrate`,
    );
  }
  for (let version = current; version < MIGRATIONS.length; version += 1) {
    const sql = MIGRATIONS[version] ?? '';
    db.transaction(() => {
      db.exec(sql);
      db.pragma(`user_version = ${version + 1}`);
    })();
  }
}
