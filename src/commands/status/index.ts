import type { Command } from 'commander';
import type { ServiceClient } from '../../api/index.js';
import { ExitCode, InterruptedError, UsageError, visibleJson, visibleStrings } from '../../errors.js';
import { untilStopped, type StopRules } from '../../stop-signals.js';
import { findRunConfig, runOriginOfCommand } from '../common/run-config.js';
import { runOriginJson, type RunOrigin } from '../common/run-origin.js';
import type { LedgerSource } from '../common/ledger-source.js';
import { colorWanted, OutputClosed, stdoutOutput, type Output } from '../../output/output.js';
import { onLedgerAt } from '../common/ledger-snapshot.js';
import type { OpenService } from '../common/open-service.js';
import { tellAccountStory } from './account-story.js';
import { registerStatusFlags, type StatusFlags } from './flags.js';
import { openStatusLedger, openStatusService, recordedOf } from './open.js';
import { resolveStatusConfig, statusLedgerPlace, type StatusConfig } from './resolve.js';
import { gatherStatus } from './status-gather.js';
import { writeStatusJson } from './status-json.js';
import { renderAccountStory, renderStatus } from './status-render.js';
import { nextSteps, statusExit } from './status-verdict.js';
import { ledgerWords, type KnownValues } from '../common/shell-word.js';

// `migrate status <supplier>`: the options resolved once (resolve.ts), the ledger and the service opened (open.ts),
// what they say gathered and joined (status-gather.ts), printed as text or JSON with the exit code cron reads.

export function registerStatusCommand(program: Command, setExitCode: (code: number) => void): void {
  const command = program
    .command('status')
    .description(
      "Where an import supplier's migration stands: the service's view (v1 lists, v2 status of open accounts) " +
        'joined with the ledger: counts per state, ' +
        'accounts pending, ERRORED with their latest error, accounts only one side knows, post-import records ' +
        'outstanding. Changes nothing.',
    )
    .argument('[supplier]', "the import supplier code (else MIGRATE_SUPPLIER, else the run configuration's supplier)");
  registerStatusFlags(command).action(async (supplier: string | undefined, flags: StatusFlags, self: Command) => {
    const stateGiven = self.getOptionValueSource('state') !== 'default';
    const origin = runOriginOfCommand(self);
    const named = supplierOf(supplier, flags, process.env);
    setExitCode(await untilStopped(STOPPED, () => statusCommand(named, { ...flags, stateGiven }, origin)));
  });
}

/** Stopped by SIGINT, SIGTERM or SIGHUP: nothing to finish (status changes nothing), exit 130 within seconds. */
const STOPPED: StopRules = {
  interrupted: () => new InterruptedError('by a stop signal', 'status changes nothing: run it again'),
  atOnce: true,
};

/** The supplier: the argument, else MIGRATE_SUPPLIER, else the run configuration's `supplier`. */
function supplierOf(argument: string | undefined, flags: StatusFlags, env: NodeJS.ProcessEnv): string {
  const supplier =
    argument ?? (env['MIGRATE_SUPPLIER'] || findRunConfig(flags.runConfig, env, process.cwd())?.settings.supplier);
  if (supplier === undefined || supplier === '')
    throw new UsageError(
      'no import supplier: give it (migrate status SUPPLIER), or set MIGRATE_SUPPLIER or supplier in the run ' +
        'configuration',
      'supplier_missing',
    );
  return String(supplier);
}

/** `migrate status <supplier>`: returns the exit code. */
export function statusCommand(supplier: string, flags: StatusFlags, origin?: RunOrigin): Promise<number> {
  const env = process.env;
  const place = statusLedgerPlace(flags, env);
  return onLedgerAt(place.url, async ({ stateDir, label }) => {
    const ledger = openStatusLedger(stateDir === undefined ? place : { ...place, stateDir });
    const out = stdoutOutput();
    let service: OpenService | undefined;
    try {
      const recorded = ledger === undefined ? undefined : recordedOf(ledger, label ?? place.stateDir);
      const config = resolveStatusConfig({ supplier, flags, env, recorded });
      service = await openStatusService(config);
      // The hints name the last push's export directory and this ledger's flag, as the user would type them.
      const known = { exportDir: ledger?.read.pushExportDirs().at(-1), ledgerWords: ledgerWords(place) };
      const said = runOriginJson(origin, service?.config.baseUrl);
      return await printStatus(config, { ledger, client: service?.client, known, said }, out);
    } catch (error) {
      if (error instanceof OutputClosed) return ExitCode.ok;
      throw error;
    } finally {
      out.dispose();
      ledger?.close();
      await service?.close();
    }
  });
}

async function printStatus(
  config: StatusConfig,
  opened: {
    ledger: LedgerSource | undefined;
    client: ServiceClient | undefined;
    /** Values the hints use (the last push's export directory, this ledger's flag). */
    known: KnownValues;
    said: ReturnType<typeof runOriginJson>;
  },
  out: Output,
): Promise<number> {
  const { ledger, client, known, said } = opened;
  const render = { color: colorWanted(process.stdout, process.env) };
  const { supplier } = config;
  if (config.account !== undefined) {
    const story = await tellAccountStory({ supplier, externalAccountNumber: config.account, ledger, client });
    const visible = visibleStrings(story);
    await out.write(
      config.json
        ? `${visibleJson(JSON.stringify({ ...said, ...story }, null, 2))}\n`
        : renderAccountStory(visible, render),
    );
    return ExitCode.ok;
  }
  const input = { supplier, ledger, client, maxStatusChecks: config.maxStatusChecks, maxListed: config.maxRows };
  if (config.json)
    return statusExit(
      await writeStatusJson({ ...out, write: (text) => out.write(visibleJson(text)) }, input, { known, head: said }),
    );
  const summary = await gatherStatus(input);
  summary.next_steps = nextSteps(summary, known);
  await out.write(renderStatus(visibleStrings(summary), render));
  return statusExit(summary);
}
