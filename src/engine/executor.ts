import PQueue from 'p-queue';
import type { ImportServiceClient } from '../api/types.js';
import type { AccountRow, Ledger } from '../ledger/index.js';
import { checkStatus, createAccount, resolveAccount, applyTransition, call } from './account-steps.js';
import type { EngineSettings, StepContext } from './context.js';
import type { EventSink, StopReason } from './events.js';
import { StopRun, type Failure } from './failure.js';
import { pushItems } from './item-steps.js';
import { listCheckWorthwhile } from './poll-schedule.js';
import { afterListedImported, workableStates } from './transitions.js';

export interface ExecuteResult {
  reason: StopReason;
  fatal?: Failure;
}

const PRIORITY = { create: 0, resolve: 0, poll: 1, list: 2 } as const;
const LIST_INTERVAL_MS = 1_000;
const POLL_TICK_MS = 20;
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
  readonly #ctx: StepContext;
  #stop: { reason: StopReason; fatal?: Failure } | undefined;
  #consecutiveFailures = 0;
  #lastProgressAt = Date.now();
  #lastListAt = 0;
  /** Size of the last imported-accounts list; before the first call, estimated from the ledger's imported accounts. */
  #lastListSize: number | undefined;
  #wake: (() => void) | undefined;

  constructor(ledger: Ledger, client: ImportServiceClient, settings: EngineSettings, sink: EventSink) {
    this.#ledger = ledger;
    this.#settings = settings;
    this.#queue = new PQueue({ concurrency: settings.concurrency });
    this.#ctx = {
      ledger, client, settings, sink,
      now: () => Date.now(),
      random: () => Math.random(),
      failed: (failure) => this.#failed(failure),
      succeeded: () => {
        this.#consecutiveFailures = 0;
      },
      stopping: () => this.#stop !== undefined,
      writeFailed: (error: unknown) => this.stop('fatal', { class: 'fatal', code: 'ledger_write_failed', detail: error instanceof Error ? error.message : String(error) }),
    };
  }

  /** Asks the run to stop taking work (SIGINT/SIGTERM, or a fatal failure). */
  stop(reason: StopReason, fatal?: Failure): void {
    if (this.#stop !== undefined) return;
    this.#stop = fatal === undefined ? { reason } : { reason, fatal };
    this.#ctx.sink.emit({ type: 'stopping', reason, ...(fatal ? { detail: fatal.detail } : {}) });
    this.#queue.clear();
    this.#wake?.();
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

  #failed(failure: Failure): void {
    if (failure.class === 'fatal') throw new StopRun(failure);
    if (failure.class === 'not_found') return;
    this.#consecutiveFailures += 1;
    this.#ctx.sink.emit({ type: 'retrying', code: failure.code });
    if (this.#consecutiveFailures >= this.#settings.maxConsecutiveFailures) {
      throw new StopRun({ class: 'fatal', code: 'service_unreachable', detail: `the service failed ${this.#consecutiveFailures} requests in a row (last: ${failure.code}: ${failure.detail})` });
    }
  }

  #enqueue(account: AccountRow, priority: number, work: (account: AccountRow) => Promise<AccountRow | void>): void {
    this.#active.add(account.id);
    void this.#queue
      .add(async () => {
        if (this.#stop !== undefined) return;
        await work(account);
      }, { priority })
      .catch((error: unknown) => {
        if (error instanceof StopRun) this.stop('fatal', error.failure);
        else this.stop('fatal', { class: 'fatal', code: 'internal_error', detail: error instanceof Error ? error.message : String(error) });
      })
      .finally(() => {
        this.#active.delete(account.id);
        if (this.#active.size === 0) this.#wake?.();
      });
  }

  async #pump(): Promise<void> {
    const states = workableStates(this.#settings.retryErrored);
    const filter = this.#settings.accountFilter;
    let afterId = 0;
    while (this.#stop === undefined) {
      const page = this.#ledger.pageAccounts(states, afterId, this.#settings.pageSize);
      if (page.length === 0) return;
      for (const account of page) {
        afterId = account.id;
        if (this.#active.has(account.id) || (filter && !filter(account))) continue;
        await this.#queue.onSizeLessThan(this.#settings.concurrency);
        if (this.#stop !== undefined) return;
        // The poller may have taken it meanwhile (a creating account with a due check).
        if (this.#active.has(account.id)) continue;
        this.#enqueue(account, account.state === 'processed' ? PRIORITY.poll : PRIORITY.create, (row) => this.#advance(row));
      }
    }
  }

  /** Moves one account forward until it is parked (scheduled), finished, or cannot go on in this run. */
  async #advance(start: AccountRow): Promise<void> {
    let account = start;
    let creates = 0;
    while (this.#stop === undefined) {
      const before = account.state;
      switch (account.state) {
        case 'errored':
          // Only an account that started this chain errored, with --retry-errored (pump), is created again.
          if (account !== start || !this.#settings.retryErrored) return;
          if (creates++ >= MAX_CREATES_PER_CHAIN) return;
          account = await createAccount(this.#ctx, account);
          break;
        case 'staged':
          if (creates++ >= MAX_CREATES_PER_CHAIN) return;
          account = await createAccount(this.#ctx, account);
          break;
        case 'creating':
          account = await checkStatus(this.#ctx, account);
          if (account.state === 'creating') return;
          break;
        case 'unresolved':
          account = await resolveAccount(this.#ctx, account);
          if (account.state === 'unresolved') return;
          break;
        case 'processed':
          await this.#postImport(account);
          return;
        default:
          return; // scheduled (parked), invalid, done
      }
      if (account.state !== before) this.#lastProgressAt = Date.now();
    }
  }

  async #postImport(account: AccountRow): Promise<void> {
    if ((await pushItems(this.#ctx, account)) === 'blocked') return;
    await applyTransition(this.#ctx, account, { step: 'done', patch: { state: 'done', error: null } });
    this.#lastProgressAt = Date.now();
  }

  async #poll(pumped: Promise<void>): Promise<void> {
    let pumpDone = false;
    void pumped.then(() => {
      pumpDone = true;
    });
    while (this.#stop === undefined) {
      const now = Date.now();
      if (this.#settings.wait) this.#takeDueChecks(now);
      const next = this.#settings.wait ? this.#ledger.nextCheckAt() : null;
      if (pumpDone && this.#active.size === 0 && this.#queue.size === 0 && next === null) return;
      if (pumpDone && this.#active.size === 0 && now - this.#lastProgressAt > this.#settings.waitTimeoutMs) {
        this.stop('wait_timeout');
        return;
      }
      // At least POLL_TICK_MS between ticks: a tick queries the ledger, and tasks finish thousands of times a second.
      const delay = next === null ? 250 : Math.min(250, Math.max(POLL_TICK_MS, next - now));
      await new Promise<void>((resolve) => {
        this.#wake = resolve;
        setTimeout(resolve, delay);
      });
      this.#wake = undefined;
    }
  }

  #takeDueChecks(now: number): void {
    const room = this.#settings.concurrency * 2 - this.#queue.size;
    if (room <= 0) return;
    for (const account of this.#ledger.dueChecks(now, room + this.#active.size)) {
      if (this.#active.has(account.id)) continue;
      this.#enqueue(account, PRIORITY.poll, async (row) => {
        const next = await checkStatus(this.#ctx, row);
        if (next.state !== row.state) this.#lastProgressAt = Date.now();
        // processed: its records; staged: a create that never arrived, sent now.
        if (next.state === 'processed' || next.state === 'staged') await this.#advance(next);
      });
    }
    if (now - this.#lastListAt >= LIST_INTERVAL_MS) {
      this.#lastListAt = now;
      const parked = this.#ledger.countInState('scheduled');
      // The list has no pagination: before the first call, estimate its size from what the ledger knows is imported.
      this.#lastListSize ??= this.#ledger.countInState('done') + this.#ledger.countInState('processed');
      if (listCheckWorthwhile(parked, this.#lastListSize)) void this.#queue.add(() => this.#listImported(), { priority: PRIORITY.list }).catch(() => undefined);
    }
  }

  /** One imported-accounts list call per supplier learns many completions at once. */
  async #listImported(): Promise<void> {
    for (const supplier of this.#ledger.scheduledSuppliers()) {
      if (this.#stop !== undefined) return;
      const answer = await call(this.#ctx, () => this.#ctx.client.listImportedAccounts(supplier)).catch((error: unknown) => {
        if (error instanceof StopRun) this.stop('fatal', error.failure);
        return undefined;
      });
      if (answer === undefined || !answer.ok) continue;
      this.#lastListSize = answer.value.length;
      // Filtered in memory against the parked accounts: one ledger lookup per match, not per listed account.
      const parked = this.#ledger.scheduledNumbers(supplier);
      // Bounded: the rest are picked up by the next list call or their own status checks.
      let room = this.#settings.concurrency * 4;
      for (const listed of answer.value) {
        if (room <= 0) return;
        if (!listed.platform_account_number || !parked.has(listed.external_account_number)) continue;
        const account = this.#ledger.findAccount(supplier, listed.external_account_number);
        if (account?.state !== 'scheduled' || this.#active.has(account.id)) continue;
        room -= 1;
        this.#enqueue(account, PRIORITY.poll, async (row) => {
          const next = await applyTransition(this.#ctx, row, afterListedImported(listed.platform_account_number ?? ''));
          this.#lastProgressAt = Date.now();
          await this.#postImport(next);
        });
      }
    }
  }
}
