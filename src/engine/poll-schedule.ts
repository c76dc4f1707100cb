/**
 * When a scheduled account's import status is checked next. No request slot is held while an
 * account waits (README "Performance"): a scheduled account is parked in the ledger with a
 * due time, and this pure schedule spaces its checks out exponentially so that polling does
 * not dominate the request budget, capped so a completion is noticed within `maxDelayMs`.
 */
export interface PollSchedule {
  /** Delay before the first check after a 201. */
  firstDelayMs: number;
  /** Growth of the delay per check made. */
  factor: number;
  maxDelayMs: number;
  /** Share of the delay randomised (0..1) so that accounts created together do not poll together. */
  jitter: number;
}

export const DEFAULT_POLL_SCHEDULE = {
  firstDelayMs: 500,
  factor: 2,
  maxDelayMs: 30_000,
  jitter: 0.2,
} as const satisfies PollSchedule;

/** Share of first polls that should find the account imported; the rest cost a second poll. */
const TARGET_IMPORTED_SHARE = 0.9;
/** How strongly one interval's share moves the delay: exp(GAIN x (target - share)), within x0.8 to x1.25. */
const GAIN = 1;
/** First polls an interval needs before it moves the delay. */
const MIN_ANSWERS = 5;

/**
 * The first check's delay follows the service's observed processing time: it moves towards the
 * delay at which about 90% of first polls find the account imported, so most accounts cost one
 * status request and wait about as long as the service takes, not a fixed ladder's first step.
 *
 * Answers come in bursts (accounts created together are polled together) and a change of delay
 * shows in the answers only one delay later, so the delay moves once per interval of its own
 * length, on the share of that interval's first polls that found the account imported, by at
 * most x1.25 or x0.8. A check made late (the run was busy) that finds the account imported says
 * nothing about the delay and is not counted; a late one that finds it still in progress is (the
 * service took longer still).
 */
export class FirstPollTuner {
  /** The schedule the steps read: firstDelayMs moves, the rest is the configured schedule. */
  readonly schedule: PollSchedule;
  readonly #minMs: number;
  #interval: { startedAt: number; answers: number; imported: number } | undefined;

  constructor(configured: PollSchedule, minMs = 20) {
    this.schedule = { ...configured };
    this.#minMs = Math.min(minMs, configured.firstDelayMs);
  }

  /** A first poll's answer: `latenessMs` is how long after its due time it was asked. */
  observe(imported: boolean, latenessMs: number, nowMs: number): void {
    const delay = this.schedule.firstDelayMs;
    if (imported && latenessMs > delay / 4) return;
    const interval = (this.#interval ??= { startedAt: nowMs, answers: 0, imported: 0 });
    interval.answers += 1;
    if (imported) interval.imported += 1;
    if (nowMs - interval.startedAt < delay || interval.answers < MIN_ANSWERS) return;
    const share = interval.imported / interval.answers;
    const factor = Math.min(1.25, Math.max(0.8, Math.exp(GAIN * (TARGET_IMPORTED_SHARE - share))));
    this.schedule.firstDelayMs = Math.min(this.schedule.maxDelayMs, Math.max(this.#minMs, delay * factor));
    this.#interval = undefined;
  }
}

/** The longest delay nextPollDelay gives: no check of this schedule is due later than this from now. */
export function longestPollDelay(schedule: PollSchedule): number {
  return Math.ceil(schedule.maxDelayMs * (1 + schedule.jitter / 2));
}

/** Delay before the next check, given how many checks were made already; `random` in [0,1). */
export function nextPollDelay(schedule: PollSchedule, pollsMade: number, random: number): number {
  const base = Math.min(schedule.maxDelayMs, schedule.firstDelayMs * schedule.factor ** Math.max(0, pollsMade));
  const spread = base * schedule.jitter;
  return Math.max(1, Math.round(base - spread / 2 + spread * random));
}

/**
 * Whether one call of the imported-accounts list is worth making now: it answers for many
 * parked accounts at once but returns every imported account of the supplier (the list
 * endpoints have no pagination, docs/service.md "Status and list endpoints"), so it is used only while enough
 * accounts wait and the list is not much larger than what it can answer for. Its size does not bound it otherwise: the
 * list is read as it arrives, keeping only the parked accounts it names.
 */
export function listCheckWorthwhile(parked: number, lastListSize: number, minParked = 32, maxRatio = 50): boolean {
  return parked >= minParked && lastListSize <= parked * maxRatio;
}

/**
 * What an imported-accounts list answer says about the first status check's delay, as first checks would have found it
 * (FirstPollTuner.observe: imported, lateness ms). `parked`: the accounts waiting when the call started (external
 * account number -> when its first check is due, null once checked); `named`: those the list names as imported. An
 * account named before its first check was due would have been found imported by that check; one not named after it
 * was due would not (made late by the difference). The others say nothing: named late, it was imported at some time
 * before; not named early, it may be imported by then.
 */
export function* firstPollsSeenByList(
  parked: ReadonlyMap<string, number | null>,
  named: ReadonlySet<string>,
  startedAt: number,
): Generator<[imported: boolean, latenessMs: number]> {
  for (const [number, firstCheckAt] of parked) {
    if (firstCheckAt === null) continue;
    const due = firstCheckAt <= startedAt;
    if (named.has(number) && !due) yield [true, 0];
    else if (!named.has(number) && due) yield [false, startedAt - firstCheckAt];
  }
}

/** The poller looks at the ledger at most this often: a look queries it, and tasks finish thousands of times a second.
 */
const POLL_TICK_MS = 20;
/** The poller looks at the ledger at least this often, whatever it expects. */
const POLL_IDLE_MS = 250;

/** What the poller knows of the parked accounts when it decides when to look again (the ledger's due times, lazily). */
export interface ParkedChecks {
  /** Scheduled checks that are due wait for the next imported-accounts list call (ImportedListChecks.dueBy). */
  held: boolean;
  /** The next check due of any parked account (ms since epoch), or null when none is parked. */
  nextCheckAt: () => number | null;
  /** The next check due of an account whose create is being reconciled, or null. */
  nextReconcileAt: () => number | null;
  /** When the list may be called next; its answer wakes the poller. */
  nextListCallAt: number;
}

/**
 * When the poller looks again (ms since epoch), or null when nothing is parked: the next check due; while checks that
 * are due wait for the list (`held`), nothing but the list's next call (or its answer) or a reconcile check due sooner
 * changes what a look would take, so it waits for that and does not look every tick.
 */
export function nextLookAt(parked: ParkedChecks): number | null {
  if (!parked.held) return parked.nextCheckAt();
  return Math.min(parked.nextListCallAt, parked.nextReconcileAt() ?? Infinity);
}

/** How long the poller waits before it looks again (it is woken sooner when work finishes or the list answers). */
export function pollerWaitMs(now: number, next: number | null): number {
  return next === null ? POLL_IDLE_MS : Math.min(POLL_IDLE_MS, Math.max(POLL_TICK_MS, next - now));
}
