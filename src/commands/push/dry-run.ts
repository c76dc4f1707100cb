import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { refuseOtherService, serviceIdentity } from '../../config/ledger-service.js';
import type { ServiceConfig } from '../../config/service.js';
import { planDryRun } from '../../engine/index.js';
import { ExitCode } from '../../errors.js';
import { openExport, type ExportReader } from '../../intake/index.js';
import { openShapedExport } from '../../intake/shaped-export.js';
import { readRecorded } from '../../ledger/run-ledger.js';
import { PlanJsonWriter, PlanSamples, renderPlan } from '../../report/summary-plan.js';
import { onLedgerUrl } from '../../cli/ledger-snapshot.js';
import type { PushConfig } from './resolve.js';
import { refuseExport, tellEntries } from './run.js';

// push --dry-run: stages the export into a scratch copy of the ledger (engine/dry-run.ts) and prints the plan; no lock,
// no request, the state directory is only read (and not created); a PostgreSQL ledger is planned from a snapshot of it
// copied into a temporary state directory. The credentials were checked (without a request), so that a plan also says
// the real run could start, in the dialect it would send in: the same checks, the same plan.

export function dryRunPush(
  config: PushConfig,
  service: ServiceConfig | undefined,
  signal: AbortSignal,
): Promise<number> {
  return onLedgerUrl(config.ledger.url, (place) =>
    planOn(config, { service, signal, stateDir: place.stateDir ?? config.ledger.stateDir, label: place.label }),
  );
}

async function planOn(
  config: PushConfig,
  at: { service: ServiceConfig | undefined; signal: AbortSignal; stateDir: string; label: string | undefined },
): Promise<number> {
  const { stateDir } = at;
  // The ledger's recorded dialect decides the run's (for a PostgreSQL ledger, its snapshot's).
  const recorded = readRecorded(stateDir);
  const dialect = config.service.dialectOn(recorded?.dialect);
  // The plan must not promise a run the state directory would refuse for another service than its own.
  if (recorded?.service !== undefined && !config.ledger.moving)
    refuseOtherService({
      ledgerLabel: stateDir,
      recorded: recorded.service,
      current: serviceIdentity({
        sandbox: config.service.sandbox !== undefined,
        baseUrl: at.service?.baseUrl,
        dialect,
        importSupplier: config.mapping.importSupplier,
      }),
      command: 'push',
    });
  const scratch = mkdtempSync(join(tmpdir(), 'migrate-dry-run-'));
  let reader: ExportReader | undefined;
  try {
    const mapping = { ...config.mapping, dialect };
    reader = mapping.shape
      ? await openShapedExport(
          config.dir,
          { ...mapping, shape: mapping.shape },
          { scratchDir: scratch, allowNoAccounts: config.allowNoAccounts },
        )
      : await openExport(config.dir, mapping, { scratchDir: scratch, found: config.exportFiles });
    tellEntries(reader.summary);
    refuseExport(reader);
    return await plan(config, { ...at, label: at.label ?? stateDir }, scratch, reader);
  } finally {
    await reader?.close();
    rmSync(scratch, { recursive: true, force: true });
  }
}

async function plan(
  config: PushConfig,
  at: { signal: AbortSignal; stateDir: string; label: string },
  scratch: string,
  reader: ExportReader,
): Promise<number> {
  const samples = new PlanSamples();
  const json = config.outputs.json ? new PlanJsonWriter((text) => process.stdout.write(text)) : undefined;
  const result = await planDryRun({
    stateDir: at.stateDir,
    scratchDir: scratch,
    entries: reader.entries(),
    settings: config.engine,
    selection: config.selection,
    signal: at.signal,
    retryInvalid: config.retryInvalid,
    sink: { emit: () => undefined },
    onAccount: (row) => (json ? json.row(row) : samples.add(row)),
  });
  const report = {
    stateDir: at.label,
    staged: result.staged,
    totals: result.scan.totals,
    unknownAccounts: result.scan.unknownAccounts,
  };
  if (json) json.end(report);
  else process.stdout.write(renderPlan(report, samples));
  return ExitCode.ok;
}
