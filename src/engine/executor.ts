import PQueue from 'p-queue';
import type { ImportServiceClient } from '../api/types.js';
import type { AccountCursor, AccountRow, Ledger } from '../ledger/index.js';
import { checkStatus, createAccount, resolveAccount, applyTransition } from './account-steps.js';
import type { EngineSettings, StepContext } from './context.js';
import { ErrorBudget } from './error-budget.js';
import type { EventSink, StopReason } from './events.js';
import { EngineCode } from './engine-codes.js';
import { classifyFailure, StopRun, storageFailure, type Failure } from './failure.js';
import type { Selection } from './selection.js';
import { StagingGate } from './staging-gate.js';
import { ImportedListChecks } from './imported-list.js';
import { pushItems } from './item-steps.js';
import { FirstPollTuner, nextLookAt, pollerWaitMs } from './poll-schedule.js';
import { STATE_FACTS, workableStates } from './account-states.js';
import { afterListedImported } from './transitions.js';
import { monotonicNow } from '../clock.js';

export interface ExecuteResult {
  reason: StopReason;
  fatal?: Failure;
}

const PRIORITY = { create: 0, resolve: 0, poll: 1, list: 2 } as const;
/** Creates of one account in one chain whose answers were lost and reconciled as not received; then the next run. */
const MAX_CREATES_PER_CHAIN = 5;

/**
 * Runs the per-account state machine over the ledger: a pump pulls workable accounts page by
 * page (keyset paging) into a p-queue whose concurrency bounds the requests in flight, waiting
 * on onSizeLessThan so that memory stays flat (back-pressure); a poller takes scheduled
 * accounts whose check is due. A task makes one request at a time, so the queue's concurrency
 * is the number of requests in flight. No task waits for processing: a scheduled account
 * leaves the queue and is parked in the ledger with its next check time.
 */
export class Executor {
  readonly #ledger: Ledger;
  readonly #settings: EngineSettings;
  readonly #queue: PQueue;
  readonly #active = new Set<number>();
  /**
   * Accounts whose work ended since the pump read its page: their rows in that page may be stale (a page is walked
   * over many turns of the event loop, and a row read as staged may have been created meanwhile).
   */
  readonly #releasedSincePage = new Set<number>();
  readonly #ctx: StepContext;
  #stop: { reason: StopReason; fatal?: Failure } | undefined;
  #consecutiveFailures = 0;
  /** Accounts whose create was lost (import_process_lost) and sent again in this run. */
  readonly #lostCreates = new Set<number>();
  #lastProgressAt = monotonicNow();
  /** Status checks of many parked accounts in one imported-accounts list call. */
  readonly #list: ImportedListChecks;
  /** The pump has handed out every account to create: nothing is left but parked accounts and their records. */
  #pumpDone = false;
  #wake: (() => void) | undefined;
  /** --limit / --accounts: the only accounts this run touches (undefined: every account). */
  readonly #selection: Selection | undefined;
  readonly #budget: ErrorBudget | undefined;
  /** Accounts staging has passed in this run: the only ones work is taken on (staging-gate.ts). */
  readonly #gate: StagingGate;
  /** Resolves when stop() is called: waits on staging end with it. */
  readonly #stopped: Promise<void>;
  #onStop: () => void = () => undefined;

  constructor(
    ledger: Ledger,
    client: ImportServiceClient,
    settings: EngineSettings,
    sink: EventSink,
    options: { selection?: Selection | undefined; maxErrors?: number | undefined; gate?: StagingGate } = {},
  ) {
    const { selection, maxErrors } = options;
    this.#gate = options.gate ?? StagingGate.open();
    this.#stopped = new Promise((resolve) => {
      this.#onStop = resolve;
    });
    this.#ledger = ledger;
    this.#settings = settings;
    this.#selection = selection;
    this.#budget = maxErrors === undefined ? undefined : new ErrorBudget(maxErrors);
    this.#queue = new PQueue({ concurrency: settings.concurrency });
    const counting: EventSink = {
      emit: (event) => {
        sink.emit(event);
        this.#budget?.onEvent(event);
        this.#checkBudget();
      },
    };
    const tuner = new FirstPollTuner(settings.pollSchedule);
    this.#ctx = {
      ledger,
      client,
      settings: { ...settings, pollSchedule: tuner.schedule },
      sink: counting,
      now: () => monotonicNow(),
      random: () => Math.random(),
      failed: (failure) => this.#failed(failure),
      succeeded: () => {
        this.#consecutiveFailures = 0;
      },
      stopping: () => this.#stop !== undefined,
      unknownWords: new Set(),
      firstPollAnswered: (imported, latenessMs) => tuner.observe(imported, latenessMs, this.#ctx.now()),
      writeFailed: (error: unknown) => this.stop('fatal', storageFailure(error)),
    };
    this.#list = new ImportedListChecks({
      ctx: this.#ctx,
      gate: this.#gate,
      selection,
      concurrency: settings.concurrency,
      queueCall: (call) => this.#queue.add(call, { priority: PRIORITY.list }),
      isActive: (accountId) => this.#active.has(accountId),
      take: (account, platformAccountNumber) =>
        this.#enqueue(account, PRIORITY.poll, async (row) => {
          const next = await applyTransition(this.#ctx, row, afterListedImported(platformAccountNumber));
          this.#lastProgressAt = monotonicNow();
          return this.#postImport(next);
        }),
      stopFatal: (failure) => this.stop('fatal', failure),
      wake: () => this.#wake?.(),
    });
  }

  /** Asks the run to stop taking work (SIGINT/SIGTERM, or a fatal failure). */
  stop(reason: StopReason, fatal?: Failure, detail?: string): void {
    if (this.#stop !== undefined) return;
    this.#stop = fatal === undefined ? { reason } : { reason, fatal };
    const why = fatal?.detail ?? detail;
    this.#ctx.sink.emit({
      type: 'stopping',
      reason,
      ...(why ? { detail: why } : {}),
      ...(fatal ? { code: fatal.code } : {}),
    });
    this.#queue.clear();
    this.#wake?.();
    this.#onStop();
  }

  async run(): Promise<ExecuteResult> {
    const pumped = this.#pump();
    const polled = this.#poll(pumped);
    await Promise.all([pumped, polled]);
    await this.#drain();
    return this.#stop ?? { reason: 'finished' };
  }

  /** Waits for in-flight work; after a stop request, at most drainMs (their intents stay for the next run). */
  async #drain(): Promise<void> {
    if (this.#stop === undefined) return this.#queue.onIdle();
    let timer: NodeJS.Timeout | undefined;
    const bound = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, this.#settings.drainMs);
    });
    await Promise.race([this.#queue.onIdle(), bound]);
    clearTimeout(timer);
  }

  /**
   * --max-errors exceeded: stop taking new work like an interrupt (in-flight requests finish, the ledger stays
   * consistent).
   */
  #checkBudget(): void {
    if (this.#budget?.exceeded && this.#stop === undefined) this.stop('max_errors', undefined, this.#budget.describe());
  }

  #failed(failure: Failure): void {
    if (failure.class === 'fatal') throw new StopRun(failure);
    // A 413 is answered by smaller requests (item-steps.ts), not the service failing; a record still too large alone
    // is recorded failed, which the budget counts.
    if (failure.class === 'too_large') return;
    this.#budget?.onFailure(failure);
    this.#checkBudget();
    // Not the service failing: a 404 before an account is imported, a request the client would not send, a wait the
    // run's stop ended (docs/api-client.md "Stopping").
    if (failure.class === 'not_found' || failure.class === 'data' || failure.class === 'stopped') return;
    this.#consecutiveFailures += 1;
    this.#ctx.sink.emit({ type: 'retrying', code: failure.code });
    if (this.#consecutiveFailures >= this.#settings.maxConsecutiveFailures) {
      throw new StopRun(consecutiveStop(this.#consecutiveFailures, failure), failure);
    }
  }

  #enqueue(account: AccountRow, priority: number, work: (account: AccountRow) => Promise<AccountRow | void>): void {
    this.#active.add(account.id);
    void this.#queue
      .add(
        async () => {
          if (this.#stop !== undefined) return;
          const last = await work(account);
          if (last) this.#selection?.update(last);
        },
        { priority },
      )
      .catch((error: unknown) => {
        if (error instanceof StopRun) this.stop('fatal', error.failure);
        else this.stop('fatal', classifyFailure(error));
      })
      .finally(() => {
        this.#active.delete(account.id);
        this.#releasedSincePage.add(account.id);
        if (this.#active.size === 0) this.#wake?.();
      });
  }

  /**
   * Pages workable accounts in external account number order, behind staging (the gate): when
   * nothing more has passed yet it waits for staging; a gate that held (entries out of order) starts the pages over
   * when it finishes.
   */
  async #pump(): Promise<void> {
    const states = workableStates(this.#settings.retryErrored);
    let after: AccountCursor | undefined;
    let read = this.#gate.read;
    while (this.#stop === undefined) {
      if (this.#gate.read !== read) [after, read] = [undefined, this.#gate.read];
      const finished = this.#gate.finished;
      const page = this.#ledger.pageAccounts(states, after, this.#settings.pageSize, this.#gate.upTo);
      this.#releasedSincePage.clear();
      if (page.length === 0) {
        if (finished) return;
        await Promise.race([this.#gate.changed(), this.#stopped]);
        continue;
      }
      for (const row of page) {
        after = { number: row.externalAccountNumber, id: row.id };
        if (this.#active.has(row.id) || (this.#selection && !this.#selection.has(row.id))) continue;
        await this.#queue.onSizeLessThan(this.#settings.concurrency);
        if (this.#stop !== undefined) return;
        // The poller may have taken it meanwhile (a creating account with a due check); the gate may have started over.
        if (this.#active.has(row.id) || this.#gate.read !== read) continue;
        // Worked on and let go since the page was read (taken in the pass before the pages started over, or by the
        // poller): its row is read again, or it would be created twice.
        const account = this.#releasedSincePage.has(row.id) ? this.#ledger.currentAccount(row.id) : row;
        if (account === undefined || !states.includes(account.state)) continue;
        // A create lost twice in this run waits for the next run, also when the pages start over.
        if (this.#lostCreates.has(account.id) && account.error?.code === EngineCode.importProcessLost) continue;
        if (account.state === 'staged') this.#gate.took();
        this.#enqueue(account, account.state === 'processed' ? PRIORITY.poll : PRIORITY.create, (row) =>
          this.#advance(row),
        );
      }
    }
  }

  /** Moves one account forward until it is parked (scheduled), finished, or cannot go on in this run. */
  async #advance(start: AccountRow): Promise<AccountRow> {
    let account = start;
    let creates = 0;
    const mayCreate = this.#settings.steps?.has('create') ?? true;
    while (this.#stop === undefined) {
      const before = account.state;
      switch (account.state) {
        case 'errored':
          // Only an account that started this chain errored, with --retry-errored (pump), is created again.
          if (account !== start || !this.#settings.retryErrored || !mayCreate) return account;
          if (creates++ >= MAX_CREATES_PER_CHAIN) return account;
          account = await createAccount(this.#ctx, account);
          break;
        case 'staged':
          if (!mayCreate || creates++ >= MAX_CREATES_PER_CHAIN) return account;
          account = await createAccount(this.#ctx, account);
          break;
        case 'creating':
          account = await checkStatus(this.#ctx, account);
          if (account.state === 'creating') return account;
          break;
        case 'unresolved':
          account = await resolveAccount(this.#ctx, account);
          if (account.state === 'unresolved') return account;
          break;
        case 'processed':
          return this.#postImport(account);
        default:
          return account; // scheduled (parked), invalid, done
      }
      if (account.state !== before) this.#lastProgressAt = monotonicNow();
    }
    return account;
  }

  async #postImport(account: AccountRow): Promise<AccountRow> {
    if ((await pushItems(this.#ctx, account)) !== 'ok') return account;
    const done = await applyTransition(this.#ctx, account, { step: 'done', patch: { state: 'done', error: null } });
    this.#lastProgressAt = monotonicNow();
    return done;
  }

  async #poll(pumped: Promise<void>): Promise<void> {
    void pumped.then(() => {
      this.#pumpDone = true;
      this.#wake?.(); // checks held for the list go now
    });
    while (this.#stop === undefined) {
      const now = monotonicNow();
      const held = this.#takeDueChecks(now);
      const next = this.#nextLookAt(held);
      if (this.#pumpDone && this.#active.size === 0 && this.#queue.size === 0 && next === null) return;
      // --no-wait: the run takes up what is due (accounts earlier runs left waiting, and its own as their checks fall
      // due while it works), and ends once nothing is left to do now: it never waits for processing.
      if (!this.#settings.wait && this.#pumpDone && this.#idle() && (next === null || next > now)) return;
      if (this.#pumpDone && this.#active.size === 0 && now - this.#lastProgressAt > this.#settings.waitTimeoutMs) {
        this.stop('wait_timeout');
        return;
      }
      const delay = pollerWaitMs(now, next);
      await new Promise<void>((resolve) => {
        this.#wake = resolve;
        setTimeout(resolve, delay);
      });
      this.#wake = undefined;
    }
  }

  /**
   * A create to send again: one that never arrived, or one answered 201 whose import process never appeared
   * (import_process_lost), once per run; lost again, it waits for the next run (retry.csv).
   */
  #sendAgain(account: AccountRow): boolean {
    if (account.error?.code !== EngineCode.importProcessLost) return true;
    if (this.#lostCreates.has(account.id)) return false;
    this.#lostCreates.add(account.id);
    return true;
  }

  /** No account is worked on and no request (a list call included) is queued or in flight. */
  #idle(): boolean {
    return this.#active.size === 0 && this.#queue.size === 0 && this.#queue.pending === 0;
  }

  /** When the poller looks again (poll-schedule.ts nextLookAt); in a filtered run, its selection's next check. */
  #nextLookAt(held: boolean): number | null {
    if (this.#selection) return this.#selection.nextCheckAt();
    return nextLookAt({
      held,
      nextCheckAt: () => this.#ledger.nextCheckAt(),
      nextReconcileAt: () => this.#ledger.nextCheckAt(['creating']),
      nextListCallAt: this.#list.nextCallAt,
    });
  }

  /**
   * Queues the parked accounts whose check is due, and a list call when one is due. Returns true when scheduled checks
   * that are due wait for the next list call (ImportedListChecks.dueBy), with room left for them: nothing but that
   * call, a list answer or a reconcile check changes what the next tick would take.
   */
  #takeDueChecks(now: number): boolean {
    const room = this.#settings.concurrency * 2 - this.#queue.size;
    if (room <= 0) return false;
    const dueBy = this.#list.dueBy(now, this.#pumpDone);
    const limit = room + this.#active.size;
    const due = this.#dueChecks(now, dueBy, limit);
    for (const account of due) {
      if (this.#active.has(account.id)) continue;
      this.#enqueue(account, PRIORITY.poll, async (row) => {
        const next = await checkStatus(this.#ctx, row);
        if (next.state !== row.state) this.#lastProgressAt = monotonicNow();
        // processed: its records; staged: a create that never arrived, sent now.
        if (next.state === 'processed' || (next.state === 'staged' && this.#sendAgain(next)))
          return this.#advance(next);
        return next;
      });
    }
    this.#list.callIfDue(now);
    return this.#selection === undefined && dueBy < now && due.length < limit;
  }

  /**
   * Parked accounts whose status check is due: the ledger's (scheduled ones due by `scheduledDueBy`; creates being
   * reconciled by `now`), or (filtered run) the selection's.
   */
  #dueChecks(now: number, scheduledDueBy: number, limit: number): AccountRow[] {
    if (this.#selection === undefined) return this.#ledger.dueChecks(now, limit, this.#gate.upTo, scheduledDueBy);
    this.#ledger.flush();
    const rows: AccountRow[] = [];
    for (const id of this.#selection.due(now, limit)) {
      const row = this.#ledger.accountById(id);
      if (row !== undefined && STATE_FACTS[row.state].waiting) rows.push(row);
      else if (row !== undefined) this.#selection.update(row); // no longer parked: never due again
    }
    return rows;
  }
}

/**
 * The stop after too many failures in a row, named by the last: a service that answered is not unreachable (its
 * answers were failures, or not the spec's: then the answer is named, docs/api-client.md "Errors").
 */
function consecutiveStop(count: number, last: Failure): Failure {
  const said = `(last: ${last.code}: ${last.detail})`;
  if (last.answered !== true)
    return {
      class: 'fatal',
      code: EngineCode.serviceUnreachable,
      detail: `the service answered none of ${count} requests in a row ${said}`,
    };
  if (last.class === 'unexpected')
    return {
      class: 'fatal',
      code: EngineCode.unexpectedAnswer,
      detail: `the service answered ${count} requests in a row in a way the spec does not describe ${said}`,
    };
  return {
    class: 'fatal',
    code: EngineCode.serviceFailing,
    detail: `the service answered ${count} requests in a row with failures, after retries ${said}`,
  };
}
