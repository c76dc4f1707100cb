import { exitCodeOf, leaseFeed, runPush, settleShared, type PushResult } from '../../engine/index.js';
import { ExitCode, FatalError, messageOf, MigrateError, visibleText } from '../../errors.js';
import type { ExportInOrder } from '../../intake/export-in-order.js';
import type { ExportReader } from '../../intake/index.js';
import { isLedgerDamage, storageError, type LedgerCounts } from '../../ledger/index.js';
import { linkLines, notReadLines, spellingLines, type LinkedFile } from '../common/export-entries.js';
import { fileIssuesText, lockLostText, unknownAccountsText } from './push-messages.js';
import { recordsBehind } from './left-over.js';
import { endLog } from './push-sinks.js';
import { runOriginJson } from '../common/run-origin.js';
import { buildPushSummary, countsUnchanged, printPushSummary, type NextCommands, type PushSummary } from './summary.js';
import { ledgerWords, shellWord } from '../common/shell-word.js';
import type { ExportFiles } from '../../sources/index.js';
import { exportIdentity } from './export-identity.js';
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
    const { reader } = run;
    const result = await settleShared(run.shared, await runEngine(config, run, reader));
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

/** After the engine: the run's outcome set, the summary printed, what went wrong said; returns the exit code. */
function concludeRun(
  config: PushConfig,
  run: PushRun,
  ended: { reader: ExportReader; result: PushResult; startedAt: number; before: LedgerCounts },
): number {
  const { reader } = ended;
  // Rows found outside any account (every account was sent, these rows were not) need a person, as invalid data does.
  const { reason, counts, filtered } = ended.result;
  const exitCode = exitCodeOf(reason, counts, filtered, reader.fileIssues.length);
  const result = { ...ended.result, exitCode };
  if (run.log) endLog(run.log, { outcome: result.reason, exitCode });
  if (result.unknownAccounts.length > 0) tell(unknownAccountsText(result.unknownAccounts));
  // The ledger could not be written: a damaged file is named before anything is read from it for the summary.
  const storage = result.fatal?.class === 'storage' ? result.fatal.cause : undefined;
  if (isLedgerDamage(storage)) throw storage;
  const lost = run.lockLost;
  if (lost.aborted) throw new FatalError(lockLostText(run.label, messageOf(lost.reason)), 'state_lock_lost');
  run.progress.stop();
  const summary = pushSummary(config, run, { ...ended, result });
  const { fatal } = result;
  run.ending.outcome = {
    ...{ reason, exitCode, answered: reason !== 'fatal' },
    counts: { ...counts, ...(fatal ? { fatal: { code: fatal.code, detail: fatal.detail } } : {}) },
  };
  printPushSummary(summary, {
    json: config.outputs.json,
    unchanged: reason === 'finished' && countsUnchanged(ended.before, counts),
    commands: nextCommands(config, run),
  });
  if (storage instanceof MigrateError) throw storage;
  if (storage !== undefined)
    throw (
      storageError(storage, run.stateDir) ??
      new FatalError(`the ledger in ${run.label} could not be written (${fatal?.detail ?? ''}); stopped.`)
    );
  if (fatal) tell(`${fatal.code}: ${fatal.detail}${keySource(fatal.code, run)}`);
  for (const line of spellingLines(reader.summary.spellings)) tell(line);
  if (reader.fileIssues.length > 0)
    tell(fileIssuesText(reader.fileIssues, 'those rows were not sent, every account was'));
  return exitCode;
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

/** The commands the summary's hints name: this run's supplier (the one code its ledger holds) and ledger. */
function nextCommands(config: PushConfig, run: PushRun): NextCommands {
  const suppliers = run.ledger.read.suppliers();
  const supplier = config.mapping.importSupplier ?? (suppliers.length === 1 ? suppliers[0] : undefined);
  const ledger = ledgerWords(config.ledger);
  return {
    status: `migrate status ${supplier === undefined ? 'SUPPLIER' : shellWord(supplier)}${ledger}`,
    report: `migrate report${ledger} --out DIR`,
  };
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
