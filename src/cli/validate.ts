import type { Command } from 'commander';
import { fileGlobsOf } from '../mapping/mapping-rules.js';
import { RequestRejectedError } from '../api/index.js';
import { checkContractDialect, type MigrateConfig } from '../config/index.js';
import { chooseDialect, registerServiceOptions, type ServiceFlags } from '../config/service.js';
import { RUN_DEFAULTS } from '../defaults.js';
import { ExitCode, UsageError, visibleJson, visibleText } from '../errors.js';
import { Code } from '../schema/index.js';
import { locateIssue, openExport, type ExportReader } from '../intake/index.js';
import type { OrderProof } from '../intake/order-proof.js';
import { jsonReport, textReport, writeErrorsCsv } from '../report/validation-report.js';
import { ValidateProgress } from '../report/validate-progress.js';
import { ALLOW_NO_ACCOUNTS, refuseNoAccounts } from '../intake/accounts-present.js';
import { openExportInOrder } from '../intake/export-in-order.js';
import { scratchSpaceError } from './scratch-space.js';
import { findExportFiles } from '../sources/index.js';
import { validateExport, type ExportValidation, type RemoteCheck } from '../intake/validate-export.js';
import { OutputClosed, stdoutOutput } from '../report/output.js';
import { refuseUnsafeOutput } from '../report/output-file.js';
import { openService } from './open-service.js';
import type { PreviewOptions } from '../api/preview.js';
import type { Dialect } from '../schema/index.js';
import type { ShapedReader } from '../intake/shaped-export.js';
import { exportRowsAt, type ShownRows } from '../intake/shown-rows.js';
import { renderShow, ShowCollector, showKeysOf } from './validate-show.js';
import {
  loadCommandConfig,
  registerContractOption,
  registerMappingOptions,
  warnAboutContract,
} from './mapping-options.js';

export interface ValidateCommandOptions extends ServiceFlags {
  dir: string;
  remote?: boolean;
  sandbox?: boolean;
  concurrency?: string;
  json?: boolean;
  errorsCsv?: string;
  supplier?: string;
  config?: string;
  contract?: string;
  allowNoAccounts?: boolean;
  show?: string;
}

export function registerValidateCommand(program: Command, setExitCode: (code: number) => void): void {
  const command = program
    .command('validate')
    .description(
      'Read, map and validate an export directory; report every problem with file, line, column and account. Exit ' +
        '0 all valid, 1 some invalid, 2 unreadable input or bad configuration.',
    )
    .argument('<dir>', 'the export directory (accounts.csv, customers.csv, ...)')
    .option('--json', 'print one JSON document { ok, accounts, errors } instead of the readable report')
    .option('--errors-csv <file>', 'also write every error as a CSV row (file mode 0600)')
    .option(
      '--remote',
      "also send every locally valid account to the service's validate endpoint; its errors are mapped back to " +
        'file, line and column',
    )
    .option('--sandbox', 'with --remote: validate against the built-in sandbox instead of the service')
    .option(
      ALLOW_NO_ACCOUNTS,
      'the accounts file may hold no account: the export only adds post-import records to accounts imported earlier',
    )
    .option(
      '--show <accounts>',
      'for these external account numbers (comma-separated): the rows read, the records a shape made of them, and ' +
        'the requests push would send',
    )
    .option(
      '--concurrency <n>',
      'with --remote: most requests in flight at once',
      String(RUN_DEFAULTS.remoteValidateConcurrency),
    );
  registerContractOption(registerMappingOptions(command));
  registerServiceOptions(command);
  command.action(async (dir: string, options: Omit<ValidateCommandOptions, 'dir'>) => {
    setExitCode(await validateCommand({ ...options, dir }));
  });
}

/**
 * `migrate validate <dir>`: returns the exit code; throws UsageError/InputError (exit 2) for input that cannot be read
 * at all.
 */
export async function validateCommand(options: ValidateCommandOptions): Promise<number> {
  if (options.show !== undefined && options.json)
    throw new UsageError('--show prints for people; leave out --json (or run validate twice).', 'show_with_json');
  if (options.sandbox && !options.remote)
    throw new UsageError(
      '--sandbox only applies with --remote (validate against the built-in sandbox).',
      'sandbox_without_remote',
    );
  if (options.errorsCsv !== undefined) refuseUnsafeOutput('--errors-csv', options.errorsCsv, [options.dir]);
  const config = await loadCommandConfig(options);
  const dialect = chooseDialect({ flags: options, env: process.env, file: config });
  checkContractDialect(config, dialect);
  warnAboutContract(config);
  // Found once: the read below takes the same files.
  const found = config.shape ? { files: [], notRead: [] } : await findExportFiles(options.dir, fileGlobsOf(config));
  await refuseNoAccounts(found.files, config, options.allowNoAccounts === true);
  // Credentials and the service are checked before the export is read: a long read should not end in a usage error.
  const remote = options.remote ? await openRemote(options, config) : undefined;
  // Payloads are checked for the dialect push would send them in (--dialect, MIGRATE_DIALECT, the mapping file).
  const mapping = { ...config, dialect };
  const progress = process.stderr.isTTY ? new ValidateProgress() : undefined;
  const show = options.show === undefined ? undefined : new ShowCollector(showKeysOf(options.show));
  let shown = '';
  let validation: ExportValidation;
  try {
    // --remote reads the whole export first (the scratch join), so that no account is sent to the service twice.
    // A shaped export comes sorted by its engine: each account is read once either way.
    const reader: ExportReader & { proof?: OrderProof | undefined } =
      remote && !config.shape
        ? await openExport(options.dir, mapping, {
            join: 'scratch',
            found,
            onProgress: (event) => progress?.reading('scratch', event.bytes, event.totalBytes),
          })
        : await openExportInOrder(options.dir, mapping, {
            found,
            allowNoAccounts: options.allowNoAccounts === true,
            onProgress: (event) => progress?.reading('streaming', event.bytes, event.totalBytes),
          });
    try {
      if (remote || reader.proof === undefined)
        progress?.joining(reader.summary.accounts + reader.summary.orphanAccounts);
      validation = await validateExport(reader, {
        onEntry: (entry) => {
          progress?.tick();
          show?.take(entry);
        },
        ...(remote ? { remote: remote.check, remoteConcurrency: remote.concurrency } : {}),
      });
      if (show)
        shown = renderShow(show, await shownRowsOf(reader, show, options.dir, mapping), previewOf(config, dialect));
    } finally {
      await reader.close();
    }
  } catch (error) {
    // TMPDIR full while the export was sorted: named, with the room it needs (exit 3).
    throw scratchSpaceError(error, undefined, found.files) ?? error;
  } finally {
    progress?.stop();
    await remote?.close();
  }
  const output = stdoutOutput();
  try {
    if (options.errorsCsv !== undefined) await writeErrorsCsv(options.errorsCsv, validation);
    for await (const text of options.json ? jsonReport(validation) : textReport(validation))
      await output.write(options.json ? visibleJson(text) : visibleText(text));
    if (shown !== '') await output.write(shown);
  } catch (error) {
    if (!(error instanceof OutputClosed)) throw error;
  } finally {
    output.dispose();
    validation.close();
  }
  return validation.ok ? ExitCode.ok : ExitCode.someFailed;
}

function concurrencyOf(value: string | undefined): number {
  const concurrency = value === undefined ? RUN_DEFAULTS.remoteValidateConcurrency : Number(value);
  if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > 64)
    throw new UsageError(
      `--concurrency: expected a whole number from 1 to 64, got ${JSON.stringify(value)}.`,
      'invalid_concurrency',
    );
  return concurrency;
}

/** The service's validate endpoint (spec "Validate account") for --remote; its attrs located like local errors. */
async function openRemote(
  options: ValidateCommandOptions,
  config: MigrateConfig,
): Promise<{ check: RemoteCheck; concurrency: number; close: () => Promise<void> }> {
  const concurrency = concurrencyOf(options.concurrency);
  const service = await openService({
    flags: options,
    sandbox: options.sandbox ? {} : undefined,
    file: config,
    client: { concurrency },
  });
  const check: RemoteCheck = async (account) => {
    let outcome;
    try {
      outcome = await service.client.validateAccount(account.payload);
    } catch (error) {
      // Refused by the client before sending (a field the dialect cannot carry, an undocumented field): a data problem
      // of this account.
      if (!(error instanceof RequestRejectedError) || error.status !== undefined || error.issues.length === 0)
        throw error;
      return error.issues.map((issue) => ({ ...locateIssue(account, issue), message: `not sent: ${issue.detail}` }));
    }
    if (outcome.kind === 'valid') return [];
    const errors =
      outcome.errors.length > 0
        ? outcome.errors
        : [
            {
              attr: '',
              code: Code.accountFailedValidation,
              detail: 'The service refused the account without naming a field.',
            },
          ];
    return errors.map((error) => ({ ...locateIssue(account, error), message: `service: ${error.detail}` }));
  };
  return { check, concurrency, close: service.close };
}

/** The rows of the accounts to show: a shaped export's legacy and shaped rows, else the export's own at their lines. */
function shownRowsOf(
  reader: ExportReader,
  show: ShowCollector,
  dir: string,
  mapping: MigrateConfig,
): Promise<ShownRows> {
  if ('shownRows' in reader) return (reader as ShapedReader).shownRows(show.keys);
  return exportRowsAt(dir, mapping, show.origins());
}

function previewOf(config: MigrateConfig, dialect: Dialect): PreviewOptions {
  return { dialect, taskParams: config.taskParams ?? {}, tenantFields: config.tenantFields };
}
