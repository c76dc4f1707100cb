import type { PlannedAccount, PlanReason, PlanTotals, RequestKind, StageSummary } from '../../engine/index.js';
import { planDryRun, PLAN_REASONS, REQUEST_KINDS } from '../../engine/index.js';
import type { DryRunInput } from '../../engine/dry-run.js';
import { snakeCaseKeys } from './json-keys.js';

// The plan printed by `push --dry-run`: requests per step, and why each account is or
// is not in the plan. Plain text keeps a few account numbers per reason; --json has every account.

const REQUEST_LABELS: Record<RequestKind, string> = {
  create: 'account creates',
  status_check: 'status checks (v2/v1, at least)',
  note: 'notes requests',
  transaction: 'transactions requests',
  statement: 'statements requests',
  payment_instruction: 'payment instruction requests',
};

/** One --json row: keyed by external account number, never by row position. */
export function planRow(row: PlannedAccount): Record<string, unknown> {
  return {
    external_account_number: row.externalAccountNumber,
    import_supplier: row.importSupplier,
    state: row.state,
    in_plan: row.plan.inPlan,
    reason: row.plan.reason,
    why: PLAN_REASONS[row.plan.reason],
    ...(row.errorCode ? { error_code: row.errorCode } : {}),
    requests: row.plan.requests,
    records: row.plan.records,
  };
}

/** Collects a few account numbers per reason for the text output. */
export class PlanSamples {
  readonly #samples = new Map<PlanReason, string[]>();
  readonly #max: number;

  constructor(max = 10) {
    this.#max = max;
  }

  add(row: PlannedAccount): void {
    const list = this.#samples.get(row.plan.reason) ?? [];
    if (list.length < this.#max) list.push(row.externalAccountNumber);
    this.#samples.set(row.plan.reason, list);
  }

  of(reason: PlanReason): string[] {
    return this.#samples.get(reason) ?? [];
  }
}

export interface PlanReport {
  stateDir: string;
  staged: StageSummary | undefined;
  totals: PlanTotals;
  unknownAccounts: string[];
}

export function renderPlan(report: PlanReport, samples: PlanSamples): string {
  const { totals } = report;
  const lines = ['', 'push --dry-run: the plan. Nothing was sent and the ledger was not changed.'];
  if (report.staged)
    lines.push(
      `  export: ${report.staged.accounts} accounts (${report.staged.invalid} invalid), ${report.staged.orphans} ` +
        `accounts with records only`,
    );
  lines.push(
    `  accounts in the plan: ${totals.inPlan} of ${totals.accounts} (the ledger with this export staged)`,
    '',
    '  requests (the fewest; retries add more)',
  );
  for (const kind of REQUEST_KINDS) {
    const records = kind === 'create' || kind === 'status_check' ? '' : `  (${totals.records[kind]} records)`;
    lines.push(`    ${REQUEST_LABELS[kind].padEnd(36)}${String(totals.requests[kind]).padStart(9)}${records}`);
  }
  lines.push('', '  accounts by reason');
  for (const [reason, count] of Object.entries(totals.reasons) as Array<[PlanReason, number]>) {
    const shown = samples.of(reason);
    const more = count > shown.length ? ` and ${count - shown.length} more` : '';
    lines.push(
      `    ${String(count).padStart(9)}  ${PLAN_REASONS[reason]}`,
      `               ${shown.join(', ')}${more}`,
    );
  }
  if (report.unknownAccounts.length > 0)
    lines.push(
      '',
      `  --accounts not in the export or the ledger (${report.unknownAccounts.length}): ` +
        `${report.unknownAccounts.slice(0, 20).join(', ')}${report.unknownAccounts.length > 20 ? ', ...' : ''}`,
    );
  lines.push('', `  ledger: ${report.stateDir} (only read)`, '  --json lists every account with its reason.', '');
  return lines.join('\n');
}

/** Maps of the plan whose keys are data (plan reasons, request and record kinds): kept as they are in --json. */
const PLAN_DATA_MAPS: ReadonlySet<string> = new Set(['reasons', 'requests', 'records', 'items']);

/** The --json document of a dry run, streamed: rows in chunks of 1,000, then the totals; keys in snake_case. */
export class PlanJsonWriter {
  readonly #write: (text: string) => void;
  #chunk: string[] = [];
  #rows = 0;

  /** `head`: fields before the plan (the run configuration read and the service's URL). */
  constructor(write: (text: string) => void, head: Record<string, unknown> = {}) {
    this.#write = write;
    const fields = Object.entries(head).map(([key, value]) => `  ${JSON.stringify(key)}: ${JSON.stringify(value)},\n`);
    write(`{\n${fields.join('')}  "dry_run": true,\n  "accounts": [\n`);
  }

  row(row: PlannedAccount): void {
    this.#chunk.push(`${this.#rows === 0 ? '' : ',\n'}    ${JSON.stringify(planRow(row))}`);
    this.#rows += 1;
    if (this.#chunk.length >= 1000) this.#flush();
  }

  end(report: PlanReport): void {
    this.#flush();
    this.#write(`\n  ],${JSON.stringify(snakeCaseKeys(report, PLAN_DATA_MAPS), null, 2).slice(1)}\n`);
  }

  #flush(): void {
    if (this.#chunk.length === 0) return;
    this.#write(this.#chunk.join(''));
    this.#chunk = [];
  }
}

/** Plans the run (engine/dry-run.ts) and prints the plan: every account streamed with --json, else the text. */
export async function printPlan(
  input: Omit<DryRunInput, 'sink' | 'onAccount'>,
  how: { json: boolean; label: string; head?: Record<string, unknown> },
): Promise<void> {
  const samples = new PlanSamples();
  const json = how.json ? new PlanJsonWriter((text) => process.stdout.write(text), how.head) : undefined;
  const result = await planDryRun({
    ...input,
    sink: { emit: () => undefined },
    onAccount: (row) => (json ? json.row(row) : samples.add(row)),
  });
  const { staged, scan } = result;
  const report = { stateDir: how.label, staged, totals: scan.totals, unknownAccounts: scan.unknownAccounts };
  if (json) json.end(report);
  else process.stdout.write(renderPlan(report, samples));
}
