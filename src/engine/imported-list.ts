import type { AccountRow } from '../ledger/index.js';
import { call } from './account-steps.js';
import type { StepContext } from './context.js';
import { StopRun, type Failure } from './failure.js';
import { firstPollsSeenByList, listCheckWorthwhile } from './poll-schedule.js';
import type { Selection } from './selection.js';
import type { StagingGate } from './staging-gate.js';

/** At most one imported-accounts list call per interval. */
const LIST_INTERVAL_MS = 1_000;
/** Accounts one list answer may hand to the queue, per request slot. */
const LISTED_PER_SLOT = 32;

/** What the list checks need from the executor. */
export interface ListHost {
  ctx: StepContext;
  gate: StagingGate;
  selection: Selection | undefined;
  /** Request slots (--concurrency). */
  concurrency: number;
  /** Queues the list call itself (one request slot, behind creates and checks). */
  queueCall(call: () => Promise<void>): Promise<void>;
  /** An account being worked on now is not handed out again. */
  isActive(accountId: number): boolean;
  /** A parked account the list names as imported, with its platform account number: its records go next. */
  take(account: AccountRow, platformAccountNumber: string): void;
  stopFatal(failure: Failure): void;
  /** What the list answered changed which checks wait for it: the poller looks again. */
  wake(): void;
}

/**
 * Status checks of many parked accounts in one request: the imported-accounts list names every
 * account of the supplier that is imported, with its platform account number. It has no
 * pagination (docs/service.md "Status and list endpoints"), so it is called at most once a
 * second, one call at a time, and only while it is worth it (listCheckWorthwhile: enough
 * accounts wait, and the list is not much larger than what it answers for). It is read as it
 * arrives, keeping only the parked accounts it names.
 *
 * List first: while the list is worth calling and accounts are still being created (the slots
 * have other work), a scheduled account whose check falls due after the last answered call
 * started waits for the next call (`dueBy`) instead of going alone.
 */
export class ImportedListChecks {
  readonly #host: ListHost;
  #lastCallAt = 0;
  #calling = false;
  /** Size of the last list; before the first call, estimated from the accounts the ledger knows are imported. */
  #lastSize: number | undefined;
  /** When the last answered call started, while the list is worth calling; undefined otherwise. */
  #answeredFrom: number | undefined;

  constructor(host: ListHost) {
    this.#host = host;
  }

  /**
   * Scheduled accounts count as due up to this time: `now`, or, while checks wait for the list,
   * when the last answered call started (the list did not have the accounts due before it).
   * `pumpDone`: nothing is left to create, so every check goes when due and the last accounts
   * are not held back.
   */
  dueBy(now: number, pumpDone: boolean): number {
    return this.#answeredFrom === undefined || pumpDone ? now : Math.min(now, this.#answeredFrom);
  }

  /** When the next call may start (ms since epoch): checks held for the list wait at most until its answer. */
  get nextCallAt(): number {
    return this.#lastCallAt + LIST_INTERVAL_MS;
  }

  /** Starts a call when one is due (one a second, one at a time) and worth making. */
  callIfDue(now: number): void {
    if (now - this.#lastCallAt < LIST_INTERVAL_MS) return;
    this.#lastCallAt = now;
    const { ctx, selection } = this.#host;
    const parked = selection ? selection.countInState('scheduled') : ctx.ledger.countInState('scheduled');
    this.#lastSize ??= ctx.ledger.countInState('done') + ctx.ledger.countInState('processed');
    const worthwhile = listCheckWorthwhile(parked, this.#lastSize);
    if (!worthwhile) this.#answeredFrom = undefined;
    if (this.#calling || !worthwhile) return;
    this.#calling = true;
    void this.#host
      .queueCall(() => this.#callEachSupplier())
      .catch(() => undefined)
      .finally(() => {
        this.#calling = false;
      });
  }

  async #callEachSupplier(): Promise<void> {
    const { ctx } = this.#host;
    for (const supplier of ctx.ledger.scheduledSuppliers()) {
      if (ctx.stopping()) return;
      await this.#callFor(supplier);
      this.#host.wake();
    }
  }

  async #callFor(supplier: string): Promise<void> {
    const { ctx, gate, selection } = this.#host;
    // One ledger lookup per parked account the list names, not per listed account; memory does not grow with the list.
    const parked = ctx.ledger.scheduledAccounts(supplier);
    const startedAt = ctx.now();
    const answer = await call(ctx, () =>
      ctx.client.listImportedAccounts(supplier, () => {
        let size = 0;
        const imported: Array<{ external: string; platform: string }> = [];
        return {
          add: (item) => {
            size += 1;
            if (item.platform_account_number && parked.has(item.external_account_number))
              imported.push({ external: item.external_account_number, platform: item.platform_account_number });
          },
          result: () => ({ size, imported }),
        };
      }),
    ).catch((error: unknown) => {
      if (error instanceof StopRun) this.#host.stopFatal(error.failure);
      return undefined;
    });
    if (answer === undefined || !answer.ok) {
      this.#answeredFrom = undefined; // checks go one by one until a call is answered again
      return;
    }
    this.#lastSize = answer.value.size;
    this.#answeredFrom = startedAt;
    // While checks wait for the list, few first checks are made on time: the answer tells the first check's delay
    // instead.
    const named = new Set(answer.value.imported.map((listed) => listed.external));
    for (const [imported, latenessMs] of firstPollsSeenByList(parked, named, startedAt))
      ctx.firstPollAnswered?.(imported, latenessMs);
    // Bounded (the queue holds what it takes): the rest are picked up by the next call or their own checks.
    let room = this.#host.concurrency * LISTED_PER_SLOT;
    for (const listed of answer.value.imported) {
      if (room <= 0) return;
      const account = ctx.ledger.findAccount(supplier, listed.external);
      if (
        account?.state !== 'scheduled' ||
        !gate.passed(account.externalAccountNumber) ||
        this.#host.isActive(account.id) ||
        (selection && !selection.has(account.id))
      )
        continue;
      room -= 1;
      this.#host.take(account, listed.platform);
    }
  }
}
