import { tmpdir } from 'node:os';
import { checkRunService, serviceIdentity } from '../../config/ledger-service.js';
import { keptDialect, type ServiceConfig } from '../../config/service.js';
import { ExitCode } from '../../errors.js';
import { makePrivateDir, removePrivate } from '../../private-files.js';
import { openExport, type ExportReader } from '../../intake/index.js';
import { openShapedExport } from '../../intake/shaped-export.js';
import { readRecorded } from '../../ledger/run-ledger.js';
import { printPlan } from './summary-plan.js';
import { onLedgerAt } from '../common/ledger-snapshot.js';
import type { PushConfig } from './resolve.js';
import { runOriginJson } from '../common/run-origin.js';
import { refuseExport } from './open-export.js';
import { tellEntries } from './run.js';

// push --dry-run: stages the export into a scratch copy of the ledger (engine/dry-run.ts) and prints the plan; no lock,
// no request, the state directory is only read (and not created); a PostgreSQL ledger is planned from a snapshot of it
// copied into a temporary state directory. The credentials were checked (without a request), so that a plan also says
// the real run could start, in the dialect it would send in: the same checks, the same plan.

export function dryRunPush(
  config: PushConfig,
  service: ServiceConfig | undefined,
  signal: AbortSignal,
): Promise<number> {
  return onLedgerAt(config.ledger.url, (place) =>
    planOn(config, { service, signal, stateDir: place.stateDir ?? config.ledger.stateDir, label: place.label }),
  );
}

async function planOn(
  config: PushConfig,
  at: { service: ServiceConfig | undefined; signal: AbortSignal; stateDir: string; label: string | undefined },
): Promise<number> {
  // The ledger's recorded dialect decides the run's (for a PostgreSQL ledger, its snapshot's).
  const recorded = readRecorded(at.stateDir);
  const dialect = keptDialect(
    config.service.asked,
    recorded?.dialect && { ...recorded.dialect, moving: config.ledger.moving },
  );
  // The plan must not promise a run the state directory would refuse for another service than its own.
  checkRunService({
    ...{ ledgerLabel: at.stateDir, recorded: recorded?.service, moving: config.ledger.moving },
    current: serviceIdentity({
      ...{ sandbox: config.service.sandbox !== undefined, baseUrl: at.service?.baseUrl, dialect },
      importSupplier: config.mapping.importSupplier,
    }),
  });
  const scratch = makePrivateDir(tmpdir(), 'dry-run');
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
    await printPlan(
      {
        ...{ stateDir: at.stateDir, scratchDir: scratch, entries: reader.entries(), settings: config.engine },
        ...{ selection: config.selection, signal: at.signal, retryInvalid: config.retryInvalid },
      },
      {
        ...{ json: config.outputs.json, label: at.label ?? at.stateDir },
        head: runOriginJson(config.outputs.origin, at.service?.baseUrl),
      },
    );
    return ExitCode.ok;
  } finally {
    await reader?.close();
    removePrivate(scratch);
  }
}
