import type { ExportEntry } from '../mapping/types.js';
import { copyLedger, Ledger } from '../ledger/index.js';
import type { EngineSettings } from './context.js';
import type { EventSink, StageSummary } from './events.js';
import { PUSH_STEPS } from './plan.js';
import { scanPlan, type PlannedAccount, type PlanScan } from './plan-scan.js';
import { sourceOf, stageExport } from './stage.js';

// `push --dry-run`: everything but side effects. Staging changes account states
// (an invalid account found valid again, an errored one with new data, new records reopening a
// done account), so the export is staged into a copy of the ledger, made in a scratch
// directory and thrown away: the real ledger is only read, the service is never called, and
// the plan is decided by the same staging and plan code as a real run.

export interface DryRunInput {
  /** The state directory whose ledger is planned against (it may have none yet). */
  stateDir: string;
  /** A private (0700) directory for the ledger's copy; the caller removes it. */
  scratchDir: string;
  entries: AsyncIterable<ExportEntry> | undefined;
  settings: EngineSettings;
  selection?: { limit?: number | undefined; accounts?: ReadonlySet<string> | undefined } | undefined;
  sink: EventSink;
  onAccount: (row: PlannedAccount) => void;
  signal?: AbortSignal | undefined;
  /** --retry-invalid: accounts the service refused with these codes are planned as staged again. */
  retryInvalid?: readonly string[] | undefined;
}

export interface DryRunResult {
  staged: StageSummary | undefined;
  scan: PlanScan;
}

export async function planDryRun(input: DryRunInput): Promise<DryRunResult> {
  copyLedger(input.stateDir, input.scratchDir);
  const ledger = Ledger.open(input.scratchDir);
  try {
    ledger.forgetRefusedSuppliers();
    ledger.releaseInvalid(input.retryInvalid ?? []);
    const staged =
      input.entries === undefined
        ? undefined
        : await stageExport(ledger, sourceOf(input.entries), input.sink, { signal: input.signal });
    const { settings, selection } = input;
    const options = {
      retryErrored: settings.retryErrored,
      wait: settings.wait,
      steps: settings.steps ?? new Set(PUSH_STEPS),
      transactionFlags: settings.transactionFlags,
      accounts: selection?.accounts,
      limit: selection?.limit,
    };
    return { staged, scan: scanPlan(ledger, options, input.onAccount) };
  } finally {
    ledger.close();
  }
}
