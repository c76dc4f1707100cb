/**
 * The results ledger on PostgreSQL (`--ledger postgresql://...`, docs/postgres.md). PostgreSQL is the system of
 * record; a push works on a local SQLite working copy (the same Ledger class, the same engine) whose every write is
 * shipped to PostgreSQL in one transaction per group commit before the write's promise resolves, so that nothing is
 * sent whose intent PostgreSQL has not committed. `status` and `report` read a consistent snapshot copied into a
 * temporary SQLite file, with the same code as a state directory's ledger.
 */
export { DEFAULT_UNREACHABLE_SECONDS, openPostgresLedger, snapshotPostgresLedger } from './open.js';
export { clientReads, isPostgresUrl, redactUrl } from './url.js';
export { moveLedgerToPostgres, type MoveResult } from './move.js';
export { purgePostgresLedger } from './purge.js';
