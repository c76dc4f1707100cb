import { resolve } from 'node:path';
import { type Command, InvalidArgumentError } from 'commander';
import { readFile } from 'node:fs/promises';
import { createImportServiceClient, type ClientOptions, type ServiceClient } from '../api/index.js';
import { loadMigrateConfig } from '../config/index.js';
import { DEFAULT_ENGINE_SETTINGS, runPush, teeSink, type EngineSettings } from '../engine/index.js';
import { ExitCode, FatalError, MigrateError, UsageError } from '../errors.js';
import { acquireLock, Ledger, LedgerLockedError, prepareStateDir, type LedgerLock } from '../ledger/index.js';
import { openExport, type ExportReader } from '../mapping/index.js';
import { createProgressReporter } from '../report/progress.js';
import { buildPushSummary, colorWanted, renderSummary } from '../report/summary.js';
import { startSandbox } from '../sandbox/index.js';

export interface PushCommandOptions {
  dir: string;
  state: string;
  baseUrl?: string;
  apiKeyFile?: string;
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
}

function positiveInt(name: string, max: number): (value: string) => number {
  return (value) => {
    const number = Number(value);
    if (!Number.isInteger(number) || number < 1 || number > max) throw new InvalidArgumentError(`${name} must be a whole number from 1 to ${max} (got "${value}").`);
    return number;
  };
}

export function registerPushCommand(program: Command, setExitCode: (code: number) => void): void {
  program
    .command('push')
    .description('Push an export into the import service exactly once: create accounts, wait for processing, add notes, transactions, statements and payment instructions. Resumable; results in the ledger (--state).')
    .argument('<dir>', 'the export directory')
    .option('--state <dir>', 'state directory holding the results ledger (one per migration cohort)', './.migrate')
    .option('--base-url <url>', 'import service base URL (else MIGRATE_BASE_URL)')
    .option('--api-key-file <file>', 'file holding the organisation API key (else MIGRATE_API_KEY)')
    .option('--supplier <code>', 'import supplier code where a record has none (else MIGRATE_SUPPLIER, else the mapping file)')
    .option('--config <file>', 'mapping file (default: migrate.config.json in the export directory, else in the working directory)')
    .option('--concurrency <n>', 'requests in flight at most', positiveInt('--concurrency', 1024), DEFAULT_ENGINE_SETTINGS.concurrency)
    .option('--rate <n>', 'requests per second at most (default: no cap)', positiveInt('--rate', 100_000))
    .option('--retry-errored', 'create again accounts the platform ERRORED, even if their data did not change')
    .option('--no-wait', 'schedule accounts only; a later run polls them and pushes their records')
    .option('--wait-timeout <seconds>', 'stop waiting when no account has progressed for this long', positiveInt('--wait-timeout', 7 * 86_400), 600)
    .option('--no-check-previously-added', 'transactions: do not ask the service to skip transactions added before (then a transaction whose outcome is unknown is never resent)')
    .option('--no-force-add-to-current-statement', 'transactions: fail those outside the open statement period instead of moving them into it')
    .option('--sandbox', 'start the built-in sandbox (a local simulator of the service) and push there')
    .option('--json', 'print one JSON summary document on stdout')
    .action(async (dir: string, options: Omit<PushCommandOptions, 'dir'>) => {
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
  const config = await loadMigrateConfig({
    cwd: process.cwd(), exportDir: options.dir, env: process.env,
    ...(options.config === undefined ? {} : { configPath: options.config }),
    ...(options.supplier === undefined ? {} : { supplier: options.supplier }),
  });
  prepareStateDir(stateDir);
  const lock = await takeLock(stateDir);
  // A lost lock (its directory removed, or taken over after this process stalled) means another
  // run may start: stop taking work and end with exit 3.
  const lockLost = new AbortController();
  const lockWatch = setInterval(() => lock.compromised() && lockLost.abort(), 1000);
  const closers: Array<() => Promise<void> | void> = [() => lock.release().catch(() => undefined), () => clearInterval(lockWatch)];
  let thrown: unknown;
  try {
    const service = await openService(options);
    closers.unshift(service.close);
    const ledger = Ledger.open(stateDir);
    closers.unshift(() => ledger.close());
    const runId = ledger.startRun('push', runOptions(options));
    let finished = false;
    // A run that ends by an exception (unreadable export, lost lock) is recorded as failed, not left `running`.
    closers.unshift(() => {
      if (!finished) ledger.finishRun(runId, 'failed', thrown instanceof MigrateError ? thrown.exitCode : ExitCode.fatal, { ...ledger.read.counts() });
    });
    const reader = await openExport(options.dir, config, { scratchDir: stateDir });
    closers.unshift(() => reader.close());
    refuseFileIssues(reader);
    const progress = createProgressReporter({ stream: process.stderr });
    closers.unshift(() => progress.stop());
    const result = await runPush({ ledger, client: service.client, settings: engineSettings(options), sink: teeSink(progress), entries: reader.entries(), signal: AbortSignal.any([signal, lockLost.signal]) });
    if (lockLost.signal.aborted) throw new FatalError(`the lock of ${stateDir} was lost during the run (${lock.compromised()?.message ?? 'unknown reason'}); stopped. Check that no other run uses this state directory, then run again.`, 'state_lock_lost');
    progress.stop();
    const summary = buildPushSummary({ result, topErrors: ledger.read.topErrorCodes(5), startedAt, stateDir, processedThisRun: progress.tally.done.processed });
    ledger.finishRun(runId, result.reason, result.exitCode, { ...result.counts });
    finished = true;
    if (options.json) process.stdout.write(`${JSON.stringify(summary, null, 2)}\n`);
    else process.stdout.write(renderSummary(summary, colorWanted(process.stdout, process.env)));
    if (result.fatal) process.stderr.write(`migrate: ${result.fatal.code}: ${result.fatal.detail}\n`);
    return result.exitCode;
  } catch (error) {
    thrown = error;
    throw error;
  } finally {
    for (const close of closers) await close();
  }
}

async function takeLock(stateDir: string): Promise<LedgerLock> {
  try {
    return await acquireLock(stateDir);
  } catch (error) {
    if (error instanceof LedgerLockedError) throw new MigrateError(error.message, { code: 'state_locked', exitCode: ExitCode.locked });
    throw error;
  }
}

/** Export-level problems (unknown columns, records without an account) would drop data silently: push refuses them. */
function refuseFileIssues(reader: ExportReader): void {
  const issues = reader.fileIssues;
  if (issues.length === 0) return;
  const shown = issues.slice(0, 5).map((issue) => `  ${issue.file}:${issue.line}${issue.column ? ` (${issue.column})` : ''}: ${issue.message}`);
  const more = issues.length > 5 ? `\n  ... and ${issues.length - 5} more` : '';
  throw new UsageError(`the export has ${issues.length} problem(s) outside any account; nothing was sent. Fix them (run \`migrate validate\` for the full list):\n${shown.join('\n')}${more}`, 'export_file_issues');
}

function engineSettings(options: PushCommandOptions): EngineSettings {
  return {
    ...DEFAULT_ENGINE_SETTINGS,
    concurrency: options.concurrency,
    retryErrored: options.retryErrored === true,
    wait: options.wait,
    waitTimeoutMs: options.waitTimeout * 1000,
    transactionFlags: { check_previously_added: options.checkPreviouslyAdded, force_add_to_current_statement: options.forceAddToCurrentStatement },
  };
}

/** The options recorded with the run: never the API key or its file's content. */
function runOptions(options: PushCommandOptions): Record<string, unknown> {
  const { apiKeyFile, ...rest } = options;
  return { ...rest, apiKeyFile: apiKeyFile === undefined ? undefined : '(given)' };
}

async function openService(options: PushCommandOptions): Promise<{ client: ServiceClient; close: () => Promise<void> }> {
  const pace = { concurrency: options.concurrency, maxRequestsPerSecond: options.rate };
  if (options.sandbox) {
    // The demo path: processing fast, no faults (issue 5 "--sandbox").
    const sandbox = await startSandbox({ processingMs: 50 });
    const client = createImportServiceClient({ baseUrl: sandbox.url, credentials: { apiKey: sandbox.apiKey }, ...pace });
    return { client, close: async () => { await client.close(); await sandbox.close(); } };
  }
  const client = createImportServiceClient({ ...(await serviceOptions(options, process.env)), ...pace });
  return { client, close: () => client.close() };
}

/** Base URL and API key from flags and environment; the key's value never appears in a message. */
async function serviceOptions(options: PushCommandOptions, env: NodeJS.ProcessEnv): Promise<Pick<ClientOptions, 'baseUrl' | 'credentials'>> {
  const baseUrl = options.baseUrl ?? env['MIGRATE_BASE_URL'];
  if (!baseUrl) throw new UsageError('no service URL: give --base-url or set MIGRATE_BASE_URL (or use --sandbox to try the local simulator).', 'base_url_missing');
  let apiKey = env['MIGRATE_API_KEY']?.trim();
  if (options.apiKeyFile !== undefined) {
    try {
      apiKey = (await readFile(options.apiKeyFile, 'utf8')).trim();
    } catch (error) {
      throw new UsageError(`--api-key-file ${options.apiKeyFile}: cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'}).`, 'api_key_file_unreadable');
    }
  }
  if (!apiKey) throw new UsageError('no API key: set MIGRATE_API_KEY or give --api-key-file (a file holding only the key).', 'api_key_missing');
  return { baseUrl, credentials: { apiKey } };
}
