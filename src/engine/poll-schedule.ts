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

/**
 * The first check's delay follows the service's observed processing time: each account's first
 * poll that finds it imported shortens the delay a little (x0.99), each that finds it still in
 * progress lengthens it (x1.09). It settles where about 90% of first polls find the account
 * imported (0.9 x ln 0.99 + 0.1 x ln 1.09 = 0), so most accounts cost one status request and wait
 * about as long as the service takes, not a fixed ladder's first step. The steps are small so
 * that a burst of answers (accounts created together) moves the delay by little.
 */
export class FirstPollTuner {
  /** The schedule the steps read: firstDelayMs moves, the rest is the configured schedule. */
  readonly schedule: PollSchedule;
  readonly #minMs: number;

  constructor(configured: PollSchedule, minMs = 20) {
    this.schedule = { ...configured };
    this.#minMs = Math.min(minMs, configured.firstDelayMs);
  }

  observe(imported: boolean): void {
    const next = this.schedule.firstDelayMs * (imported ? 0.99 : 1.09);
    this.schedule.firstDelayMs = Math.min(this.schedule.maxDelayMs, Math.max(this.#minMs, next));
  }
}

/** Delay before the next check, given how many checks were made already; `random` in [0,1). */
export function nextPollDelay(schedule: PollSchedule, pollsMade: number, random: number): number {
  const base = Math.min(schedule.maxDelayMs, schedule.firstDelayMs * schedule.factor ** Math.max(0, pollsMade));
  const spread = base * schedule.jitter;
  return Math.max(1, Math.round(base - spread / 2 + spread * random));
}

/**
 * Largest imported-accounts list worth reading: the answer is parsed whole (about 500 bytes of
 * memory per entry), so beyond this the run's memory would grow with the supplier's imported
 * accounts (300,000 accounts pushed peaked at 343 MB on one list call near the end, 1,000,000 at
 * 470-625 MB); parked accounts are then checked one by one.
 */
const MAX_LIST_SIZE = 50_000;

/**
 * Whether one call of the imported-accounts list is worth making now: it answers for many
 * parked accounts at once but returns every imported account of the supplier (the list
 * endpoints have no pagination, docs/service.md "Status and list endpoints"), so it is used only while enough
 * accounts wait, the list is not much larger than what it can answer for, and it is small
 * enough to hold in memory.
 */
export function listCheckWorthwhile(parked: number, lastListSize: number, minParked = 32, maxRatio = 50): boolean {
  return parked >= minParked && lastListSize <= parked * maxRatio && lastListSize <= MAX_LIST_SIZE;
}
