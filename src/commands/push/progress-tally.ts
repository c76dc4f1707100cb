import type { EngineEvent, EventSink } from '../../engine/index.js';
import { ITEM_KINDS, type ItemKind } from '../../ledger/index.js';
import { monotonicNow } from '../../clock.js';
import { KIND_LABELS } from '../common/labels.js';

/** The steps shown as progress (docs/commands.md, push). */
export const PROGRESS_STEPS = [
  'created',
  'processed',
  'note',
  'transaction',
  'statement',
  'payment_instruction',
] as const;
export type ProgressStep = (typeof PROGRESS_STEPS)[number];

/** The kinds' words (one table, common/labels.ts), the longest shortened to fit the bars' label column. */
export const STEP_LABELS: Record<ProgressStep, string> = {
  created: 'created',
  processed: 'processed',
  ...KIND_LABELS,
  payment_instruction: 'payment instr.',
};

/** Done and total of one measure; `estimated`: the total extrapolates the unread export; `soFar`: it only grows. */
export interface Count {
  done: number;
  total: number;
  estimated: boolean;
  soFar: boolean;
}

/** What the display shows at one moment (progress.ts renders it). */
export interface ProgressView {
  elapsedSeconds: number;
  /** While the export is read: accounts read, and about how many it holds (undefined: not known). */
  reading?: { read: number; of: number | undefined };
  sorting?: string[];
  /** Accounts this run settles: processed (or ERRORED, or refused) when it waits; created with --no-wait. */
  accounts: Count;
  records: Count;
  steps: Record<ProgressStep, Count>;
  /** Accounts settled per second over the last minute; undefined until a few seconds have been seen. */
  ratePerSecond?: number;
  /** Seconds left at that rate; undefined when it cannot be computed (no rate, nothing left, export size unknown). */
  etaSeconds?: number;
  problems: number;
  /** Requests that have waited more than a minute for their answer (a service that takes them and does not answer). */
  unanswered: number;
}

interface Sample {
  at: number;
  settled: number;
  read: number;
}

/** The window rates are measured over, and the least span that gives a rate. */
const RATE_WINDOW_MS = 60_000;
const RATE_MIN_SPAN_MS = 3_000;

const zeros = (): Record<ProgressStep, number> => ({
  created: 0,
  processed: 0,
  note: 0,
  transaction: 0,
  statement: 0,
  payment_instruction: 0,
});

/** Counts per step, fed by engine events; pure bookkeeping shared by the bars, the plain lines and the metrics. */
export class ProgressTally implements EventSink {
  readonly totals = zeros();
  readonly done = zeros();
  failed = 0;
  /** Accounts the service refused at create (400) in this run: settled, with a data error. */
  invalid = 0;
  errored = 0;
  retries = 0;
  staging: { accounts: number; orphans: number } | undefined;
  /** About how many accounts the export holds (export-size.ts); replaced by the real count once staged. */
  exportAccounts: number | undefined;
  /** Set while files not proven in account number order are sorted on disk, before anything is sent. */
  sorting: string[] | undefined;
  /** The whole export is staged. */
  staged = false;
  /** Requests in flight that have waited more than a minute for their answer (set once the client is open). */
  unanswered: () => number = () => 0;
  /** Accounts the ledger held as the run started (a rerun's): the export's accounts among them bring no new work. */
  ledgerAccounts = 0;
  /** Staging ended because the run stopped: the rest of the export was never read. */
  readStopped = false;
  readonly startedAt: number;
  /** Whether the run waits for processing (without --no-wait): what "settled" means. */
  readonly wait: boolean;
  readonly #now: () => number;
  /** The work the run started with (plan); staging adds what the export brings as it is read. */
  readonly #planned = zeros();
  #added: { accounts: number; items: Record<ItemKind, number> } = {
    accounts: 0,
    items: { note: 0, transaction: 0, statement: 0, payment_instruction: 0 },
  };
  /** The furthest staging has read (the work up to there is in `added`). */
  #furthestRead = 0;
  #samples: Sample[] = [];

  constructor(options: { now?: () => number; wait?: boolean } = {}) {
    this.#now = options.now ?? monotonicNow;
    this.wait = options.wait ?? true;
    this.startedAt = this.#now();
    this.#samples.push({ at: this.startedAt, settled: 0, read: 0 });
  }

  emit(event: EngineEvent): void {
    switch (event.type) {
      case 'staging':
      case 'staged':
        this.staging = { accounts: event.accounts, orphans: event.orphans };
        this.#furthestRead = Math.max(this.#furthestRead, event.accounts);
        this.#addStaged(event.added);
        this.sorting = undefined;
        if (event.type === 'staged') this.staged = true;
        if (event.type === 'staged' && event.stopped === true) this.readStopped = true;
        break;
      case 'sorting':
        this.sorting = event.files.map((file) => file.file);
        break;
      case 'plan':
        this.#planned.created = event.toCreate;
        this.#planned.processed = event.toProcess;
        for (const kind of Object.keys(event.items) as ItemKind[]) this.#planned[kind] = event.items[kind];
        // A run that stages first plans afterwards: the ledger's counts include what staging added.
        Object.assign(this.totals, this.#planned);
        break;
      case 'account':
        this.#account(event);
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

  #account(event: Extract<EngineEvent, { type: 'account' }>): void {
    if (event.from === 'creating' && (event.to === 'scheduled' || event.to === 'processed')) this.done.created += 1;
    if (event.to === 'processed' && event.from !== 'unresolved') this.done.processed += 1;
    if (event.to === 'errored') {
      this.errored += 1;
      this.done.processed += 1;
    }
    if (event.to === 'invalid') this.invalid += 1;
  }

  #addStaged(added: { accounts: number; items: Record<ItemKind, number> }): void {
    this.#added = { accounts: added.accounts, items: { ...added.items } };
    this.totals.created = this.#planned.created + added.accounts;
    this.totals.processed = this.#planned.processed + added.accounts;
    for (const kind of ITEM_KINDS) this.totals[kind] = this.#planned[kind] + (added.items[kind] ?? 0);
  }

  /** Accounts this run has settled: processed, ERRORED or refused (with --no-wait: created or refused). */
  get settled(): number {
    return (this.wait ? this.done.processed : this.done.created) + this.invalid;
  }

  /** Only part of the export is read: still reading, or staging ended because the run stopped. */
  #partRead(): boolean {
    return !this.staged || this.readStopped;
  }

  /**
   * About how many accounts of the export a run that stopped while reading it never read (the accounts file's lines
   * less the furthest staging read); 0 once it read the whole export, undefined when the size is not known.
   */
  get neverRead(): number | undefined {
    if (this.staged && !this.readStopped) return 0;
    if (this.exportAccounts === undefined) return undefined;
    return Math.max(0, this.exportAccounts - this.#furthestRead);
  }

  /**
   * Accounts of the export not read yet that bring work, and the work each brings on average; undefined if unknown.
   * On a first run every unread account is new, bringing what each read account brought. On a rerun the accounts the
   * ledger already holds bring none: the new ones are the export's accounts less the ledger's and those added so far,
   * each bringing what the new ones read so far brought (one account each), not extrapolated from the read accounts'
   * work alone (which the ledger mostly had: `created 0/~177` on a rerun of 2,219).
   */
  #unread(): { accounts: number; perAccount: (added: number, accountStep: boolean) => number } | undefined {
    if (!this.#partRead() || this.staging === undefined) return undefined;
    if (this.exportAccounts === undefined || this.#furthestRead === 0) return undefined;
    if (this.ledgerAccounts === 0) {
      const accounts = Math.max(0, this.exportAccounts - this.#furthestRead);
      return { accounts, perAccount: (added) => added / this.#furthestRead };
    }
    const fresh = this.#added.accounts;
    const accounts = Math.max(0, this.exportAccounts - this.ledgerAccounts - fresh);
    return { accounts, perAccount: (added, accountStep) => (accountStep ? 1 : fresh === 0 ? 0 : added / fresh) };
  }

  #count(done: number, known: number, added: number, accountStep: boolean): Count {
    const reading = this.staging !== undefined && this.#partRead();
    const unread = this.#unread();
    if (!reading) return { done, total: Math.max(known, done), estimated: false, soFar: false };
    if (unread === undefined) return { done, total: Math.max(known, done), estimated: false, soFar: true };
    const total = Math.round(known + unread.accounts * unread.perAccount(added, accountStep));
    return { done, total: Math.max(total, done), estimated: unread.accounts > 0, soFar: false };
  }

  /** The display's numbers at `now`; also keeps the sample the rate is measured from. */
  view(now = this.#now()): ProgressView {
    this.#sample(now);
    const steps = Object.fromEntries(
      PROGRESS_STEPS.map((step) => {
        const added = step === 'created' || step === 'processed' ? this.#added.accounts : this.#added.items[step];
        const accountStep = step === 'created' || step === 'processed';
        return [step, this.#count(this.done[step], this.totals[step], added, accountStep)];
      }),
    ) as Record<ProgressStep, Count>;
    const leadKnown = this.wait ? this.totals.processed : this.totals.created;
    const accounts = this.#count(this.settled, leadKnown, this.#added.accounts, true);
    const sum = (pick: (count: Count) => number): number =>
      ITEM_KINDS.reduce((all, kind) => all + pick(steps[kind]), 0);
    const records: Count = {
      done: sum((count) => count.done),
      total: sum((count) => count.total),
      estimated: ITEM_KINDS.some((kind) => steps[kind].estimated),
      soFar: ITEM_KINDS.some((kind) => steps[kind].soFar),
    };
    const rates = this.#rates(now);
    const view: ProgressView = {
      elapsedSeconds: Math.max(0, (now - this.startedAt) / 1000),
      accounts,
      records,
      steps,
      problems: this.invalid + this.errored + this.failed,
      unanswered: this.unanswered(),
    };
    if (this.staging !== undefined && this.#partRead())
      view.reading = { read: this.staging.accounts, of: this.exportAccounts };
    if (this.sorting) view.sorting = this.sorting;
    if (rates !== undefined) view.ratePerSecond = rates.settled;
    // A stopped run has no finish to promise: its last frame keeps its numbers and drops the ETA.
    const eta = this.readStopped ? undefined : this.#eta(accounts, rates);
    if (eta !== undefined) view.etaSeconds = eta;
    return view;
  }

  #sample(now: number): void {
    const last = this.#samples[this.#samples.length - 1];
    if (last !== undefined && now - last.at < 1000) return;
    this.#samples.push({ at: now, settled: this.settled, read: this.#furthestRead });
    // Keep one sample older than the window, so that the rate always spans the whole window.
    while ((this.#samples[1]?.at ?? Infinity) <= now - RATE_WINDOW_MS) this.#samples.shift();
  }

  #rates(now: number): { settled: number; read: number } | undefined {
    const first = this.#samples[0];
    if (first === undefined || now - first.at < RATE_MIN_SPAN_MS) return undefined;
    const seconds = (now - first.at) / 1000;
    return { settled: (this.settled - first.settled) / seconds, read: (this.#furthestRead - first.read) / seconds };
  }

  /**
   * Seconds left: the accounts still to settle at the recent rate, and, while the export is read,
   * no less than the rest of the export takes to read at its own recent pace. None when a part cannot
   * be known (no rate yet, a rate of 0, the export's size unknown, files being sorted before sending).
   */
  #eta(accounts: Count, rates: { settled: number; read: number } | undefined): number | undefined {
    if (rates === undefined || accounts.soFar || this.sorting) return undefined;
    const left = accounts.total - accounts.done;
    if (left <= 0) return undefined;
    if (!(rates.settled > 0)) return undefined;
    let seconds = left / rates.settled;
    const unread = this.#unread()?.accounts ?? 0;
    if (unread > 0) {
      if (!(rates.read > 0)) return undefined;
      seconds = Math.max(seconds, unread / rates.read);
    }
    return Number.isFinite(seconds) ? seconds : undefined;
  }
}
