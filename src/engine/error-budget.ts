import type { EngineEvent } from './events.js';
import type { Failure } from './failure.js';

/**
 * --max-errors: how many accounts and records may fail in this run before it stops
 * taking new work. Counted: accounts the service refused (create 400) or the platform ERRORED,
 * records refused or left unknown, and requests whose retries ran out (transient) or whose
 * answer did not match the spec. Not counted: accounts found invalid locally while staging
 * (nothing was tried), and lost answers reconciled with the service. An unexpected answer that
 * also settles its record as unknown or failed at once (a payment instruction; a third send)
 * counts twice: the budget errs on the side of stopping.
 */
export class ErrorBudget {
  readonly #limit: number;
  #count = 0;

  /** `limit`: failures tolerated; the run stops when one more happens. */
  constructor(limit: number) {
    this.#limit = limit;
  }

  get count(): number {
    return this.#count;
  }

  /** True once the budget is exceeded. */
  get exceeded(): boolean {
    return this.#count > this.#limit;
  }

  onEvent(event: EngineEvent): void {
    if (event.type === 'account' && (event.to === 'invalid' || event.to === 'errored')) this.#count += 1;
    if (event.type === 'items') this.#count += event.failed + event.unknown;
  }

  onFailure(failure: Failure): void {
    if (failure.class === 'transient' || failure.class === 'unexpected') this.#count += 1;
  }

  describe(): string {
    return `${this.#count} failures in this run, more than --max-errors allows (${this.#limit})`;
  }
}

/** `N` or `N%` of `work` (accounts and records the run takes on) -> failures tolerated. */
export function errorLimitOf(spec: { count: number } | { percent: number }, work: number): number {
  if ('count' in spec) return spec.count;
  return Math.floor((spec.percent / 100) * work);
}
