import { resolve } from 'node:path';
import { type Command, InvalidArgumentError } from 'commander';
import type { ServiceClient } from '../api/index.js';
import { registerServiceOptions, type ServiceFlags } from '../config/service.js';
import { ExitCode } from '../errors.js';
import { tellAccountStory } from '../report/account-story.js';
import { ledgerExists, openLedgerSource, type LedgerSource } from '../report/ledger-source.js';
import { OutputClosed, stdoutOutput, type Output } from '../report/output.js';
import { gatherStatus, type StatusSummary } from '../report/status-gather.js';
import type { StatusRow } from '../report/status-join.js';
import { renderAccountStory, renderStatus } from '../report/status-render.js';
import { nextSteps, statusExit } from '../report/status-verdict.js';
import { colorWanted } from '../report/summary.js';
import { openService, type OpenService } from './open-service.js';

export interface StatusCommandOptions extends ServiceFlags {
  supplier: string;
  state: string;
  offline?: boolean | undefined;
  account?: string | undefined;
  json?: boolean | undefined;
  maxRows: number;
  maxStatusChecks: number;
}

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
      './.migrate',
    )
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
export async function statusCommand(options: StatusCommandOptions): Promise<number> {
  const ledger = openLedger(options);
  const out = stdoutOutput();
  let service: OpenService | undefined;
  try {
    service = options.offline ? undefined : await openClient(options, ledger);
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
    await out.write(options.json ? `${JSON.stringify(story, null, 2)}\n` : renderAccountStory(story, render));
    return ExitCode.ok;
  }
  if (options.json) return statusExit(await printJson(options, ledger, client, out));
  const summary = await gatherStatus({
    supplier: options.supplier,
    ledger,
    client,
    maxStatusChecks: options.maxStatusChecks,
    maxListed: options.maxRows,
  });
  summary.next_steps = nextSteps(summary);
  await out.write(renderStatus(summary, render));
  return statusExit(summary);
}

function openLedger(options: StatusCommandOptions): LedgerSource | undefined {
  const stateDir = resolve(options.state);
  if (options.offline || ledgerExists(stateDir)) return openLedgerSource(stateDir);
  process.stderr.write(
    `migrate: no ledger in ${stateDir}: showing the service's view only (give --state DIR for the ledger's)\n`,
  );
  return undefined;
}

/** The service in the state directory's dialect (a different --dialect is refused, as in push). */
function openClient(options: StatusCommandOptions, ledger: LedgerSource | undefined): Promise<OpenService> {
  const dialect = ledger?.read.dialect();
  return openService({
    flags: options,
    recorded: dialect === undefined ? undefined : { dialect, stateDir: resolve(options.state) },
    client: { concurrency: 8 },
  });
}

/**
 * The JSON document, streamed: rows are written page by page as the ledger is read (with
 * back-pressure), then the counts and lists, so a million accounts never sit in memory.
 */
async function printJson(
  options: StatusCommandOptions,
  ledger: LedgerSource | undefined,
  client: ServiceClient | undefined,
  out: Output,
): Promise<StatusSummary> {
  let chunk: string[] = [];
  let first = true;
  const onRow = (row: StatusRow): void => {
    chunk.push(`${first ? '' : ',\n'}    ${JSON.stringify(row)}`);
    first = false;
  };
  // The document starts with the first rows, after the service has answered: a run that fails
  // before (authentication, unknown supplier) prints nothing on stdout rather than half a document.
  let opened = false;
  const flush = async (): Promise<void> => {
    const text = `${opened ? '' : '{\n  "accounts": [\n'}${chunk.join('')}`;
    opened = true;
    chunk = [];
    if (text !== '') await out.write(text);
  };
  const summary = await gatherStatus({
    supplier: options.supplier,
    ledger,
    client,
    maxStatusChecks: options.maxStatusChecks,
    maxListed: options.maxRows,
    onRow,
    onPage: flush,
  });
  await flush();
  summary.next_steps = nextSteps(summary);
  const rest = JSON.stringify(summary, null, 2).slice(1);
  await out.write(`\n  ],${rest}\n`);
  return summary;
}
