import type { Command } from 'commander';
import { registerServiceOptions } from '../config/service.js';
import { stampLines, stampsWanted } from './stamped-output.js';
import { DEFAULT_ENGINE_SETTINGS, runPush, type EngineSettings, type PushResult } from '../engine/index.js';
import {
  ExitCode,
  FatalError,
  InterruptedError,
  MigrateError,
  UsageError,
  visibleJson,
  visibleStrings,
  visibleText,
} from '../errors.js';
import { openExportInOrder, type ExportInOrder } from '../intake/export-in-order.js';
import type { ExportReader } from '../intake/index.js';
import type { FileOutOfOrder } from '../intake/order-proof.js';
import { scratchSpaceError } from './scratch-space.js';
import { isLedgerDamage, storageError } from '../ledger/index.js';
import { ExportCode } from '../mapping/issue-codes.js';
import { linkLines, notReadLines, spellingLines, type LinkedFile } from '../report/export-entries.js';
import { fileIssuesText, lockLostText, unknownAccountsText } from '../report/push-messages.js';
import type { LedgerCounts } from '../ledger/index.js';
import {
  buildPushSummary,
  colorWanted,
  countsUnchanged,
  hasNotices,
  pushSummaryJson,
  renderSummary,
  renderUnchanged,
} from '../report/summary.js';
import type { ExportFiles } from '../sources/index.js';
import { registerContractOption } from './mapping-options.js';
import { exportIdentity } from './export-identity.js';
import { onLedger } from './ledger-snapshot.js';
import { dryRunPush } from './push-dry-run.js';
import { registerOutputFlags, registerRunFlags, registerSelectionFlags } from './push-flags.js';
import { runRate } from './push-monitoring.js';
import type { PushCommandOptions } from './push-options.js';
import { openPushRun, type PushRun, type RunEnding } from './push-run.js';
import { onStateDir, preparePush, type PushSetup } from './push-setup.js';
import { monotonicNow } from '../clock.js';

// `migrate push <dir>` as a composition: configuration (push-setup.ts) -> the run's resources (push-run.ts) -> the
// export, proven in order (docs/complete-or-not.md) -> the engine -> the summary. The command decides what to
// write when; the rules live below it.

export type { PushCommandOptions } from './push-options.js';

export function registerPushCommand(program: Command, setExitCode: (code: number) => void): void {
  const command = program
    .command('push')
    .description(
      'Push an export into the import service exactly once: create accounts, wait for processing, add notes, ' +
        'transactions, statements and payment instructions. Resumable; results in the ledger (--state).',
    )
    .argument('<dir>', 'the export directory');
  registerOutputFlags(registerSelectionFlags(registerRunFlags(command)));
  registerContractOption(command);
  registerServiceOptions(command).action(async (dir: string, options: Omit<PushCommandOptions, 'dir'>) => {
    if (stampsWanted(process.env)) {
      stampLines(process.stderr);
      if (options.json !== true) stampLines(process.stdout);
    }
    setExitCode(await pushCommand({ ...options, dir }));
  });
}

/** The signals that stop a push as Ctrl-C does: in-flight requests finish, the summary is printed, exit 130. */
const STOP_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

/** `migrate push <dir>`: returns the exit code (README "Exit codes"). */
export async function pushCommand(options: PushCommandOptions): Promise<number> {
  // Installed first: a signal during start-up or staging also stops the run cleanly (exit 130). SIGHUP (the ssh
  // session or terminal closed) is a stop as SIGTERM is, not an end without a summary.
  const controller = new AbortController();
  const onSignal = (): void => controller.abort();
  for (const name of STOP_SIGNALS) process.once(name, onSignal);
  try {
    return await pushWithSignal(options, controller.signal);
  } finally {
    for (const name of STOP_SIGNALS) process.off(name, onSignal);
  }
}

async function pushWithSignal(options: PushCommandOptions, signal: AbortSignal): Promise<number> {
  const startedAt = monotonicNow();
  const setup = await preparePush(options);
  const settings = engineSettings(options, setup);
  if (options.dryRun)
    // A PostgreSQL ledger is planned from a snapshot of it copied into a temporary state directory.
    return onLedger(options.ledger, (place) =>
      dryRunPush({
        options,
        setup: place.stateDir === undefined ? setup : onStateDir(setup, options, place.stateDir),
        label: place.label ?? setup.stateDir,
        settings,
        signal,
        tellEntries,
        refuse: (reader) => refuseExport(reader),
      }),
    );
  tellEntries(setup.exportFiles);
  const run = await openPushRun(options, setup, signal);
  // The ledger's counts as the run starts: a run that changed none of them says so in one line (a cron run).
  const before = run.ledger.read.counts();
  run.progress.tally.ledgerAccounts = Object.values(before.accounts).reduce<number>((sum, n) => sum + (n ?? 0), 0);
  let ending: RunEnding = { exitCode: ExitCode.fatal };
  try {
    const reader = await openExportForRun(options, setup, run, signal);
    const result = await run.settle(
      await runPush({
        ledger: run.ledger,
        client: run.service.client,
        settings,
        sink: run.sink,
        source: reader,
        signal: run.signal,
        selection: setup.selection,
        maxErrors: options.maxErrors,
        feed: run.feed?.({
          source: reader,
          identity: exportIdentity(setup.exportFiles, setup.config, run.service.config.dialect, options.dir),
          sink: run.sink,
          concurrency: options.concurrency,
          wait: options.wait,
          retryErrored: options.retryErrored === true,
        }),
      }),
      options.only !== undefined,
    );
    ending = { exitCode: concludeRun(options, run, { reader, result, startedAt, before }) };
    return ending.exitCode;
  } catch (error) {
    const explained = run.explain(error);
    ending = { exitCode: explained instanceof MigrateError ? explained.exitCode : ExitCode.fatal, error: explained };
    throw explained;
  } finally {
    await run.close(ending);
  }
}

/** The export, every file proven in order or sorted first; refused before anything is sent if it cannot go. */
async function openExportForRun(
  options: PushCommandOptions,
  setup: PushSetup,
  run: PushRun,
  signal: AbortSignal,
): Promise<ExportInOrder> {
  const emit = run.sink.emit.bind(run.sink);
  // Payloads are checked for the dialect they will be sent in, as the client checks them before sending.
  const reader = await openExportInOrder(
    options.dir,
    { ...setup.config, dialect: run.service.config.dialect },
    {
      scratchDir: run.stateDir,
      signal,
      found: setup.exportFiles,
      allowNoAccounts: options.allowNoAccounts === true,
      onProgress: onFirstOfEachFile((file) => emit({ type: 'reading', file })),
      onProof: (proof) => {
        emit({ type: 'order', ms: proof.ms, files: proof.files.length, outOfOrder: proof.outOfOrder.length });
        if (proof.outOfOrder.length > 0) emit({ type: 'sorting', files: proof.outOfOrder.map(outOfOrderFile) });
      },
    },
  ).catch((error: unknown) => {
    if (signal.aborted) throw new InterruptedError('before anything was sent');
    throw scratchSpaceError(error, run.stateDir, setup.exportFiles.files) ?? error;
  });
  run.onClose(() => reader.close());
  setup.stopAt('export-opened');
  // A signal while the export was opened (a streamed export's open does not watch it): nothing was sent yet.
  if (signal.aborted) throw new InterruptedError('before anything was sent');
  refuseExport(reader);
  return reader;
}

/** After the engine: the run recorded, the summary printed, what went wrong said; returns the exit code. */
function concludeRun(
  options: PushCommandOptions,
  run: PushRun,
  ended: { reader: ExportReader; result: PushResult; startedAt: number; before: LedgerCounts },
): number {
  const { reader, result, startedAt } = ended;
  run.closeLog({ outcome: result.reason, exitCode: result.exitCode });
  if (result.unknownAccounts.length > 0) tell(unknownAccountsText(result.unknownAccounts));
  // The ledger could not be written: a damaged file is named before anything is read from it for the summary.
  const storage = result.fatal?.class === 'storage' ? result.fatal.cause : undefined;
  if (isLedgerDamage(storage)) throw storage;
  const lockLost = run.lockLost();
  if (lockLost !== undefined) throw new FatalError(lockLostText(run.label, lockLost), 'state_lock_lost');
  run.progress.stop();
  const summary = buildPushSummary({
    result,
    topErrors: run.ledger.read.topErrorCodes(5),
    startedAt,
    ledgerLabel: run.label,
    processedThisRun: run.progress.tally.done.processed,
    createdThisRun: run.progress.tally.done.created,
    wait: options.wait,
    unknownAccounts: result.unknownAccounts,
    ...(result.maxErrors === undefined ? {} : { maxErrors: result.maxErrors }),
    notRead: reader.summary.notRead,
    behind: recordsBehind(run),
    neverRead: run.progress.tally.neverRead,
  });
  run.finish({
    reason: result.reason,
    exitCode: result.exitCode,
    counts: {
      ...result.counts,
      accountsPerSecond: runRate(run.progress.tally),
      ...(result.fatal ? { fatal: { code: result.fatal.code, detail: result.fatal.detail } } : {}),
    },
    answered: result.reason !== 'fatal',
  });
  const color = colorWanted(process.stdout, process.env);
  if (options.json) process.stdout.write(`${visibleJson(pushSummaryJson(summary))}\n`);
  else if (result.reason === 'finished' && countsUnchanged(ended.before, result.counts) && !hasNotices(summary))
    process.stdout.write(renderUnchanged(visibleStrings(summary), color));
  else process.stdout.write(renderSummary(visibleStrings(summary), color));
  if (storage instanceof MigrateError) throw storage;
  if (storage !== undefined)
    throw (
      storageError(storage, run.stateDir) ??
      new FatalError(`the ledger in ${run.label} could not be written (${result.fatal?.detail ?? ''}); stopped.`)
    );
  if (result.fatal) tell(`${result.fatal.code}: ${result.fatal.detail}${keySource(result.fatal.code, run)}`);
  for (const line of spellingLines(reader.summary.spellings)) tell(line);
  // Rows found outside any account: every account was sent, these rows were not.
  if (reader.fileIssues.length === 0) return result.exitCode;
  tell(fileIssuesText(reader.fileIssues, 'those rows were not sent, every account was'));
  return Math.max(result.exitCode, ExitCode.someFailed);
}

/**
 * Undocumented columns would drop data silently: push refuses them before anything is sent. Rows outside any account
 * (no or an unusable account number, a repeated header) are named at the end and the accounts go on, whether the read
 * found them before the first account (a file sorted first, a JSON export read whole) or while accounts were sent.
 */
function refuseExport(reader: ExportReader): void {
  if ((reader.fileIssues.byCode[ExportCode.unknownColumn] ?? 0) === 0) return;
  throw new UsageError(fileIssuesText(reader.fileIssues, 'nothing was sent'), 'export_file_issues');
}

/** An authentication failure names where the run's credentials came from (MIGRATE_API_KEY, --api-key-file FILE). */
function keySource(code: string, run: PushRun): string {
  return code === 'authentication_failed' ? ` (the credentials came from ${run.service.config.credentialSource})` : '';
}

/** Records waiting for accounts a person must act on first (invalid, ERRORED), as `status` counts them. */
function recordsBehind(run: PushRun): { invalid: number; errored: number } {
  const total = (counts: Partial<Record<string, number>>): number =>
    Object.values(counts).reduce<number>((sum, n) => sum + (n ?? 0), 0);
  return {
    invalid: total(run.ledger.read.waitingItems(['invalid'])),
    errored: total(run.ledger.read.waitingItems(['errored'])),
  };
}

const tell = (line: string): void => void process.stderr.write(`migrate: ${visibleText(line)}\n`);

/** Links read through and entries not read, told before anything is staged (docs/export-format.md "Files"). */
function tellEntries({ files, notRead }: Pick<ExportFiles, 'notRead'> & { files: LinkedFile[] }): void {
  for (const line of [...linkLines(files), ...notReadLines(notRead)]) tell(line);
}

/** Calls `then` with each file's name at its first progress report: when it starts being read. */
function onFirstOfEachFile(then: (file: string) => void): (progress: { file: string }) => void {
  const seen = new Set<string>();
  return ({ file }) => {
    if (seen.has(file)) return;
    seen.add(file);
    then(file);
  };
}

function outOfOrderFile(file: FileOutOfOrder): { file: string; line?: number; reason?: string } {
  return file.order === 'unsorted' ? { file: file.file, line: file.line } : { file: file.file, reason: file.reason };
}

function engineSettings(options: PushCommandOptions, setup: PushSetup): EngineSettings {
  return {
    ...DEFAULT_ENGINE_SETTINGS,
    multiplePaymentInstructions: setup.config.multiplePaymentInstructions,
    ...(options.only === undefined ? {} : { steps: options.only }),
    concurrency: options.concurrency,
    retryErrored: options.retryErrored === true,
    wait: options.wait,
    waitTimeoutMs: options.waitTimeout * 1000,
    lostCreateChecks: options.lostCreateChecks,
    batchBytes: options.batchBytes,
    transactionFlags: {
      check_previously_added: options.checkPreviouslyAdded,
      force_add_to_current_statement: options.forceAddToCurrentStatement,
    },
  };
}
