import { realpathSync } from 'node:fs';
import { resolve } from 'node:path';
import { checkContractDialect, type MigrateConfig } from '../../config/index.js';
import { ledgerUrlOf } from '../../config/ledger-url.js';
import { askedDialect, keptDialect, type AskedDialect, type ServiceFlags } from '../../config/service.js';
import { DEFAULT_ENGINE_SETTINGS, statesWithWork, type EngineSettings } from '../../engine/index.js';
import { refuseNoAccounts } from '../../intake/accounts-present.js';
import { checkStateDir, LEDGER_FILE, type AccountState } from '../../ledger/index.js';
import { readRecorded } from '../../ledger/run-ledger.js';
import { DEFAULT_UNREACHABLE_SECONDS, redactUrl } from '../../ledger/postgres/index.js';
import { fileGlobsOf } from '../../mapping/mapping-rules.js';
import { checkLogFile, checkMetricsFile } from './push-sinks.js';
import { DEFAULT_SUPPLIERS, type SandboxOptions } from '../../sandbox/index.js';
import type { Dialect } from '../../schema/index.js';
import { readAccountList } from '../../sources/account-list.js';
import { findExportFiles, type ExportFiles } from '../../sources/index.js';
import { loadCommandConfig, warnAboutContract, withOpenPeriod } from '../common/mapping-options.js';
import { stampLines, stampsWanted } from '../../output/stamped-output.js';
import { STOP_AT_ENV } from './stop-points.js';
import type { MaxErrors } from '../common/option-parsers.js';
import type { RunOrigin } from '../common/run-origin.js';
import type { PushFlags } from './flags.js';

// Everything `migrate push` decides before it writes anything (a mistake is exit 2 and leaves nothing behind): what it
// must read is read first (readPushInputs), then one pure function turns flags, environment and what was read into
// the run's whole configuration (resolvePushConfig). The only file that reads push's raw options.

/** What a ledger recorded of the dialect it was pushed in (undefined: none yet). */
export type RecordedDialect = { dialect: string; ledgerLabel: string } | undefined;

export interface PushInputs {
  flags: PushFlags;
  env: NodeJS.ProcessEnv;
  mappingFile: MigrateConfig;
  /** The state directory's recorded dialect, read without the lock (a PostgreSQL ledger's is read once it is open). */
  recorded: RecordedDialect;
  /** --accounts, read (a file's lines or the list). */
  accounts: ReadonlySet<string> | undefined;
  exportFiles: ExportFiles;
  /** The export directory's real path (recorded with the run: `migrate report` never writes into it). */
  exportRealPath: string;
}

export interface PushConfig {
  readonly dir: string;
  readonly mapping: Readonly<MigrateConfig>;
  readonly exportFiles: ExportFiles;
  readonly dryRun: boolean;
  readonly allowNoAccounts: boolean;
  readonly ledger: {
    readonly stateDir: string;
    /** The PostgreSQL ledger (--ledger, MIGRATE_LEDGER_URL); undefined: the state directory's SQLite ledger. */
    readonly url: string | undefined;
    readonly unreachableSeconds: number;
    /** What needs the whole ledger at once takes it alone (a shared ledger's runners lease accounts). */
    readonly alone: boolean;
    /** The states a sharing runner leases. */
    readonly states: readonly AccountState[];
    /** --move-ledger-to-service. */
    readonly moving: boolean;
  };
  readonly service: {
    readonly flags: Readonly<ServiceFlags>;
    /** --sandbox: the built-in sandbox's options (processing fast, no faults, the configured supplier Ongoing). */
    readonly sandbox: Partial<SandboxOptions> | undefined;
    /** The dialect the run sends in (the state directory's recorded one kept). */
    readonly dialect: Dialect;
    /** The dialect asked for, kept against another ledger's recorded one (a PostgreSQL ledger's, once it is open). */
    readonly asked: AskedDialect;
    readonly client: { readonly concurrency: number; readonly maxRequestsPerSecond: number | undefined };
    readonly firstAnswerMs: number;
  };
  /** --limit, --accounts: the accounts the run may take (undefined: all). */
  readonly selection: { readonly limit?: number | undefined; readonly accounts?: ReadonlySet<string> } | undefined;
  readonly engine: Readonly<EngineSettings>;
  readonly maxErrors: MaxErrors | undefined;
  readonly retryInvalid: readonly string[] | undefined;
  readonly outputs: {
    readonly json: boolean;
    readonly logFile: string | undefined;
    readonly quiet: boolean;
    readonly progressInterval: number | undefined;
    readonly metricsFile: string | undefined;
    readonly metricsInterval: number;
    /** The run configuration and the service the run's first line named (the --json summary and the log carry them). */
    readonly origin: RunOrigin | undefined;
  };
  /** The options recorded with the run: never a secret (file paths only), sets as lists. */
  readonly recordedOptions: Readonly<Record<string, unknown>>;
  /** The start-up test hook's point (stop-points.ts, MIGRATE_TEST_STOP_AT); undefined: none. */
  readonly stopPoint: string | undefined;
}

/** Before anything is said: stderr's lines (and stdout's, but a --json document) stamped, when wanted. */
export function stampOutput(flags: PushFlags, env: NodeJS.ProcessEnv): void {
  if (!stampsWanted(env)) return;
  stampLines(process.stderr);
  if (flags.json !== true) stampLines(process.stdout);
}

/** Reads what the configuration depends on, and refuses (exit 2) what is wrong before anything is written. */
export async function readPushInputs(flags: PushFlags, env: NodeJS.ProcessEnv, cwd: string): Promise<PushInputs> {
  const { stateDir, url } = ledgerOf(flags, env);
  const mappingFile = await loadCommandConfig(flags);
  // A file, a path through a file, another user's directory: said as such before anything is read or written.
  if (url === undefined) checkStateDir(stateDir, flags.dryRun ? 'read' : 'write', LEDGER_FILE);
  const recorded = url === undefined ? readRecorded(stateDir)?.dialect : undefined;
  warnAboutContract(mappingFile);
  const accounts = flags.accounts === undefined ? undefined : await readAccountList(flags.accounts, cwd);
  // A shaped export's legacy files are found by its sources' globs when the shape opens.
  const exportFiles = mappingFile.shape
    ? { files: [], notRead: [] }
    : await findExportFiles(flags.dir, fileGlobsOf(mappingFile));
  await refuseNoAccounts(exportFiles.files, mappingFile, flags.allowNoAccounts === true);
  if (!flags.dryRun && flags.logFile !== undefined) checkLogFile(flags.logFile, flags.dir);
  if (!flags.dryRun && flags.metricsFile !== undefined) checkMetricsFile(flags.metricsFile, flags.dir);
  const exportRealPath = flags.dryRun ? resolve(flags.dir) : realpathSync(flags.dir); // a dry run records no run
  return { flags, env, mappingFile, accounts, exportFiles, exportRealPath, recorded };
}

/** The run's whole configuration: pure, frozen; a dialect the state directory does not keep is a UsageError. */
export function resolvePushConfig(inputs: PushInputs): PushConfig {
  const { flags, env } = inputs;
  const mapping = withOpenPeriod(inputs.mappingFile, flags);
  const { stateDir, url } = ledgerOf(flags, env);
  const moving = flags.moveLedgerToService === true;
  const asked = askedDialect({ flags, env, file: mapping });
  const dialect = keptDialect(asked, inputs.recorded && { ...inputs.recorded, moving });
  if (mapping.contract) checkContractDialect(mapping, dialect);
  const selection =
    flags.limit === undefined && inputs.accounts === undefined
      ? undefined
      : { limit: flags.limit, ...(inputs.accounts === undefined ? {} : { accounts: inputs.accounts }) };
  const engine = engineSettings(flags, mapping);
  return Object.freeze({
    dir: flags.dir,
    mapping,
    exportFiles: inputs.exportFiles,
    dryRun: flags.dryRun === true,
    allowNoAccounts: flags.allowNoAccounts === true,
    ledger: Object.freeze({
      stateDir,
      url,
      unreachableSeconds: flags.ledgerTimeout ?? DEFAULT_UNREACHABLE_SECONDS,
      alone: selection !== undefined || flags.retryInvalid !== undefined || 'percent' in (flags.maxErrors ?? {}),
      states: statesWithWork(engine.retryErrored),
      moving,
    }),
    service: Object.freeze({
      flags: serviceFlags(flags),
      sandbox: flags.sandbox ? sandboxOptions(mapping.importSupplier, mapping.openPeriodStart) : undefined,
      dialect,
      asked,
      client: Object.freeze({ concurrency: flags.concurrency, maxRequestsPerSecond: flags.rate }),
      firstAnswerMs: flags.firstAnswerTimeout * 1000,
    }),
    selection,
    engine,
    maxErrors: flags.maxErrors,
    retryInvalid: flags.retryInvalid,
    outputs: Object.freeze({
      json: flags.json === true,
      logFile: flags.logFile,
      quiet: flags.quiet === true,
      progressInterval: flags.progressInterval,
      metricsFile: flags.metricsFile,
      metricsInterval: flags.metricsInterval,
      origin: flags.origin,
    }),
    recordedOptions: recordedOptions(flags, inputs.exportRealPath),
    stopPoint: env[STOP_AT_ENV] || undefined,
  });
}

function ledgerOf(flags: PushFlags, env: NodeJS.ProcessEnv): { stateDir: string; url: string | undefined } {
  return { stateDir: resolve(flags.state), url: ledgerUrlOf(flags.ledger, env) };
}

function engineSettings(flags: PushFlags, mapping: MigrateConfig): Readonly<EngineSettings> {
  return Object.freeze({
    ...DEFAULT_ENGINE_SETTINGS,
    multiplePaymentInstructions: mapping.multiplePaymentInstructions,
    ...(flags.only === undefined ? {} : { steps: flags.only }),
    concurrency: flags.concurrency,
    retryErrored: flags.retryErrored === true,
    wait: flags.wait,
    waitTimeoutMs: flags.waitTimeout * 1000,
    lostCreateChecks: flags.lostCreateChecks,
    batchBytes: flags.batchBytes,
    transactionFlags: {
      check_previously_added: flags.checkPreviouslyAdded,
      force_add_to_current_statement: mapping.forceAddToCurrentStatement,
    },
  });
}

function serviceFlags(flags: PushFlags): Readonly<ServiceFlags> {
  const { baseUrl, apiKeyFile, tokenFile, tokenField, headerForm, dialect, proxy } = flags;
  return Object.freeze({ baseUrl, apiKeyFile, tokenFile, tokenField, headerForm, dialect, proxy });
}

/** Processing fast; the default suppliers stay (records may name their own), the configured one Ongoing. */
function sandboxOptions(supplier: string | undefined, openPeriodStart: string | undefined): Partial<SandboxOptions> {
  const suppliers =
    supplier === undefined ? {} : { suppliers: { ...DEFAULT_SUPPLIERS, [supplier]: 'Ongoing' as const } };
  // The open statement period the run declares is the one the rehearsal's platform keeps (else the sandbox's own).
  return { processingMs: 50, ...suppliers, ...(openPeriodStart === undefined ? {} : { openPeriodStart }) };
}

function recordedOptions(flags: PushFlags, exportRealPath: string): Readonly<Record<string, unknown>> {
  const { apiKeyFile, tokenFile, only, ledger, origin, ...rest } = flags;
  return Object.freeze({
    ...rest,
    runConfig: origin?.runConfig ?? undefined,
    // The PostgreSQL ledger's URL, never its password.
    ledger: ledger === undefined ? undefined : redactUrl(ledger),
    exportDir: exportRealPath,
    apiKeyFile: apiKeyFile === undefined ? undefined : '(given)',
    tokenFile: tokenFile === undefined ? undefined : '(given)',
    only: only === undefined ? undefined : [...only],
  });
}
