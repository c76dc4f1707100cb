import { statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline/promises';
import { ledgerUrlOf } from '../../config/ledger-url.js';
import { ExitCode, InterruptedError, UsageError } from '../../errors.js';
import { compactSqliteLedger, LEDGER_FILE, purgeSqliteRows, type PurgeCounts } from '../../ledger/index.js';
import { purgePostgresLedger } from '../../ledger/postgres/index.js';
import { ledgerExists } from '../common/ledger-source.js';
import { onLockedLedger, stopPoint } from './locked-ledger.js';

export interface LedgerPurgeOptions {
  state: string;
  ledger?: string | undefined;
  all?: boolean;
  yes?: boolean;
}

/** Where the purge asks its question and reads the answer (a terminal; tests give their own). */
export interface Terminal {
  interactive: boolean;
  ask(question: string, signal?: AbortSignal): Promise<string>;
}

const processTerminal: Terminal = {
  interactive: process.stdin.isTTY === true && process.stderr.isTTY === true,
  async ask(question, signal) {
    const reader = createInterface({ input: process.stdin, output: process.stderr });
    // Ctrl-C at the question (the terminal in raw mode sends no signal) stops the command as the signal would.
    reader.on('SIGINT', () => process.kill(process.pid, 'SIGINT'));
    try {
      return await reader.question(question, { signal: signal ?? new AbortController().signal });
    } finally {
      reader.close();
    }
  },
};

/**
 * `migrate ledger purge`: removes the personal data of every account whose work is done (with --all: of every
 * account) from the ledger, keeping ids, states, outcomes and counts, and compacts it so that the bytes are gone
 * (docs/data-protection.md).
 */
export async function ledgerPurgeCommand(
  options: LedgerPurgeOptions,
  signal?: AbortSignal,
  terminal = processTerminal,
): Promise<number> {
  const url = ledgerUrlOf(options.ledger, process.env);
  const stateDir = resolve(options.state);
  if (url === undefined && !ledgerExists(stateDir))
    throw new UsageError(`no ledger in ${stateDir}: give the --state directory of the migration`, 'ledger_not_found');
  const scope = options.all === true ? 'all' : 'done';
  if (scope === 'all' && options.yes !== true) {
    if (!terminal.interactive)
      throw new UsageError(
        'migrate ledger purge --all removes the data of accounts not migrated yet, and no terminal is here to ' +
          'confirm it: give --yes to confirm, or leave out --all to purge only the accounts whose work is done',
        'confirmation_needed',
      );
    const answer = await terminal.ask(
      `Remove the personal data of EVERY account in ${url === undefined ? stateDir : 'the PostgreSQL ledger'}, ` +
        'including accounts not migrated yet (a later push stages them again from the export)? Type yes to go on: ',
      signal,
    );
    if (answer.trim().toLowerCase() !== 'yes') {
      process.stderr.write('migrate ledger purge: not confirmed; nothing was changed\n');
      return ExitCode.usage;
    }
  }
  // Once the rows are purged (committed), a stop leaves the compaction to a rerun, and says so.
  let rowsPurged = false;
  const notCompacted = (error: unknown): never => {
    if (signal?.aborted === true && rowsPurged) throw NOT_COMPACTED();
    throw error;
  };
  if (url !== undefined) {
    const result = await purgePostgresLedger(url, scope, { signal, onRowsPurged: () => (rowsPurged = true) }).catch(
      notCompacted,
    );
    process.stdout.write(
      summary(result.label, scope, result) +
        'Every table that held personal data was rewritten (VACUUM FULL): the old row versions are gone from ' +
        `the table files. ${
          result.checkpointed
            ? 'A CHECKPOINT was run.'
            : 'CHECKPOINT was not allowed to this user: ask the database administrator to run one.'
        } PostgreSQL's write-ahead log, its archive, base backups and replicas still hold the old rows until ` +
        'they are recycled or expire: see docs/data-protection.md.\n',
    );
    return ExitCode.ok;
  }
  await onLockedLedger(stateDir, async (ledger) => {
    // SQLite works without yielding: a stop signal is seen between the steps (the purge's transaction, then VACUUM).
    await stopPoint(signal);
    const counts = purgeSqliteRows(ledger.db, scope);
    rowsPurged = true;
    await stopPoint(signal).catch(notCompacted);
    const files = compactSqliteLedger(ledger.db, stateDir);
    const file = join(stateDir, LEDGER_FILE);
    process.stdout.write(
      summary(stateDir, scope, counts) +
        `${file} was rebuilt (VACUUM, ${statSync(file).size} bytes) and its write-ahead log truncated; ` +
        `${files.snapshotsRemoved} older snapshot(s) removed, one taken of the purged ledger: ${files.snapshot}\n`,
    );
  });
  return ExitCode.ok;
}

/** A stop after the purge's transaction committed: the rows are purged, the bytes not yet all gone. */
const NOT_COMPACTED = (): InterruptedError =>
  new InterruptedError(
    'by a stop signal after the personal data was removed from the rows',
    'the ledger is consistent, but its files were not compacted yet (old values may remain in free pages, the ' +
      'write-ahead log or older snapshots): run ledger purge again to finish',
  );

function summary(where: string, scope: 'done' | 'all', result: PurgeCounts): string {
  const changed = Object.entries(result.changed)
    .map(([table, rows]) => `${table} ${rows}`)
    .join(', ');
  const kept =
    scope === 'all' ? '' : ` ${result.kept} account(s) whose work is not done kept their data (--all purges them too).`;
  return (
    `purged the personal data of ${result.accounts} account(s)${scope === 'all' ? '' : ' whose work is done'} ` +
    `in ${where} (rows changed: ${changed}); ids, states, outcomes and counts are kept.${kept}\n`
  );
}
