import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import type { Command } from 'commander';
import type { ClientEvent } from '../api/index.js';
import { loadMigrateConfig, type MigrateConfig } from '../config/index.js';
import {
  describeService,
  MOVE_FLAG,
  refuseOtherService,
  serviceDifferences,
  serviceIdentity,
  type ServiceIdentity,
} from '../config/ledger-service.js';
import { chooseDialect, loadServiceConfig, registerServiceOptions, type ServiceFlags } from '../config/service.js';
import {
  DEFAULT_ENGINE_SETTINGS,
  planDryRun,
  runPush,
  teeSink,
  type EngineEvent,
  type EngineSettings,
  type EventSink,
  type PushStep,
} from '../engine/index.js';
import { ExitCode, FatalError, InterruptedError, MigrateError, UsageError } from '../errors.js';
import {
  isLedgerDamage,
  type Ledger,
  LEDGER_FILE,
  ledgerDamagedError,
  openLedgerReader,
  stateDirFailure,
} from '../ledger/index.js';
import { DEFAULT_UNREACHABLE_SECONDS, redactUrl } from '../ledger/postgres/index.js';
import { ledgerUrlOf } from '../config/ledger-url.js';
import { onLedger } from './ledger-snapshot.js';
import { exportIdentity } from './export-identity.js';
import { openRunLedger, postgresFailure } from './push-ledger.js';
import { openExportInOrder } from '../intake/export-in-order.js';
import type { FileOutOfOrder } from '../intake/order-proof.js';
import { openExport, type ExportReader, type IssueList } from '../intake/index.js';
import { findExportFiles } from '../sources/index.js';
import { createNdjsonLogSink, type NdjsonLogSink } from '../report/ndjson-log.js';
import { estimateExportAccounts } from '../report/export-size.js';
import { createProgressReporter, DEFAULT_PROGRESS_INTERVAL_SECONDS } from '../report/progress.js';
import { PlanJsonWriter, PlanSamples, renderPlan } from '../report/summary-plan.js';
import { buildPushSummary, colorWanted, renderSummary } from '../report/summary.js';
import { DEFAULT_SUPPLIERS } from '../sandbox/index.js';
import { openService } from './open-service.js';
import { parseCodes, parseMaxErrors, parseSteps, positiveInt, readAccountsOption } from './push-options.js';
import {
  checkMetricsFile,
  DEFAULT_METRICS_INTERVAL_SECONDS,
  lastEndedPush,
  openMetrics,
  runRate,
} from './push-monitoring.js';

export interface PushCommandOptions extends ServiceFlags {
  dir: string;
  state: string;
  supplier?: string;
  config?: string;
  concurrency: number;
  rate?: number;
  retryErrored?: boolean;
  wait: boolean;
  waitTimeout: number;
  checkPreviouslyAdded: boolean;
  forceAddToCurrentStatement: boolean;
  sandbox?: boolean;
  json?: boolean;
  dryRun?: boolean;
  limit?: number;
  accounts?: string;
  only?: ReadonlySet<PushStep>;
  maxErrors?: { count: number } | { percent: number };
  logFile?: string;
  moveLedgerToService?: boolean;
  retryInvalid?: readonly string[];
  quiet?: boolean;
  progressInterval?: number;
  metricsFile?: string;
  metricsInterval: number;
  ledger?: string;
  ledgerTimeout?: number;
}

export function registerPushCommand(program: Command, setExitCode: (code: number) => void): void {
  const command = program
    .command('push')
    .description(
      'Push an export into the import service exactly once: create accounts, wait for processing, add notes, ' +
        'transactions, statements and payment instructions. Resumable; results in the ledger (--state).',
    )
    .argument('<dir>', 'the export directory')
    .option('--state <dir>', 'state directory holding the results ledger (one per migration cohort)', './.migrate')
    .option(
      '--ledger <url>',
      'the results ledger in PostgreSQL (postgresql://...; else MIGRATE_LEDGER_URL) instead of --state',
    )
    .option(
      '--ledger-timeout <seconds>',
      `stop (exit 3) when the PostgreSQL ledger stays unreachable this long (default ${DEFAULT_UNREACHABLE_SECONDS})`,
      positiveInt('--ledger-timeout', 86_400),
    )
    .option(
      '--supplier <code>',
      'import supplier code where a record has none (else MIGRATE_SUPPLIER, else the mapping file)',
    )
    .option(
      '--config <file>',
      'mapping file (default: migrate.config.json in the export directory, else in the working directory)',
    )
    .option(
      '--concurrency <n>',
      'requests in flight at most',
      positiveInt('--concurrency', 1024),
      DEFAULT_ENGINE_SETTINGS.concurrency,
    )
    .option('--rate <n>', 'requests per second at most (default: no cap)', positiveInt('--rate', 100_000))
    .option('--retry-errored', 'create again accounts the platform ERRORED, even if their data did not change')
    .option('--no-wait', 'schedule accounts only; a later run polls them and pushes their records')
    .option(
      '--wait-timeout <seconds>',
      'stop waiting when no account has progressed for this long',
      positiveInt('--wait-timeout', 7 * 86_400),
      600,
    )
    .option(
      '--no-check-previously-added',
      'transactions: do not ask the service to skip transactions added before (then a transaction whose outcome ' +
        'is unknown is never resent)',
    )
    .option(
      '--no-force-add-to-current-statement',
      'transactions: fail those outside the open statement period instead of moving them into it',
    )
    .option('--sandbox', 'start the built-in sandbox (a local simulator of the service) and push there')
    .option('--json', 'print one JSON summary document on stdout (with --dry-run: the plan, every account)')
    .option(
      '--dry-run',
      'stage and validate, then print the plan (requests per step, why each account is or is not in it); sends ' +
        'nothing, changes no ledger',
    )
    .option(
      '--limit <n>',
      "canary: only the first N accounts still to do (in the ledger's order)",
      positiveInt('--limit', 100_000_000),
    )
    .option('--accounts <list>', 'only these external account numbers: A,B,C or @file (one per line)')
    .option(
      '--only <steps>',
      'only these steps: comma-separated create,notes,transactions,statements,payment_instructions',
      parseSteps,
    )
    .option(
      '--max-errors <n>',
      "stop taking new work once more than N (or N% of the run's accounts and records) failed in this run; exit 1",
      parseMaxErrors,
    )
    .option(
      '--retry-invalid <codes>',
      'send again accounts the service refused with these error codes (comma-separated), e.g. invalid_import_supplier ' +
        'once the supplier is set up',
      parseCodes,
    )
    .option(
      MOVE_FLAG,
      'the state directory was used with another service URL, dialect or supplier code (a DNS change): record this ' +
        "run's service as its service from now on",
    )
    .option(
      '--log-file <path>',
      'append one JSON line per event (run id, account, step, outcome, code; no secret, no personal data) to this ' +
        'file (0600)',
    )
    .option('--quiet', 'no progress display: the summary only (warnings and errors still go to stderr)')
    .option(
      '--progress-interval <seconds>',
      `seconds between progress lines when stderr is not a terminal (default ${DEFAULT_PROGRESS_INTERVAL_SECONDS})`,
      positiveInt('--progress-interval', 86_400),
    )
    .option(
      '--metrics-file <file>',
      "write Prometheus metrics (ledger counts, requests, 429s, retries, the runs' end and exit code) to this file, " +
        "for node_exporter's textfile collector (name it *.prom)",
    )
    .option(
      '--metrics-interval <seconds>',
      'seconds between writes of --metrics-file (it is also written at the start and at the end)',
      positiveInt('--metrics-interval', 86_400),
      DEFAULT_METRICS_INTERVAL_SECONDS,
    );
  registerServiceOptions(command).action(async (dir: string, options: Omit<PushCommandOptions, 'dir'>) => {
    setExitCode(await pushCommand({ ...options, dir }));
  });
}

/** `migrate push <dir>`: returns the exit code (README "Exit codes"). */
export async function pushCommand(options: PushCommandOptions): Promise<number> {
  // Installed first: a signal during start-up or staging also stops the run cleanly (exit 130).
  const controller = new AbortController();
  const onSignal = (): void => controller.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    return await pushWithSignal(options, controller.signal);
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}

async function pushWithSignal(options: PushCommandOptions, signal: AbortSignal): Promise<number> {
  const startedAt = Date.now();
  const stateDir = resolve(options.state);
  const ledgerUrl = ledgerUrlOf(options.ledger, process.env);
  const config = await loadMigrateConfig({
    cwd: process.cwd(),
    exportDir: options.dir,
    env: process.env,
    ...(options.config === undefined ? {} : { configPath: options.config }),
    ...(options.supplier === undefined ? {} : { supplier: options.supplier }),
  });
  const accounts =
    options.accounts === undefined ? undefined : await readAccountsOption(options.accounts, process.cwd());
  const selection =
    options.limit === undefined && accounts === undefined ? undefined : { limit: options.limit, accounts };
  if (options.dryRun)
    return onLedger(options.ledger, (place) =>
      dryRun(options, config, place.stateDir ?? stateDir, selection, signal, place.label),
    );
  // Every usage and configuration mistake is found before the state directory is created: a
  // mistaken run leaves nothing behind (no `.migrate/` in the working directory).
  const exportFiles = await findExportFiles(options.dir);
  if (options.logFile !== undefined) checkLogFileDir(options.logFile);
  if (options.metricsFile !== undefined) checkMetricsFile(options.metricsFile, warn);
  // The service settings (URL, credentials, dialect flags) are checked here, without a request;
  // the service is opened once the ledger says which dialect the state directory was pushed in.
  const baseUrl = options.sandbox
    ? undefined
    : (await loadServiceConfig({ flags: options, env: process.env, cwd: process.cwd(), file: config })).baseUrl;
  const closers: Array<() => Promise<void> | void> = [];
  let thrown: unknown;
  // The exit code the run returns, for the metrics' last write (an exception's is taken from it).
  let outcome: number | undefined;
  try {
    const runLedger = await openRunLedger(
      {
        stateDir,
        ledgerUrl,
        unreachableSeconds: options.ledgerTimeout ?? DEFAULT_UNREACHABLE_SECONDS,
        // What needs the whole ledger at once takes it alone (a shared ledger's runners lease accounts).
        alone:
          selection !== undefined ||
          options.retryInvalid !== undefined ||
          (options.maxErrors !== undefined && 'percent' in options.maxErrors),
        retryErrored: options.retryErrored === true,
        signal,
      },
      warn,
    );
    closers.unshift(() => runLedger.close());
    const { ledger, label } = runLedger;
    // A lost lock (its directory removed, or taken over after this process stalled) means another
    // run may start: stop taking work and end with exit 3.
    const lockLost = new AbortController();
    const lockWatch = setInterval(() => runLedger.lockLost() && lockLost.abort(), 1000);
    closers.unshift(() => clearInterval(lockWatch));
    const ledgerFile = join(stateDir, LEDGER_FILE);
    const recorded = ledger.read.dialect();
    const moving = options.moveLedgerToService === true;
    const dialectOf = { dialect: recorded ?? 'spec', stateDir: label, moving };
    // Before anything is written for the run: the state directory's service (config/ledger-service.ts).
    const { recordedService, thisService } = checkLedgerService(options, config, ledger, {
      stateDir: label,
      baseUrl,
      recorded: recorded === undefined ? undefined : dialectOf,
    });
    // A consistent copy as the run starts (docs/ledger-recovery.md); reading every page also finds a damaged file now.
    runLedger.snapshot(nextRunId(ledger));
    const progress = createProgressReporter({
      stream: process.stderr,
      wait: options.wait,
      ...(options.quiet ? { quiet: true } : {}),
      ...(options.progressInterval === undefined ? {} : { intervalSeconds: options.progressInterval }),
    });
    closers.unshift(() => progress.stop());
    const monitoring =
      options.metricsFile === undefined
        ? undefined
        : openMetrics({
            file: options.metricsFile,
            intervalSeconds: options.metricsInterval,
            stateDir: runLedger.stateDir,
            label,
            ledger,
            tally: progress.tally,
            previousRun: lastEndedPush(ledger),
            warn,
          });
    if (monitoring)
      closers.unshift(() =>
        monitoring.finish(outcome ?? (thrown instanceof MigrateError ? thrown.exitCode : ExitCode.fatal)),
      );
    const service = await openPushService(
      options,
      config,
      recorded === undefined ? undefined : dialectOf,
      monitoring ? (event) => monitoring.metrics.onClientEvent(event) : undefined,
    );
    closers.unshift(service.close);
    if (recorded === undefined) ledger.recordDialect(service.config.dialect);
    const runId = ledger.startRun('push', runOptions(options));
    if (moving) announceMove(stateDir, recordedService, thisService);
    if (options.retryInvalid !== undefined) releaseInvalid(ledger, options.retryInvalid);
    let finished = false;
    // A run that ends by an exception (unreadable export, lost lock) is recorded as failed, not left `running`.
    closers.unshift(() => {
      if (!finished)
        quietly(() =>
          ledger.finishRun(runId, 'failed', thrown instanceof MigrateError ? thrown.exitCode : ExitCode.fatal, {
            ...ledger.read.counts(),
            // Why it stopped, for `status` (its next step): never a secret (the messages are scrubbed).
            ...(thrown instanceof MigrateError ? { fatal: { code: thrown.code, detail: thrown.message } } : {}),
          }),
        );
    });
    // The export's size (a byte scan of the accounts file) lets progress say how much is read and extrapolate the
    // work. Counted beside the push once staging has started, so that it does not delay the first request.
    const sizing = new AbortController();
    closers.unshift(() => sizing.abort());
    const sizeOnceStaging = onFirst('staging', () =>
      estimateExportAccounts(exportFiles.files, sizing.signal).then((accounts) => {
        progress.tally.exportAccounts = accounts;
      }),
    );
    const log = options.logFile === undefined ? undefined : openLog(options.logFile, runId, ledger);
    if (log)
      closers.unshift(() =>
        closeLog(log, {
          outcome: 'failed',
          exitCode: thrown instanceof MigrateError ? thrown.exitCode : ExitCode.fatal,
        }),
      );
    const sink = log ? teeSink(progress, log, sizeOnceStaging) : teeSink(progress, sizeOnceStaging);
    // Nothing is sent before every file is proven in order or sorted (README "Complete or not at all").
    // Payloads are checked for the dialect they will be sent in, as the client checks them before sending.
    const reader = await openExportInOrder(
      options.dir,
      { ...config, dialect: service.config.dialect },
      {
        scratchDir: runLedger.stateDir,
        signal,
        onProof: (proof) => {
          sink.emit({ type: 'order', ms: proof.ms, files: proof.files.length, outOfOrder: proof.outOfOrder.length });
          if (proof.outOfOrder.length > 0) sink.emit({ type: 'sorting', files: proof.outOfOrder.map(outOfOrderFile) });
        },
      },
    ).catch((error: unknown) => {
      throw signal.aborted ? new InterruptedError('before anything was sent') : error;
    });
    closers.unshift(() => reader.close());
    // Streaming, only a header's problems are known now (README "Sending while the export is read").
    refuseFileIssues(reader.fileIssues);
    const result = await runLedger.settle(
      await runPush({
        ledger,
        client: service.client,
        settings: engineSettings(options, config),
        sink,
        source: reader,
        signal: AbortSignal.any([signal, lockLost.signal]),
        selection,
        maxErrors: options.maxErrors,
        feed: runLedger.feed?.({
          source: reader,
          identity: exportIdentity(exportFiles, config, service.config.dialect),
          sink,
          concurrency: options.concurrency,
          wait: options.wait,
          retryErrored: options.retryErrored === true,
        }),
      }),
      options.only !== undefined,
    );
    if (log) closeLog(log, { outcome: result.reason, exitCode: result.exitCode });
    if (result.unknownAccounts.length > 0)
      process.stderr.write(
        `migrate: --accounts: ${result.unknownAccounts.length} not in the export or the ledger (nothing done for ` +
          `them): ${result.unknownAccounts.slice(0, 20).join(', ')}\n`,
      );
    if (result.fatal?.code === 'ledger_damaged')
      throw ledgerDamagedError(stateDir, ledgerFile, new Error(result.fatal.detail));
    if (lockLost.signal.aborted)
      throw new FatalError(
        `the lock of ${label} was lost during the run (${runLedger.lockLost()?.message ?? 'unknown reason'}); ` +
          `stopped. Check that no other run uses this state directory, then run again.`,
        'state_lock_lost',
      );
    progress.stop();
    const summary = buildPushSummary({
      result,
      topErrors: ledger.read.topErrorCodes(5),
      startedAt,
      stateDir: label,
      processedThisRun: progress.tally.done.processed,
      createdThisRun: progress.tally.done.created,
      wait: options.wait,
      unknownAccounts: result.unknownAccounts,
      ...(result.maxErrors === undefined ? {} : { maxErrors: result.maxErrors }),
    });
    ledger.finishRun(runId, result.reason, result.exitCode, {
      ...result.counts,
      accountsPerSecond: runRate(progress.tally),
      ...(result.fatal ? { fatal: { code: result.fatal.code, detail: result.fatal.detail } } : {}),
    });
    finished = true;
    // Recorded once the service has answered for a run (a first run against a mistyped URL records nothing).
    if (result.reason !== 'fatal') recordService(ledger, recordedService, thisService, runId);
    if (options.json) process.stdout.write(`${JSON.stringify(summary, null, 2)}\n`);
    else process.stdout.write(renderSummary(summary, colorWanted(process.stdout, process.env)));
    if (result.fatal?.code === 'ledger_write_failed')
      throw (
        postgresFailure(result.fatal.detail) ??
        stateDirFailure(new Error(result.fatal.detail), stateDir) ??
        new FatalError(`the ledger in ${stateDir} could not be written (${result.fatal.detail}); the run stopped.`)
      );
    if (result.fatal) process.stderr.write(`migrate: ${result.fatal.code}: ${result.fatal.detail}\n`);
    // Rows found outside any account while the export streamed: every account was sent, these rows were not.
    if (reader.fileIssues.length > 0) {
      process.stderr.write(
        `migrate: ${describeFileIssues(reader.fileIssues, 'those rows were not sent, every account was')}\n`,
      );
      outcome = Math.max(result.exitCode, ExitCode.someFailed);
      return outcome;
    }
    outcome = result.exitCode;
    return outcome;
  } catch (error) {
    thrown = isLedgerDamage(error)
      ? ledgerDamagedError(stateDir, join(stateDir, LEDGER_FILE), error)
      : (postgresFailure(error) ?? stateDirFailure(error, stateDir) ?? error);
    throw thrown;
  } finally {
    // Every closer runs even if one fails (a full disk fails the run's last ledger write): an
    // unreleased lock or a live timer would keep the process from exiting.
    for (const close of closers) {
      try {
        await close();
      } catch (error) {
        thrown ??= error;
        if (!stateDirFailure(error, stateDir)) process.stderr.write(`migrate: while closing: ${String(error)}\n`);
      }
    }
  }
}

/** This run's service, refused (exit 2) when the ledger records another and --move-ledger-to-service is not given. */
function checkLedgerService(
  options: PushCommandOptions,
  config: MigrateConfig,
  ledger: Ledger,
  input: {
    stateDir: string;
    baseUrl: string | undefined;
    recorded: { dialect: string; stateDir: string; moving: boolean } | undefined;
  },
): { recordedService: ServiceIdentity | undefined; thisService: ServiceIdentity } {
  const thisService = serviceIdentity({
    sandbox: options.sandbox === true,
    baseUrl: input.baseUrl,
    dialect: chooseDialect({ flags: options, env: process.env, file: config, recorded: input.recorded }),
    importSupplier: config.importSupplier,
  });
  const recordedService = ledger.read.service();
  if (recordedService !== undefined && options.moveLedgerToService !== true)
    refuseOtherService({ stateDir: input.stateDir, recorded: recordedService, current: thisService, command: 'push' });
  return { recordedService, thisService };
}

/** --retry-invalid CODES: the accounts the service refused with them are staged again; says how many. */
function releaseInvalid(ledger: Ledger, codes: readonly string[]): void {
  const released = ledger.releaseInvalid(codes);
  process.stderr.write(
    `migrate: --retry-invalid ${codes.join(',')}: ${released} account(s) the service refused with ` +
      `${codes.length === 1 ? 'this code are' : 'these codes are'} sent again\n`,
  );
}

/** Records the run's service when the ledger has none yet, or when --move-ledger-to-service moved it. */
function recordService(
  ledger: Ledger,
  recorded: ServiceIdentity | undefined,
  current: ServiceIdentity,
  runId: number,
): void {
  if (recorded === undefined) ledger.recordService(current);
  else if (serviceDifferences(recorded, current).length > 0) ledger.recordService(current, { from: recorded, runId });
}

function announceMove(stateDir: string, recorded: ServiceIdentity | undefined, current: ServiceIdentity): void {
  if (recorded === undefined || serviceDifferences(recorded, current).length === 0) return;
  process.stderr.write(
    `migrate: ${MOVE_FLAG}: the ledger of ${stateDir} moves from ${describeService(recorded)} to ` +
      `${describeService(current)} once this run is answered\n`,
  );
}

const warn = (text: string): void => void process.stderr.write(`migrate: warning: ${text}\n`);

/** A sink that calls `then` once, at the first event of that type. */
function onFirst(type: EngineEvent['type'], then: () => Promise<void>): EventSink {
  let seen = false;
  return {
    emit: (event) => {
      if (seen || event.type !== type) return;
      seen = true;
      void then();
    },
  };
}

function outOfOrderFile(file: FileOutOfOrder): { file: string; line?: number; reason?: string } {
  return file.order === 'unsorted' ? { file: file.file, line: file.line } : { file: file.file, reason: file.reason };
}

/** The id the next run will get: snapshots are named by it. */
function nextRunId(ledger: Ledger): number {
  return (ledger.read.runs(1)[0]?.id ?? 0) + 1;
}

/** A closing step on a damaged ledger fails too: the error already raised is the one to report. */
function quietly(step: () => void): void {
  try {
    step();
  } catch (error) {
    if (!isLedgerDamage(error)) throw error;
  }
}

/** Export-level problems known before anything is sent (unknown columns) would drop data silently: push refuses them. */
function refuseFileIssues(issues: IssueList): void {
  if (issues.length === 0) return;
  throw new UsageError(`${describeFileIssues(issues, 'nothing was sent')}`, 'export_file_issues');
}

function describeFileIssues(issues: IssueList, outcome: string): string {
  const shown = issues
    .first(5)
    .map((issue) => `  ${issue.file}:${issue.line}${issue.column ? ` (${issue.column})` : ''}: ${issue.message}`);
  const more = issues.length > 5 ? `\n  ... and ${issues.length - 5} more` : '';
  return (
    `the export has ${issues.length} problem(s) outside any account; ${outcome}. Fix them (run \`migrate ` +
    `validate\` for the full list):\n${shown.join('\n')}${more}`
  );
}

function engineSettings(options: PushCommandOptions, config: MigrateConfig): EngineSettings {
  return {
    ...DEFAULT_ENGINE_SETTINGS,
    multiplePaymentInstructions: config.multiplePaymentInstructions,
    ...(options.only === undefined ? {} : { steps: options.only }),
    concurrency: options.concurrency,
    retryErrored: options.retryErrored === true,
    wait: options.wait,
    waitTimeoutMs: options.waitTimeout * 1000,
    transactionFlags: {
      check_previously_added: options.checkPreviouslyAdded,
      force_add_to_current_statement: options.forceAddToCurrentStatement,
    },
  };
}

/** The options recorded with the run: never a secret (file paths only), sets as lists. */
function runOptions(options: PushCommandOptions): Record<string, unknown> {
  const { apiKeyFile, tokenFile, only, ledger, ...rest } = options;
  return {
    ...rest,
    ledger: ledger === undefined ? undefined : redactUrl(ledger),
    apiKeyFile: apiKeyFile === undefined ? undefined : '(given)',
    tokenFile: tokenFile === undefined ? undefined : '(given)',
    only: only === undefined ? undefined : [...only],
  };
}

/** The service of src/cli/open-service.ts; --sandbox: processing fast, no faults, the configured supplier Ongoing. */
function openPushService(
  options: PushCommandOptions,
  config: MigrateConfig,
  recorded: { dialect: string; stateDir: string; moving: boolean } | undefined,
  onEvent?: (event: ClientEvent) => void,
): ReturnType<typeof openService> {
  const supplier = config.importSupplier;
  // The default suppliers stay: records may carry their own import_supplier (the configured one fills only gaps).
  const sandbox = options.sandbox
    ? {
        processingMs: 50,
        ...(supplier === undefined ? {} : { suppliers: { ...DEFAULT_SUPPLIERS, [supplier]: 'Ongoing' as const } }),
      }
    : undefined;
  return openService({
    flags: options,
    sandbox,
    file: config,
    recorded,
    client: {
      concurrency: options.concurrency,
      maxRequestsPerSecond: options.rate,
      ...(onEvent === undefined ? {} : { onEvent }),
    },
  });
}

/** --log-file's directory must exist: checked before the state directory is created. */
function checkLogFileDir(path: string): void {
  const dir = dirname(resolve(path));
  if (!existsSync(dir) || !statSync(dir).isDirectory())
    throw new UsageError(`--log-file ${path}: the directory ${dir} does not exist.`, 'log_file_unwritable');
}

/** --log-file: the NDJSON sink of src/report/ndjson-log.ts (0600, appended); an unwritable path is exit 2. */
function openLog(path: string, runId: number, ledger: Ledger): NdjsonLogSink {
  return createNdjsonLogSink(path, { runId, accountNumberOf: (id) => ledger.accountById(id)?.externalAccountNumber });
}

function closeLog(log: NdjsonLogSink, end: { outcome: string; exitCode: number }): void {
  log.close(end);
  if (log.failure)
    process.stderr.write(
      `migrate: warning: --log-file: writing stopped ` +
        `(${(log.failure as NodeJS.ErrnoException).code ?? log.failure.message}); the run went on\n`,
    );
}

/** The dialect a state directory was pushed in, read without a lock; undefined when it has no ledger yet. */
function recordedDialect(stateDir: string): { dialect: string; stateDir: string } | undefined {
  if (!existsSync(join(stateDir, LEDGER_FILE))) return undefined;
  const reader = openLedgerReader(stateDir);
  try {
    const dialect = reader.read.dialect();
    return dialect === undefined ? undefined : { dialect, stateDir };
  } finally {
    reader.close();
  }
}

/**
 * --dry-run: stages the export into a scratch copy of the ledger (engine/dry-run.ts) and prints
 * the plan; no lock, no request, the state directory is only read (and not created).
 */
async function dryRun(
  options: PushCommandOptions,
  config: MigrateConfig,
  stateDir: string,
  selection: { limit?: number | undefined; accounts?: ReadonlySet<string> | undefined } | undefined,
  signal: AbortSignal,
  label = stateDir,
): Promise<number> {
  // Credentials are checked (no request) so that a plan also says the real run could start.
  const serviceConfig = options.sandbox
    ? undefined
    : await loadServiceConfig({ flags: options, env: process.env, cwd: process.cwd(), file: config });
  for (const warning of serviceConfig?.warnings ?? []) process.stderr.write(`migrate: warning: ${warning}\n`);
  // ... and that it would not be refused for another service than the state directory's.
  if (existsSync(join(stateDir, LEDGER_FILE)) && options.moveLedgerToService !== true) {
    const reader = openLedgerReader(stateDir);
    try {
      const recorded = reader.read.service();
      if (recorded !== undefined)
        refuseOtherService({
          stateDir,
          recorded,
          current: serviceIdentity({
            sandbox: options.sandbox === true,
            baseUrl: serviceConfig?.baseUrl,
            dialect: chooseDialect({
              flags: options,
              env: process.env,
              file: config,
              recorded: { dialect: recorded.dialect, stateDir },
            }),
            importSupplier: config.importSupplier,
          }),
          command: 'push',
        });
    } finally {
      reader.close();
    }
  }
  const scratch = mkdtempSync(join(tmpdir(), 'migrate-dry-run-'));
  let reader: ExportReader | undefined;
  try {
    // The dialect the real run would send in (the state directory's, if it has one): the same checks, the same plan.
    const dialect = chooseDialect({
      flags: options,
      env: process.env,
      file: config,
      recorded: recordedDialect(stateDir),
    });
    reader = await openExport(options.dir, { ...config, dialect }, { scratchDir: scratch });
    refuseFileIssues(reader.fileIssues);
    const samples = new PlanSamples();
    const json = options.json ? new PlanJsonWriter((text) => process.stdout.write(text)) : undefined;
    const result = await planDryRun({
      stateDir,
      scratchDir: scratch,
      entries: reader.entries(),
      settings: engineSettings(options, config),
      selection,
      signal,
      retryInvalid: options.retryInvalid,
      sink: { emit: () => undefined },
      onAccount: (row) => (json ? json.row(row) : samples.add(row)),
    });
    const report = {
      stateDir: label,
      staged: result.staged,
      totals: result.scan.totals,
      unknownAccounts: result.scan.unknownAccounts,
    };
    if (json) json.end(report);
    else process.stdout.write(renderPlan(report, samples));
    return ExitCode.ok;
  } finally {
    await reader?.close();
    rmSync(scratch, { recursive: true, force: true });
  }
}
