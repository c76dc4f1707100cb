import type { Command } from 'commander';
import { fileGlobsOf } from '../../mapping/mapping-rules.js';
import { RequestRejectedError } from '../../api/index.js';
import type { MigrateConfig } from '../../config/index.js';
import { exitCodeOfLeft, InterruptedError, visibleJson, visibleText } from '../../errors.js';
import { stopSignal, untilStopped, type StopRules } from '../../stop-signals.js';
import { Code } from '../../schema/index.js';
import { locateIssue, openExport, type ExportReader } from '../../intake/index.js';
import type { OrderProof } from '../../intake/order-proof.js';
import { jsonReport, textReport, writeErrorsCsv } from './validation-report.js';
import { ValidateProgress } from './validate-progress.js';
import { refuseNoAccounts } from '../../intake/accounts-present.js';
import { openExportInOrder } from '../../intake/export-in-order.js';
import { scratchSpaceError } from '../common/scratch-space.js';
import { findExportFiles } from '../../sources/index.js';
import { validateExport, type ExportValidation, type RemoteCheck } from '../../intake/validate-export.js';
import { OutputClosed, stdoutOutput } from '../../output/output.js';
import { refuseUnsafeOutput } from '../../output/output-file.js';
import { openService } from '../common/open-service.js';
import type { PreviewOptions } from '../../api/preview.js';
import type { ShapedReader } from '../../intake/shaped-export.js';
import { exportRowsAt, type ShownRows } from '../../intake/shown-rows.js';
import { renderShow, ShowCollector } from './validate-show.js';
import { loadCommandConfig, warnAboutContract } from '../common/mapping-options.js';
import { runOriginOfCommand } from '../common/run-config.js';
import { runOriginJson, type RunOrigin } from '../common/run-origin.js';
import { givenShapeLimits } from '../common/shape-limits.js';
import { registerValidateFlags, type ValidateFlags } from './flags.js';
import { mappingFlagsOf, resolveValidateConfig, type ValidateConfig } from './resolve.js';

// `migrate validate <dir>`: the mapping file read, the options resolved once (resolve.ts), the export read, mapped and
// validated (and, with --remote, sent to the service's validate endpoint), the report printed.

export function registerValidateCommand(program: Command, setExitCode: (code: number) => void): void {
  const command = program
    .command('validate')
    .description(
      'Read, map and validate an export directory; report every problem with file, line, column and account. Exit ' +
        '0 all valid, 5 some invalid (a person fixes the data), 2 unreadable input or bad configuration.',
    )
    .argument('<dir>', 'the export directory (accounts.csv, customers.csv, ...)');
  registerValidateFlags(command).action(async (dir: string, flags: ValidateFlags) => {
    const shapeLimits = givenShapeLimits(command, process.env);
    setExitCode(
      await untilStopped(STOPPED, () => validateCommand(dir, { ...flags, shapeLimits }, runOriginOfCommand(command))),
    );
  });
}

/** Stopped by SIGINT, SIGTERM or SIGHUP: the shape engine interrupted, its files and the scratch removed. */
const STOPPED: StopRules = {
  interrupted: () => new InterruptedError('by a stop signal', 'nothing was changed: run it again'),
  atOnce: true,
};

/**
 * `migrate validate <dir>`: returns the exit code; throws UsageError/InputError (exit 2) for input that cannot be read
 * at all.
 */
export async function validateCommand(dir: string, flags: ValidateFlags, origin?: RunOrigin): Promise<number> {
  const file = await loadCommandConfig(mappingFlagsOf(dir, flags));
  const config = resolveValidateConfig({ dir, flags, env: process.env, file });
  if (config.errorsCsv !== undefined) refuseUnsafeOutput('--errors-csv', config.errorsCsv, [dir]);
  warnAboutContract(file);
  const { mapping } = config;
  // Found once: the read below takes the same files.
  const found = mapping.shape ? { files: [], notRead: [] } : await findExportFiles(dir, fileGlobsOf(mapping));
  await refuseNoAccounts(found.files, mapping, config.allowNoAccounts);
  // Credentials and the service are checked before the export is read: a long read should not end in a usage error.
  const remote = config.remote ? await openRemote(config) : undefined;
  const progress = process.stderr.isTTY ? new ValidateProgress() : undefined;
  const show = config.show === undefined ? undefined : new ShowCollector([...config.show]);
  let shown = '';
  let validation: ExportValidation;
  // SIGINT, SIGTERM, SIGHUP: the read and the check stop at the next batch or account (exit 130).
  const stop = stopSignal();
  try {
    // --remote reads the whole export first (the scratch join), so that no account is sent to the service twice.
    // A shaped export comes sorted by its engine: each account is read once either way.
    const reader: ExportReader & { proof?: OrderProof | undefined } =
      remote && !mapping.shape
        ? await openExport(dir, mapping, {
            join: 'scratch',
            found,
            signal: stop,
            onProgress: (event) => progress?.reading('scratch', event.bytes, event.totalBytes),
          })
        : await openExportInOrder(dir, mapping, {
            found,
            allowNoAccounts: config.allowNoAccounts,
            signal: stop,
            onProgress: (event) => progress?.reading('streaming', event.bytes, event.totalBytes),
          });
    try {
      if (remote || reader.proof === undefined)
        progress?.joining(reader.summary.accounts + reader.summary.orphanAccounts);
      validation = await validateExport(reader, {
        onEntry: (entry) => {
          stop.throwIfAborted();
          progress?.tick();
          show?.take(entry);
        },
        ...(remote ? { remote: remote.check, remoteConcurrency: remote.concurrency } : {}),
      });
      if (show) shown = renderShow(show, await shownRowsOf(reader, show, dir, mapping), previewOf(config));
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
    if (config.errorsCsv !== undefined) await writeErrorsCsv(config.errorsCsv, validation);
    const start = mapping.openPeriodStart;
    const period = start === undefined ? undefined : { start, force: mapping.forceAddToCurrentStatement };
    const said = runOriginJson(origin, remote?.url);
    for await (const text of config.json ? jsonReport(validation, period, said) : textReport(validation, period))
      await output.write(config.json ? visibleJson(text) : visibleText(text));
    if (shown !== '') await output.write(shown);
  } catch (error) {
    if (!(error instanceof OutputClosed)) throw error;
  } finally {
    output.dispose();
    validation.close();
  }
  // Invalid data waits for a person whatever runs again (README "Exit codes"): exit 5, as a push leaving it does.
  return exitCodeOfLeft({ forPerson: validation.ok ? 0 : 1, forLaterRun: 0 });
}

/** The service's validate endpoint (spec "Validate account") for --remote; its attrs located like local errors. */
async function openRemote(
  config: ValidateConfig,
): Promise<{ check: RemoteCheck; concurrency: number; url: string; close: () => Promise<void> }> {
  const { concurrency, sandbox, flags } = config.remote!;
  const service = await openService({
    flags,
    sandbox: sandbox ? {} : undefined,
    file: config.mapping,
    dialect: config.dialect,
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
  return { check, concurrency, url: service.config.baseUrl, close: service.close };
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

function previewOf({ dialect, mapping }: ValidateConfig): PreviewOptions {
  return { dialect, taskParams: mapping.taskParams ?? {}, tenantFields: mapping.tenantFields };
}
