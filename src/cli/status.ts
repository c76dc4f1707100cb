import { resolve } from 'node:path';
import { type Command, InvalidArgumentError } from 'commander';
import type { ServiceClient } from '../api/index.js';
import { registerServiceOptions, type ServiceFlags } from '../config/service.js';
import { refuseOtherService, serviceIdentity } from '../config/ledger-service.js';
import { RUN_DEFAULTS } from '../defaults.js';
import { ExitCode, UsageError, visibleJson, visibleStrings } from '../errors.js';
import { checkStateDir, LEDGER_FILE } from '../ledger/index.js';
import { tellAccountStory } from '../report/account-story.js';
import { ledgerExists, openLedgerSource, type LedgerSource } from '../report/ledger-source.js';
import { OutputClosed, stdoutOutput, type Output } from '../report/output.js';
import { gatherStatus } from '../report/status-gather.js';
import { writeStatusJson } from '../report/status-json.js';
import { renderAccountStory, renderStatus } from '../report/status-render.js';
import { nextSteps, statusExit } from '../report/status-verdict.js';
import { colorWanted } from '../report/summary.js';
import { onLedger } from './ledger-snapshot.js';
import { openService, type OpenService } from './open-service.js';

export interface StatusCommandOptions extends ServiceFlags {
  supplier: string;
  state: string;
  offline?: boolean | undefined;
  account?: string | undefined;
  json?: boolean | undefined;
  maxRows: number;
  maxStatusChecks: number;
  ledger?: string | undefined;
  /** How messages name the ledger when it is not the state directory (a PostgreSQL ledger's URL, redacted). */
  ledgerLabel?: string | undefined;
}

const ledgerName = (options: StatusCommandOptions): string => options.ledgerLabel ?? resolve(options.state);

function count(name: string, max: number): (value: string) => number {
  return (value) => {
    const number = Number(value);
    if (!Number.isInteger(number) || number < 0 || number > max)
      throw new InvalidArgumentError(`${name} must be a whole number from 0 to ${max} (got "${value}").`);
    return number;
  };
}

export function registerStatusCommand(program: Command, setExitCode: (code: number) => void): void {
  const command = program
    .command('status')
    .description(
      "Where an import supplier's migration stands: the service's view (v1 lists, v2 status of open accounts) " +
        'joined with the ledger: counts per state, ' +
        'accounts pending, ERRORED with their latest error, accounts only one side knows, post-import records ' +
        'outstanding. Changes nothing.',
    )
    .argument('<supplier>', 'the import supplier code')
    .option(
      '--state <dir>',
      'state directory holding the results ledger (without one: the service view only)',
      RUN_DEFAULTS.stateDir,
    )
    .option('--ledger <url>', 'the results ledger in PostgreSQL (postgresql://...; else MIGRATE_LEDGER_URL)')
    .option('--offline', 'the ledger only: no request to the service, no credentials needed')
    .option(
      '--account <external_account_number>',
      "one account's whole story: ledger history, service status (v2 and v1), records",
    )
    .option('--json', 'print one JSON document on stdout (every account as a row)')
    .option(
      '--max-rows <n>',
      'accounts listed per section (counts are always complete)',
      count('--max-rows', 1_000_000),
      20,
    )
    .option(
      '--max-status-checks <n>',
      'v2 status requests at most, one per open account',
      count('--max-status-checks', 1_000_000),
      500,
    );
  registerServiceOptions(command).action(async (supplier: string, options: Omit<StatusCommandOptions, 'supplier'>) => {
    setExitCode(await statusCommand({ ...options, supplier }));
  });
}

/** `migrate status <supplier>`: returns the exit code. */
export function statusCommand(options: StatusCommandOptions): Promise<number> {
  return onLedger(options.ledger, ({ stateDir, label }) =>
    statusOn(stateDir === undefined ? options : { ...options, state: stateDir, ledgerLabel: label }),
  );
}

async function statusOn(options: StatusCommandOptions): Promise<number> {
  const ledger = openLedger(options);
  const out = stdoutOutput();
  let service: OpenService | undefined;
  try {
    if (ledger !== undefined && options.account === undefined) refuseSupplierNotHeld(options, ledger);
    service = options.offline ? undefined : await openClient(options, ledger);
    if (service !== undefined && ledger !== undefined) refuseOtherServiceOf(options, ledger, service);
    return await printStatus(options, ledger, service?.client, out);
  } catch (error) {
    if (error instanceof OutputClosed) return ExitCode.ok;
    throw error;
  } finally {
    out.dispose();
    ledger?.close();
    await service?.close();
  }
}

async function printStatus(
  options: StatusCommandOptions,
  ledger: LedgerSource | undefined,
  client: ServiceClient | undefined,
  out: Output,
): Promise<number> {
  const render = { color: colorWanted(process.stdout, process.env) };
  if (options.account !== undefined) {
    const story = await tellAccountStory({
      supplier: options.supplier,
      externalAccountNumber: options.account,
      ledger,
      client,
    });
    await out.write(
      options.json
        ? `${visibleJson(JSON.stringify(story, null, 2))}\n`
        : renderAccountStory(visibleStrings(story), render),
    );
    return ExitCode.ok;
  }
  const input = {
    supplier: options.supplier,
    ledger,
    client,
    maxStatusChecks: options.maxStatusChecks,
    maxListed: options.maxRows,
  };
  if (options.json)
    return statusExit(await writeStatusJson({ ...out, write: (text) => out.write(visibleJson(text)) }, input));
  const summary = await gatherStatus(input);
  summary.next_steps = nextSteps(summary);
  await out.write(renderStatus(visibleStrings(summary), render));
  return statusExit(summary);
}

function openLedger(options: StatusCommandOptions): LedgerSource | undefined {
  const stateDir = resolve(options.state);
  checkStateDir(stateDir, 'read', LEDGER_FILE);
  if (options.offline || ledgerExists(stateDir)) return openLedgerSource(stateDir);
  process.stderr.write(
    `migrate: no ledger in ${stateDir}: showing the service's view only (give --state DIR for the ledger's)\n`,
  );
  return undefined;
}

/**
 * A supplier code the ledger holds no account of is a mistake (a typo, the wrong --state): exit 2 naming the codes it
 * holds, so that `status || mail` under cron fires instead of reporting "nothing to do".
 */
function refuseSupplierNotHeld(options: StatusCommandOptions, ledger: LedgerSource): void {
  const held = ledger.read.suppliers();
  if (held.includes(options.supplier)) return;
  const label = ledgerName(options);
  throw new UsageError(
    held.length === 0
      ? `the ledger in ${label} holds no accounts yet (of any import supplier): run migrate push first, or give ` +
          `the --state directory of the migration`
      : `the ledger in ${label} holds no accounts of import supplier ${JSON.stringify(options.supplier)}; it ` +
          `holds ${held.map((code) => JSON.stringify(code)).join(', ')} (codes are case-sensitive). Give one of ` +
          `them, or the --state directory of ${options.supplier}'s migration.`,
    'supplier_not_in_ledger',
  );
}

/** Status against another service than the one the state directory was pushed to is refused (exit 2), as in push. */
function refuseOtherServiceOf(options: StatusCommandOptions, ledger: LedgerSource, service: OpenService): void {
  const recorded = ledger.read.service();
  if (recorded === undefined) return;
  const current = serviceIdentity({
    sandbox: false,
    baseUrl: service.config.baseUrl,
    dialect: service.config.dialect,
    importSupplier: undefined,
  });
  refuseOtherService({ ledgerLabel: ledgerName(options), recorded, current, command: 'status' });
}

/** The service in the state directory's dialect (a different --dialect is refused, as in push). */
function openClient(options: StatusCommandOptions, ledger: LedgerSource | undefined): Promise<OpenService> {
  const dialect = ledger?.read.dialect();
  return openService({
    flags: options,
    recorded: dialect === undefined ? undefined : { dialect, ledgerLabel: ledgerName(options) },
    client: { concurrency: RUN_DEFAULTS.concurrency },
    withoutUrl: 'or --offline for the ledger alone',
  });
}
