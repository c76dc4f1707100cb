import { createHash } from 'node:crypto';

// What `migrate ledger purge` changes in a ledger, as SQL for both stores (SQLite and PostgreSQL have the same tables,
// postgres/schema.ts). Personal data is what came from the export or from the service's answers about it: the staged
// payload, each record's body, a note's natural key (its text and document paths), and every free text that may quote
// a value (error details, issue messages, event details, a run's fatal detail). Ids, states, outcomes, codes,
// attributes, origins (file, line, column), fingerprints and counts stay: they are what status, report and a rerun
// need (docs/data-protection.md).

/** What replaces a removed text. */
export const REMOVED = 'removed by ledger purge';

/** The prefix of a record's natural key once purged: `purged:` and the sha256 of the key (purgedKey). */
const PURGED_KEY_PREFIX = 'purged:';

/**
 * A record's natural key as a purge stores it: its sha256, so that the same record in a later export is still found
 * (and neither staged again nor sent), while the key's text is gone.
 */
export function purgedKey(naturalKey: string): string {
  return PURGED_KEY_PREFIX + createHash('sha256').update(naturalKey, 'utf8').digest('hex');
}

/** The SQLite function the purge registers for the natural key's sha256. */
export const SQLITE_SHA256 = 'migrate_purge_sha256';

/** Which accounts a purge takes: those whose work is done (default), or all (`--all`). */
export type PurgeScope = 'done' | 'all';

/**
 * Accounts whose work is done: imported with every post-import step settled, and every record done. An account with
 * a record held, refused or of unknown outcome still needs a person, who needs its data.
 */
const SCOPES: Record<PurgeScope, string> = {
  done:
    `SELECT a.id FROM accounts a WHERE a.state = 'done' ` +
    `AND NOT EXISTS (SELECT 1 FROM items i WHERE i.account_id = a.id AND i.state <> 'done')`,
  all: 'SELECT id FROM accounts',
};

export type PurgeDialect = 'sqlite' | 'postgres';

/**
 * The statements of a purge, in order, after `purge_scope` (a temporary table of account ids) is made by
 * scopeStatement. Run in one transaction; each is idempotent (a second purge changes nothing).
 */
export function purgeStatements(dialect: PurgeDialect): Array<{ table: string; sql: string }> {
  const r = `'${REMOVED}'`;
  const scope = 'IN (SELECT id FROM purge_scope)';
  const sha =
    dialect === 'sqlite' ? `${SQLITE_SHA256}(natural_key)` : `encode(sha256(convert_to(natural_key, 'UTF8')), 'hex')`;
  // Event details that are more than a code (a word of letters and underscores) may quote a value.
  const notACode = dialect === 'sqlite' ? `detail GLOB '*[^A-Za-z_]*'` : `detail ~ '[^A-Za-z_]'`;
  const removedDetail = `error_detail = CASE WHEN error_detail IS NULL THEN NULL ELSE ${r} END`;
  const runs =
    dialect === 'sqlite'
      ? `UPDATE runs SET counts = json_set(counts, '$.fatal.detail', ${r}) WHERE json_valid(counts) ` +
        `AND json_extract(counts, '$.fatal.detail') IS NOT NULL AND json_extract(counts, '$.fatal.detail') <> ${r}`
      : `UPDATE runs SET counts = jsonb_set(counts::jsonb, '{fatal,detail}', to_jsonb(${r}::text))::text ` +
        `WHERE counts IS NOT NULL AND counts::jsonb #>> '{fatal,detail}' <> ${r}`;
  return [
    {
      table: 'items',
      sql:
        `UPDATE items SET natural_key = '${PURGED_KEY_PREFIX}' || ${sha} ` +
        `WHERE account_id ${scope} AND natural_key NOT LIKE '${PURGED_KEY_PREFIX}%'`,
    },
    {
      table: 'items',
      sql:
        `UPDATE items SET body = '', ${removedDetail} ` +
        `WHERE account_id ${scope} AND (body <> '' OR error_detail <> ${r})`,
    },
    {
      table: 'account_issues',
      sql: `UPDATE account_issues SET message = ${r} WHERE account_id ${scope} AND message <> ${r}`,
    },
    {
      table: 'events',
      sql: `UPDATE events SET detail = ${r} WHERE account_id ${scope} AND detail <> ${r} AND ${notACode}`,
    },
    {
      table: 'accounts',
      sql:
        `UPDATE accounts SET payload = NULL, ${removedDetail} ` +
        `WHERE id ${scope} AND (payload IS NOT NULL OR error_detail <> ${r})`,
    },
    { table: 'runs', sql: runs },
  ];
}

/** The statement making `purge_scope`, the accounts a purge takes. */
export function scopeStatement(dialect: PurgeDialect, scope: PurgeScope): string {
  return dialect === 'sqlite'
    ? `CREATE TEMP TABLE purge_scope AS ${SCOPES[scope]}`
    : `CREATE TEMP TABLE purge_scope ON COMMIT DROP AS ${SCOPES[scope]}`;
}

/** What a purge did: accounts taken, and rows changed per table. */
export interface PurgeCounts {
  accounts: number;
  /** Accounts left with their data (not done, without --all). */
  kept: number;
  changed: Record<string, number>;
}

/** The setting recording the last purge (read by staging: a purged record's key is looked up by its sha256 too). */
export const PURGED_SETTING = 'purged';
