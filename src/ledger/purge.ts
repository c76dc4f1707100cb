import type Database from 'better-sqlite3';
import { replaceSnapshots } from './damage.js';
import {
  PURGED_SETTING,
  purgedKey,
  purgeStatements,
  scopeStatement,
  SQLITE_SHA256,
  type PurgeCounts,
  type PurgeScope,
} from './purge-sql.js';

export { purgedKey, type PurgeCounts } from './purge-sql.js';

/** What the compaction after a purge of a state directory's ledger did to its files. */
interface SqliteCompaction {
  /** The one snapshot kept (of the purged ledger), and how many older ones were removed. */
  snapshot: string;
  snapshotsRemoved: number;
}

/**
 * `migrate ledger purge` on a state directory's ledger (its lock held by the caller), first step: the personal data of
 * the accounts in `scope` removed (purge-sql.ts), in one transaction. `compactSqliteLedger` then makes the bytes go.
 */
export function purgeSqliteRows(db: Database.Database, scope: PurgeScope): PurgeCounts {
  db.pragma('secure_delete = ON');
  db.function(SQLITE_SHA256, { deterministic: true }, (key: unknown) => purgedKey(String(key)).slice('purged:'.length));
  return db.transaction(() => {
    db.exec('DROP TABLE IF EXISTS temp.purge_scope');
    db.exec(scopeStatement('sqlite', scope));
    const accounts = (db.prepare('SELECT COUNT(*) AS n FROM purge_scope').get() as { n: number }).n;
    const total = (db.prepare('SELECT COUNT(*) AS n FROM accounts').get() as { n: number }).n;
    const changed: Record<string, number> = {};
    for (const { table, sql } of purgeStatements('sqlite'))
      changed[table] = (changed[table] ?? 0) + db.prepare(sql).run().changes;
    db.prepare(
      `INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value`,
    ).run(PURGED_SETTING, JSON.stringify({ at: new Date().toISOString(), scope, accounts }));
    db.exec('DROP TABLE purge_scope');
    return { accounts, kept: total - accounts, changed };
  })();
}

/**
 * Second step: the file rebuilt (VACUUM: no free page keeps an old value; secure_delete zeroes what the updates freed
 * meanwhile) and the write-ahead log checkpointed and truncated to nothing; the snapshots replaced by one of the
 * purged ledger.
 */
export function compactSqliteLedger(db: Database.Database, stateDir: string): SqliteCompaction {
  db.exec('VACUUM');
  db.pragma('wal_checkpoint(TRUNCATE)');
  const lastRun = (db.prepare('SELECT MAX(id) AS id FROM runs').get() as { id: number | null }).id ?? 0;
  const { snapshot, removed } = replaceSnapshots(db, stateDir, lastRun);
  return { snapshot, snapshotsRemoved: removed };
}
