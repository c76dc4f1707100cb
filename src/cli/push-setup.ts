import { existsSync, statSync } from 'node:fs';
import { fileGlobsOf } from '../mapping/mapping-rules.js';
import { dirname, join, resolve } from 'node:path';
import { checkContractDialect, type MigrateConfig } from '../config/index.js';
import { ledgerUrlOf } from '../config/ledger-url.js';
import { chooseDialect, loadServiceConfig, type ServiceConfig } from '../config/service.js';
import { UsageError, visibleText } from '../errors.js';
import { refuseNoAccounts } from '../intake/accounts-present.js';
import { checkStateDir, isLedgerDamage, LEDGER_FILE, openLedgerReader } from '../ledger/index.js';
import type { Dialect } from '../schema/index.js';
import { refuseUnsafeOutput } from '../report/output-file.js';
import { findExportFiles, type ExportFiles } from '../sources/index.js';
import { loadCommandConfig, warnAboutContract } from './mapping-options.js';
import { tellWarnings } from './open-service.js';
import type { PushCommandOptions } from './push-options.js';
import { readAccountsOption } from './push-options.js';
import { checkMetricsFile } from './push-monitoring.js';
import { stopPointsOf, type StopPoint } from './stop-points.js';

// Everything `migrate push` decides before it writes anything (README "Exit codes": a usage or configuration mistake
// is exit 2 and leaves nothing behind, no `.migrate/` in the working directory): the mapping file, the export's files
// (found once), the service's settings (loaded once, checked without a request) and the dialect the run sends in.

export interface PushSetup {
  stateDir: string;
  config: MigrateConfig;
  /** --limit, --accounts: the accounts the run may take (undefined: all). */
  selection: { limit?: number | undefined; accounts?: ReadonlySet<string> | undefined } | undefined;
  exportFiles: ExportFiles;
  /** The service's settings; undefined with --sandbox (the built-in sandbox's, once it runs). */
  service: ServiceConfig | undefined;
  /** The dialect the run sends in: the flags', else the state directory's, else 'spec' (config/service.ts). */
  dialect: Dialect;
  /** The state directory's recorded dialect, read without the lock (undefined: none yet). */
  recorded: { dialect: string; ledgerLabel: string; moving: boolean } | undefined;
  /** The PostgreSQL ledger (--ledger, MIGRATE_LEDGER_URL); undefined: the state directory's SQLite ledger. */
  ledgerUrl: string | undefined;
  /** The test hook of stop-points.ts (a no-op unless MIGRATE_TEST_STOP_AT is set). */
  stopAt: (point: StopPoint) => void;
}

export async function preparePush(options: PushCommandOptions): Promise<PushSetup> {
  const stateDir = resolve(options.state);
  const ledgerUrl = ledgerUrlOf(options.ledger, process.env);
  const config = await loadCommandConfig(options);
  // A file, a path through a file, another user's directory: said as such before anything is read or written.
  if (ledgerUrl === undefined) checkStateDir(stateDir, options.dryRun ? 'read' : 'write', LEDGER_FILE);
  // A PostgreSQL ledger's dialect is read once it is open (push-run.ts).
  const recorded =
    ledgerUrl === undefined ? recordedDialect(stateDir, options.moveLedgerToService === true) : undefined;
  const dialect = chooseDialect({ flags: options, env: process.env, file: config, recorded });
  if (config.contract) checkContractDialect(config, dialect);
  warnAboutContract(config);
  const selection = await selectionOf(options);
  // A shaped export's legacy files are found by its sources' globs when the shape opens.
  const exportFiles = config.shape
    ? { files: [], notRead: [] }
    : await findExportFiles(options.dir, fileGlobsOf(config));
  await refuseNoAccounts(exportFiles.files, config, options.allowNoAccounts === true);
  if (!options.dryRun && options.logFile !== undefined) checkLogFileDir(options.logFile, options.dir);
  if (!options.dryRun && options.metricsFile !== undefined) checkMetricsFile(options.metricsFile, options.dir, warn);
  // Checked here without a request; the client is made once the state directory is locked.
  const service = options.sandbox
    ? undefined
    : await loadServiceConfig({ flags: options, env: process.env, cwd: process.cwd(), file: config, recorded });
  if (service) tellWarnings(service);
  const stopAt = stopPointsOf(process.env);
  return { stateDir, config, selection, exportFiles, service, dialect, recorded, ledgerUrl, stopAt };
}

/**
 * The setup read against another copy of the ledger (a PostgreSQL ledger's snapshot in a temporary state directory,
 * for the dry run): its recorded dialect decides the run's, as a state directory's would.
 */
export function onStateDir(setup: PushSetup, options: PushCommandOptions, stateDir: string): PushSetup {
  const recorded = recordedDialect(stateDir, options.moveLedgerToService === true);
  const dialect = chooseDialect({ flags: options, env: process.env, file: setup.config, recorded });
  return { ...setup, stateDir, recorded, dialect };
}

export const warn = (text: string): void => void process.stderr.write(`migrate: warning: ${visibleText(text)}\n`);

async function selectionOf(options: PushCommandOptions): Promise<PushSetup['selection']> {
  const accounts =
    options.accounts === undefined ? undefined : await readAccountsOption(options.accounts, process.cwd());
  return options.limit === undefined && accounts === undefined ? undefined : { limit: options.limit, accounts };
}

/** --log-file's directory must exist, outside the export: checked before the state directory is created. */
function checkLogFileDir(path: string, exportDir: string): void {
  refuseUnsafeOutput('--log-file', path, [exportDir]);
  const dir = dirname(resolve(path));
  if (!existsSync(dir) || !statSync(dir).isDirectory())
    throw new UsageError(`--log-file ${path}: the directory ${dir} does not exist.`, 'log_file_unwritable');
}

/**
 * The dialect a state directory was pushed in, read without a lock; undefined when it has none yet. A damaged ledger
 * reads as none here: the locked open names it.
 */
function recordedDialect(stateDir: string, moving: boolean): PushSetup['recorded'] {
  if (!existsSync(join(stateDir, LEDGER_FILE))) return undefined;
  try {
    const reader = openLedgerReader(stateDir);
    try {
      const dialect = reader.read.dialect();
      return dialect === undefined ? undefined : { dialect, ledgerLabel: stateDir, moving };
    } finally {
      reader.close();
    }
  } catch (error) {
    if (isLedgerDamage(error)) return undefined;
    throw error;
  }
}
