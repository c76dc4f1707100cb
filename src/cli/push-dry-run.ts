import { openShapedExport } from '../intake/shaped-export.js';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { refuseOtherService, serviceIdentity } from '../config/ledger-service.js';
import { planDryRun, type EngineSettings } from '../engine/index.js';
import { ExitCode } from '../errors.js';
import { openExport, type ExportReader } from '../intake/index.js';
import { LEDGER_FILE, openLedgerReader } from '../ledger/index.js';
import { PlanJsonWriter, PlanSamples, renderPlan } from '../report/summary-plan.js';
import type { PushCommandOptions } from './push-options.js';
import type { PushSetup } from './push-setup.js';

// push --dry-run: stages the export into a scratch copy of the ledger (engine/dry-run.ts) and prints the plan; no lock,
// no request, the state directory is only read (and not created). The setup has checked the credentials (without a
// request), so that a plan also says the real run could start, in the dialect it would send in: the same checks, the
// same plan.

export interface DryRunPushInput {
  options: PushCommandOptions;
  setup: PushSetup;
  /** How the plan names the ledger: the state directory, or a PostgreSQL ledger's URL without its password. */
  label: string;
  settings: EngineSettings;
  signal: AbortSignal;
  /** Entries of the export directory linked or not read, told as the real run tells them. */
  tellEntries: (summary: ExportReader['summary']) => void;
  /** Problems of the export that refuse the real run before anything is sent refuse the plan too. */
  refuse: (reader: ExportReader) => void;
}

export async function dryRunPush(input: DryRunPushInput): Promise<number> {
  const { options, setup } = input;
  refuseAnotherService(options, setup);
  const scratch = mkdtempSync(join(tmpdir(), 'migrate-dry-run-'));
  let reader: ExportReader | undefined;
  try {
    const config = { ...setup.config, dialect: setup.dialect };
    reader = config.shape
      ? await openShapedExport(
          options.dir,
          { ...config, shape: config.shape },
          {
            scratchDir: scratch,
            allowNoAccounts: options.allowNoAccounts === true,
          },
        )
      : await openExport(options.dir, config, { scratchDir: scratch, found: setup.exportFiles });
    input.tellEntries(reader.summary);
    input.refuse(reader);
    const samples = new PlanSamples();
    const json = options.json ? new PlanJsonWriter((text) => process.stdout.write(text)) : undefined;
    const result = await planDryRun({
      stateDir: setup.stateDir,
      scratchDir: scratch,
      entries: reader.entries(),
      settings: input.settings,
      selection: setup.selection,
      signal: input.signal,
      retryInvalid: options.retryInvalid,
      sink: { emit: () => undefined },
      onAccount: (row) => (json ? json.row(row) : samples.add(row)),
    });
    const report = {
      stateDir: input.label,
      staged: result.staged,
      totals: result.scan.totals,
      unknownAccounts: result.scan.unknownAccounts,
    };
    if (json) json.end(report);
    else process.stdout.write(renderPlan(report, samples));
    return ExitCode.ok;
  } finally {
    await reader?.close();
    rmSync(scratch, { recursive: true, force: true });
  }
}

/** The plan must not promise a run the state directory would refuse for another service than its own. */
function refuseAnotherService(options: PushCommandOptions, setup: PushSetup): void {
  if (!existsSync(join(setup.stateDir, LEDGER_FILE)) || options.moveLedgerToService === true) return;
  const reader = openLedgerReader(setup.stateDir);
  try {
    const recorded = reader.read.service();
    if (recorded !== undefined)
      refuseOtherService({
        ledgerLabel: setup.stateDir,
        recorded,
        current: serviceIdentity({
          sandbox: options.sandbox === true,
          baseUrl: setup.service?.baseUrl,
          dialect: setup.dialect,
          importSupplier: setup.config.importSupplier,
        }),
        command: 'push',
      });
  } finally {
    reader.close();
  }
}
