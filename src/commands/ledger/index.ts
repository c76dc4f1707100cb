import type { Command } from 'commander';
import { ledgerUrlOf } from '../../config/ledger-url.js';
import { SETTING_ENV } from '../../config/precedence.js';
import { ExitCode, InterruptedError, UsageError } from '../../errors.js';
import { untilStopped, type StopRules } from '../../stop-signals.js';
import { moveLedgerToPostgres, type MoveResult } from '../../ledger/postgres/index.js';
import { addOptions, LEDGER_OPTION, STATE_OPTION } from '../common/option-table.js';
import { ledgerForgetCommand, type LedgerForgetOptions } from './forget.js';
import { existingLedgerDir, onLockedLedger } from './locked-ledger.js';
import { ledgerPurgeCommand, type LedgerPurgeOptions } from './purge.js';

export interface LedgerCopyOptions {
  state: string;
  to?: string | undefined;
}

export function registerLedgerCommand(program: Command, setExitCode: (code: number) => void): void {
  const ledger = program
    .command('ledger')
    .description("Look after a results ledger: move it between stores, remove customers' data from it.");
  const copy = ledger
    .command('copy')
    .description(
      "Copy a state directory's SQLite ledger into an empty PostgreSQL ledger, then read it back and compare the two " +
        'row by row; from then on push, status and report take --ledger URL. The state directory is left as it was.',
    );
  addOptions(copy, [STATE_OPTION])
    .option('--to <url>', `the PostgreSQL ledger (postgresql://...; else ${SETTING_ENV.ledger})`)
    .action(async (options: LedgerCopyOptions) => {
      setExitCode(await untilStopped(COPY_STOPPED, (signal) => ledgerCopyCommand(options, signal)));
    });
  const purge = ledger
    .command('purge')
    .description(
      'Remove the personal data (staged payloads, record bodies, values quoted in errors) of every account whose ' +
        'work is done, keeping ids, states, outcomes and counts; then compact the ledger so that the bytes are gone ' +
        '(SQLite: VACUUM, write-ahead log truncated, snapshots replaced by one of the purged ledger; PostgreSQL: ' +
        'VACUUM FULL). A later push sends nothing for the purged accounts (docs/data-protection.md).',
    );
  addOptions(purge, [STATE_OPTION, LEDGER_OPTION])
    .option('--all', 'also the accounts not done (asks on a terminal; --yes elsewhere)')
    .option('--yes', 'confirm --all without a question (cron, scripts)')
    .action(async (options: LedgerPurgeOptions) => {
      setExitCode(await untilStopped(PURGE_STOPPED, (signal) => ledgerPurgeCommand(options, signal)));
    });
  const forget = ledger
    .command('forget')
    .description(
      'Remove the accounts staged under an import supplier code that never reached the service (a mistyped ' +
        '--supplier, mapping or export), printing which; the next push stages the export as it reads now. Accounts ' +
        'of the code that reached the service are kept. A push does this by itself for a code the service refused ' +
        'as unknown.',
    );
  addOptions(forget, [STATE_OPTION])
    .requiredOption('--supplier <code>', 'the import supplier code whose never-sent accounts to remove')
    .option('--dry-run', 'only print which accounts would be removed')
    .action(async (options: LedgerForgetOptions) => {
      setExitCode(await untilStopped(FORGET_STOPPED, (signal) => ledgerForgetCommand(options, signal)));
    });
}

// SIGINT, SIGTERM and SIGHUP stop these commands as they stop push (src/stop-signals.ts): the first ends the work at
// its next safe point (a PostgreSQL transaction rolled back at once), exit 130 with one line saying what was kept; a
// second ends the process as the system does, and every store is still consistent (each change is one transaction).

const COPY_STOPPED: StopRules = {
  interrupted: () =>
    new InterruptedError(
      'by a stop signal',
      'nothing was copied: the copy and its comparison are one transaction, rolled back, so the PostgreSQL ledger ' +
        'holds none of it, and the state directory is as it was; run it again',
    ),
  atOnce: false,
};

const PURGE_STOPPED: StopRules = {
  interrupted: () =>
    new InterruptedError(
      'by a stop signal',
      'nothing was purged: the purge is one transaction, rolled back, and the ledger is as it was; run it again',
    ),
  atOnce: false,
};

const FORGET_STOPPED: StopRules = {
  interrupted: () =>
    new InterruptedError(
      'by a stop signal',
      'nothing was removed: the removal is one transaction and the ledger is as it was; run it again',
    ),
  atOnce: false,
};

/** `migrate ledger copy`: exit 0 when PostgreSQL holds exactly the SQLite ledger, 3 when the comparison differs. */
export async function ledgerCopyCommand(options: LedgerCopyOptions, signal?: AbortSignal): Promise<number> {
  const url = ledgerUrlOf(options.to, process.env, '--to');
  if (url === undefined)
    throw new UsageError('migrate ledger copy: give the PostgreSQL ledger with --to URL (or MIGRATE_LEDGER_URL)');
  const stateDir = existingLedgerDir(options.state);
  // No push may write either ledger meanwhile: the state directory's lock, then the PostgreSQL ledger's.
  return onLockedLedger(stateDir, async (ledger) => {
    const result = await moveLedgerToPostgres(ledger.db, url, signal);
    process.stdout.write(render(stateDir, result));
    return result.kept ? ExitCode.ok : ExitCode.fatal;
  });
}

function render(stateDir: string, result: MoveResult): string {
  const copied = result.kept ? 'copied' : 'did not keep the copy of';
  const lines = [`${copied} the ledger of ${stateDir} into ${result.label}:`];
  for (const [table, rows] of Object.entries(result.source))
    lines.push(`  ${table.padEnd(16)}${String(rows).padStart(10)} rows, ${result.copied[table] ?? 0} copied`);
  if (result.differences.length === 0) {
    lines.push(
      'compared row by row before committing: identical.',
      `From now on give --ledger ${result.label} to push, status and report (the password from PGPASSWORD or a ` +
        `.pgpass file); ${stateDir} is left as it was and no longer written.`,
    );
  } else {
    lines.push('compared row by row before committing: NOT identical:', ...result.differences.map((d) => `  ${d}`));
    lines.push(
      'Nothing was kept: the copy was rolled back, and the PostgreSQL ledger holds none of it. Report this, and go ' +
        'on with the state directory.',
    );
  }
  return `${lines.join('\n')}\n`;
}
