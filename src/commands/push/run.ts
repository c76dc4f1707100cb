import { leaseFeed, readingEvents, runPush, settleShared, type PushResult } from '../../engine/index.js';
import {
  ExitCode,
  FatalError,
  InterruptedError,
  messageOf,
  MigrateError,
  UsageError,
  visibleText,
} from '../../errors.js';
import { openExportInOrder, type ExportInOrder } from '../../intake/export-in-order.js';
import type { ExportReader } from '../../intake/index.js';
import { isLedgerDamage, storageError, type LedgerCounts } from '../../ledger/index.js';
import { ExportCode } from '../../mapping/issue-codes.js';
import { linkLines, notReadLines, spellingLines, type LinkedFile } from '../shared/export-entries.js';
import { fileIssuesText, lockLostText, unknownAccountsText } from './push-messages.js';
import { recordsBehind } from './left-over.js';
import { endLog } from './push-sinks.js';
import { runOriginJson } from '../shared/run-origin.js';
import { buildPushSummary, countsUnchanged, printPushSummary, type PushSummary } from './summary.js';
import type { ExportFiles } from '../../sources/index.js';
import { exportIdentity } from './export-identity.js';
import { scratchSpaceError } from '../shared/scratch-space.js';
import type { PushRun } from './open-run.js';
import type { PushConfig } from './resolve.js';

// The push on an open run: the export, every file proven in order or sorted first (docs/complete-or-not.md), the
// engine, then the run's outcome and the summary. The command decides what to write when; the rules live below it.

/** Runs the push; returns the exit code. The run's ending (how disposal records it) is set whatever happens. */
export async function pushOnRun(config: PushConfig, run: PushRun, startedAt: number): Promise<number> {
  // The ledger's counts as the run starts: a run that changed none of them says so in one line (a cron run).
  const before = run.ledger.read.counts();
  run.progress.tally.ledgerAccounts = Object.values(before.accounts).reduce<number>((sum, n) => sum + (n ?? 0), 0);
  try {
    await using reader = await openExportForRun(config, run);
    const filtered = config.engine.steps !== undefined;
    const result = await settleShared(run.shared, await runEngine(config, run, reader), filtered);
    run.ending.exitCode = concludeRun(config, run, { reader, result, startedAt, before });
    return run.ending.exitCode;
  } catch (error) {
    const explained = storageError(error, run.stateDir) ?? error;
    const exitCode = explained instanceof MigrateError ? explained.exitCode : ExitCode.fatal;
    run.ending = { ...run.ending, exitCode, error: explained };
    throw explained;
  }
}

function runEngine(config: PushConfig, run: PushRun, reader: ExportInOrder): Promise<PushResult> {
  const { engine: settings } = config;
  return runPush({
    ledger: run.ledger,
    client: run.client,
    settings,
    sink: run.sink,
    source: reader,
    signal: run.signal,
    selection: config.selection,
    maxErrors: config.maxErrors,
    feed:
      run.shared &&
      leaseFeed({
        ledger: run.ledger,
        shared: run.shared.lease,
        source: reader,
        identity: exportIdentity(config.exportFiles, config.mapping, run.service.dialect, config.dir),
        sink: run.sink,
        concurrency: settings.concurrency,
        retryErrored: settings.retryErrored,
        wait: settings.wait,
      }),
  });
}

/** The export, every file proven in order or sorted first; refused before anything is sent if it cannot go. */
async function openExportForRun(config: PushConfig, run: PushRun): Promise<ExportInOrder & AsyncDisposable> {
  const { signal } = run;
  // Payloads are checked for the dialect they will be sent in, as the client checks them before sending.
  const reader = await openExportInOrder(
    config.dir,
    { ...config.mapping, dialect: run.service.dialect },
    {
      scratchDir: run.stateDir,
      signal,
      found: config.exportFiles,
      allowNoAccounts: config.allowNoAccounts,
      ...readingEvents(run.sink),
    },
  ).catch((error: unknown) => {
    if (signal.aborted) throw new InterruptedError('before anything was sent');
    throw scratchSpaceError(error, run.stateDir, config.exportFiles.files) ?? error;
  });
  try {
    run.stopAt('export-opened');
    // A signal while the export was opened (a streamed export's open does not watch it): nothing was sent yet.
    if (signal.aborted) throw new InterruptedError('before anything was sent');
    refuseExport(reader);
  } catch (error) {
    await reader.close();
    throw error;
  }
  return Object.assign(reader, { [Symbol.asyncDispose]: () => reader.close() });
}

/** After the engine: the run's outcome set, the summary printed, what went wrong said; returns the exit code. */
function concludeRun(
  config: PushConfig,
  run: PushRun,
  ended: { reader: ExportReader; result: PushResult; startedAt: number; before: LedgerCounts },
): number {
  const { reader, result } = ended;
  if (run.log) endLog(run.log, { outcome: result.reason, exitCode: result.exitCode });
  if (result.unknownAccounts.length > 0) tell(unknownAccountsText(result.unknownAccounts));
  // The ledger could not be written: a damaged file is named before anything is read from it for the summary.
  const storage = result.fatal?.class === 'storage' ? result.fatal.cause : undefined;
  if (isLedgerDamage(storage)) throw storage;
  const lost = run.lockLost;
  if (lost.aborted) throw new FatalError(lockLostText(run.label, messageOf(lost.reason)), 'state_lock_lost');
  run.progress.stop();
  const summary = pushSummary(config, run, ended);
  const { reason, exitCode, counts, fatal } = result;
  run.ending.outcome = {
    ...{ reason, exitCode, answered: reason !== 'fatal' },
    counts: { ...counts, ...(fatal ? { fatal: { code: fatal.code, detail: fatal.detail } } : {}) },
  };
  printPushSummary(summary, {
    json: config.outputs.json,
    unchanged: reason === 'finished' && countsUnchanged(ended.before, counts),
  });
  if (storage instanceof MigrateError) throw storage;
  if (storage !== undefined)
    throw (
      storageError(storage, run.stateDir) ??
      new FatalError(`the ledger in ${run.label} could not be written (${fatal?.detail ?? ''}); stopped.`)
    );
  if (fatal) tell(`${fatal.code}: ${fatal.detail}${keySource(fatal.code, run)}`);
  for (const line of spellingLines(reader.summary.spellings)) tell(line);
  // Rows found outside any account: every account was sent, these rows were not.
  if (reader.fileIssues.length === 0) return exitCode;
  tell(fileIssuesText(reader.fileIssues, 'those rows were not sent, every account was'));
  return Math.max(exitCode, ExitCode.someFailed);
}

function pushSummary(
  config: PushConfig,
  run: PushRun,
  { reader, result, startedAt }: { reader: ExportReader; result: PushResult; startedAt: number },
): PushSummary {
  const origin = runOriginJson(config.outputs.origin, run.service.baseUrl);
  const summary = buildPushSummary({
    result,
    topErrors: run.ledger.read.topErrorCodes(5),
    startedAt,
    ledgerLabel: run.label,
    processedThisRun: run.progress.tally.done.processed,
    createdThisRun: run.progress.tally.done.created,
    wait: config.engine.wait,
    unknownAccounts: result.unknownAccounts,
    ...(result.maxErrors === undefined ? {} : { maxErrors: result.maxErrors }),
    notRead: reader.summary.notRead,
    behind: recordsBehind(run.ledger.read),
    neverRead: run.progress.tally.neverRead,
  });
  return { runConfig: origin.run_config, serviceUrl: origin.service_url, ...summary };
}

/**
 * Undocumented columns would drop data silently: push refuses them before anything is sent. Rows outside any account
 * (no or an unusable account number, a repeated header) are named at the end and the accounts go on, whether the read
 * found them before the first account (a file sorted first, a JSON export read whole) or while accounts were sent.
 */
export function refuseExport(reader: ExportReader): void {
  if ((reader.fileIssues.byCode[ExportCode.unknownColumn] ?? 0) === 0) return;
  throw new UsageError(fileIssuesText(reader.fileIssues, 'nothing was sent'), 'export_file_issues');
}

/** An authentication failure names where the run's credentials came from (MIGRATE_API_KEY, --api-key-file FILE). */
function keySource(code: string, run: PushRun): string {
  return code === 'authentication_failed' ? ` (the credentials came from ${run.service.credentialSource})` : '';
}

const tell = (line: string): void => void process.stderr.write(`migrate: ${visibleText(line)}\n`);

/** Links read through and entries not read, told before anything is staged (docs/export-format.md "Files"). */
export function tellEntries(entries: Pick<ExportFiles, 'notRead'> & { files: LinkedFile[] }): void {
  for (const line of [...linkLines(entries.files), ...notReadLines(entries.notRead)]) tell(line);
}
