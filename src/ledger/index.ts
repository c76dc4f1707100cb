/**
 * The results ledger: a SQLite database (`<state>/ledger.sqlite`, WAL, 0600 in a 0700
 * directory) of what happened to every account and post-import item. Open with `Ledger.open`.
 *
 * Tables (schema versioned by PRAGMA user_version, see migrations.ts):
 * - accounts: one row per (import_supplier, external_account_number): staged payload (canonical
 *   JSON) and its sha256 fingerprint, state (AccountState), platform account number and
 *   identifier, attempts, polls, next status check, last error (code, detail, attr, file, line, column).
 * - account_issues: every issue of an invalid account (local or mapped back from the service).
 * - items: post-import records keyed by natural key (note body + created_at, transaction_id,
 *   statement_id, payment reference), with state (ItemState), result, how a done one was
 *   settled (SettledBy), attempts, last error.
 * - events: each account's history (run, time, step, from-state, to-state, detail).
 * - runs: id, command, start, end, status, exit code, options (never secrets), counts.
 *
 * Durability: WAL, synchronous=NORMAL (every commit survives a crash of the process); intents
 * the service cannot deduplicate are committed with synchronous=FULL (see db.ts). Writes from the
 * engine are group-committed (writer.ts): `updateAccount` / `updateItems(..., durable)` resolve
 * once committed; `flush()` commits what is queued (reads that start work on accounts flush first).
 *
 * API for the engine (read-write, one run at a time under the lock): `Ledger.open(stateDir)`,
 * startRun / finishRun, staging (`batch`, findAccount, insertAccount, updateAccountNow,
 * replaceIssues, findItem, insertItem, updateItemsNow), work (pageAccounts, dueChecks,
 * nextCheckAt, itemsOf, scheduledAccounts, countInState, accountById), close().
 *
 * API for other commands (read-only): `ledger.read` (LedgerReader): counts(), accounts({states,
 * afterId, limit}), account(supplier, number), accountsByNumber(number), history(accountId),
 * items(accountId), itemsInStates(states, {afterId, limit}), issues(accountId), waitingItemsOf(accountIds),
 * runs(limit), topErrorCodes(limit). `openLedgerReader(stateDir)` opens it without taking the run lock;
 * `openCampaignReader(stateDir)` adds the reads of status and report over a whole campaign (CampaignReader:
 * per supplier, paged, joined with the account's number; campaign-read.ts). `copyLedger` copies a ledger for
 * push --dry-run. Every method takes and returns plain data: no SQL outside this folder.
 * The lock of a state directory: `acquireLock(stateDir)` -> LedgerLock, or LedgerLockedError.
 * A damaged database file is a LedgerDamagedError naming it; `snapshotLedger` keeps the copies a
 * push takes as it starts (damage.ts, docs/ledger-recovery.md).
 */
import { CampaignReader } from './campaign-read.js';
import { openLedgerDbReadOnly } from './db.js';
import { LedgerReader } from './read.js';

export {
  CampaignReader,
  type ItemTally,
  type ItemWithAccount,
  type LastPush,
  type PushRunRow,
} from './campaign-read.js';
export { copyLedger, hasLedger, LEDGER_FILE } from './db.js';
export { isLedgerDamage, LedgerDamagedError } from './damage.js';
export type {
  ControlCount,
  KindTotal,
  MoneyTotals,
  RecordedTotals,
  SourceFileUse,
  UnusedRow,
} from './export-totals.js';
export { canonicalJson, fingerprintOf } from './fingerprint.js';
export { Ledger, type AccountCursor, type NewAccount } from './ledger.js';
export { acquireLock, LedgerLockedError, LOCK_FILE } from './lock.js';
export { LEDGER_SCHEMA_VERSION } from './migrations.js';
export { REFUSED_SUPPLIER_ERROR, type Forgotten } from './forget.js';
export { compactSqliteLedger, purgeSqliteRows, purgedKey, type PurgeCounts } from './purge.js';
export { LedgerReader, OPEN_PERIOD_CODES, type LedgerCounts, type OpenPeriodCounts } from './read.js';
export { checkStateDir } from './state-dir.js';
export { storageError, storageFailureCause } from './storage-error.js';
export * from './types.js';

/** A read-only view of a state directory's ledger, with a close function (status, report). */
export function openLedgerReader(stateDir: string): { read: LedgerReader; close: () => void } {
  const db = openLedgerDbReadOnly(stateDir);
  return { read: new LedgerReader(db), close: () => db.close() };
}

/**
 * A state directory's ledger opened read-only for a whole campaign's reads (status, report): the LedgerReader's and
 * campaign-read.ts's queries on one handle, with its close.
 */
export function openCampaignReader(stateDir: string): CampaignReader {
  return new CampaignReader(openLedgerDbReadOnly(stateDir));
}
