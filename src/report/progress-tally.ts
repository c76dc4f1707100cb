import type { EngineEvent, EventSink } from '../engine/index.js';
import type { ItemKind } from '../ledger/index.js';

/** The steps shown as progress (README "Commands", push). */
export const PROGRESS_STEPS = [
  'created',
  'processed',
  'note',
  'transaction',
  'statement',
  'payment_instruction',
] as const;
export type ProgressStep = (typeof PROGRESS_STEPS)[number];

export const STEP_LABELS: Record<ProgressStep, string> = {
  created: 'created',
  processed: 'processed',
  note: 'notes',
  transaction: 'transactions',
  statement: 'statements',
  payment_instruction: 'payment instr.',
};

/** Counts per step, fed by engine events; pure bookkeeping shared by the bars and the plain lines. */
export class ProgressTally implements EventSink {
  readonly totals: Record<ProgressStep, number> = {
    created: 0,
    processed: 0,
    note: 0,
    transaction: 0,
    statement: 0,
    payment_instruction: 0,
  };
  readonly done: Record<ProgressStep, number> = {
    created: 0,
    processed: 0,
    note: 0,
    transaction: 0,
    statement: 0,
    payment_instruction: 0,
  };
  failed = 0;
  invalid = 0;
  errored = 0;
  retries = 0;
  staging: { accounts: number; orphans: number } | undefined;
  /** The work the run started with (plan); staging adds what the export brings as it is read. */
  readonly #planned: Record<ProgressStep, number> = { ...this.totals };
  /** Set while the export is read again with files sorted (a file turned out not to be sorted). */
  sorting: string[] | undefined;
  /** The whole export is staged. */
  staged = false;
  readonly startedAt = Date.now();

  emit(event: EngineEvent): void {
    switch (event.type) {
      case 'staging':
      case 'staged':
        this.staging = { accounts: event.accounts, orphans: event.orphans };
        this.#addStaged(event.added);
        this.sorting = undefined;
        if (event.type === 'staged') this.staged = true;
        break;
      case 'sorting':
        this.sorting = event.files.map((file) => file.file);
        break;
      case 'plan':
        this.#planned.created = event.toCreate;
        this.#planned.processed = event.toProcess;
        for (const kind of Object.keys(event.items) as ItemKind[]) this.#planned[kind] = event.items[kind];
        Object.assign(this.totals, this.#planned);
        break;
      case 'account':
        if (event.from === 'creating' && (event.to === 'scheduled' || event.to === 'processed')) this.done.created += 1;
        if (event.to === 'processed' && event.from !== 'unresolved') this.done.processed += 1;
        if (event.to === 'errored') {
          this.errored += 1;
          this.done.processed += 1;
        }
        if (event.to === 'invalid') this.invalid += 1;
        break;
      case 'items':
        this.done[event.kind] += event.done + event.failed + event.unknown;
        this.failed += event.failed + event.unknown;
        break;
      case 'retrying':
        this.retries += 1;
        break;
      default:
        break;
    }
  }

  #addStaged(added: { accounts: number; items: Record<ItemKind, number> }): void {
    this.totals.created = this.#planned.created + added.accounts;
    this.totals.processed = this.#planned.processed + added.accounts;
    for (const kind of Object.keys(added.items) as ItemKind[])
      this.totals[kind] = this.#planned[kind] + added.items[kind];
  }

  /** One plain line: counts per step, rate of accounts processed per second, elapsed time. */
  line(now = Date.now()): string {
    const seconds = Math.max(0.001, (now - this.startedAt) / 1000);
    const parts = PROGRESS_STEPS.filter((step) => this.totals[step] > 0 || this.done[step] > 0).map(
      (step) => `${STEP_LABELS[step]} ${this.done[step]}/${this.totals[step]}`,
    );
    const rate = (this.done.processed / seconds).toFixed(1);
    const problems = this.invalid + this.errored + this.failed;
    const reading = this.sorting
      ? `sorting ${this.sorting.join(', ')} (not in account number order) before sending; `
      : this.staging && !this.staged
        ? `reading the export (${this.staging.accounts} accounts so far); `
        : '';
    return (
      `${reading}${parts.join(', ') || 'nothing to do'}; ${rate} accounts/s; ${problems} problems; ` +
      `${Math.round(seconds)}s`
    );
  }
}
