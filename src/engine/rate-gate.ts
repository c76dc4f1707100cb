/**
 * A request-rate cap (--rate): at most `perSecond` requests start in any one-second window,
 * spaced evenly (a token bucket of one-second capacity). Shared by every request of the run.
 */
export class RateGate {
  readonly #intervalMs: number;
  #nextAt = 0;

  constructor(perSecond: number) {
    this.#intervalMs = 1000 / perSecond;
  }

  /** Resolves when the next request may start. */
  async take(now: () => number = Date.now): Promise<void> {
    const at = Math.max(now(), this.#nextAt);
    this.#nextAt = at + this.#intervalMs;
    const wait = at - now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
  }
}
