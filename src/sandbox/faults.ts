import type { FaultOptions } from './options.js';
import { hashShare, seededStream } from './random.js';

// Injected failures, each drawn from a seeded stream so a run is reproducible (docs/sandbox.md).
// One draw per request picks at most one fault; a separate stream draws the jitter,
// so turning jitter on does not change which requests fail.

export type InjectedFault = 'drop' | 'rate_limit' | 'server_error' | 'ambiguous' | 'html';
/** What the request log records: an injected fault, or the real rate limit (`max_rps`). */
export type FaultName = InjectedFault | 'max_rps' | 'lost_answer' | 'trickle' | 'lost_create';

export class FaultInjector {
  #options: FaultOptions;
  readonly #faultDraw: () => number;
  readonly #jitterDraw: () => number;
  readonly #limiter: RateLimiter;
  readonly #seed: number;
  /** Pairs whose create was lost once (lostCreateOnce). */
  readonly #lostCreates = new Set<string>();

  constructor(options: FaultOptions, seed: number) {
    this.#seed = seed;
    this.#options = { ...options };
    this.#faultDraw = seededStream(seed ^ 0x5eed0001);
    this.#jitterDraw = seededStream(seed ^ 0x5eed0002);
    this.#limiter = new RateLimiter(options.maxRps);
  }

  get options(): Readonly<FaultOptions> {
    return this.#options;
  }

  /** Changes fault settings at run time (control); the seeded streams continue. */
  update(changes: Partial<FaultOptions>): void {
    this.#options = { ...this.#options, ...changes };
    if (changes.maxRps !== undefined) this.#limiter.setRate(changes.maxRps);
  }

  delayMs(): number {
    const { latencyMs, jitterMs } = this.#options;
    return latencyMs + (jitterMs > 0 ? this.#jitterDraw() * jitterMs : 0);
  }

  /** Seconds to wait when the real rate limit (--max-rps) is exceeded now, else undefined. */
  throttle(now: number): number | undefined {
    return this.#limiter.take(now);
  }

  /**
   * Whether this create of the pair, accepted, is answered 201 and lost (no import process scheduled): the accounts
   * are a share fixed by the seed and the pair, so the choice does not depend on the order requests arrive in.
   */
  losesCreate(supplier: string, externalAccountNumber: string): boolean {
    const { lostCreateShare, lostCreateOnce } = this.#options;
    if (
      lostCreateShare <= 0 ||
      hashShare(this.#seed, 'lost-create', supplier, externalAccountNumber) >= lostCreateShare
    )
      return false;
    const pair = `${supplier}\u0000${externalAccountNumber}`;
    if (lostCreateOnce && this.#lostCreates.has(pair)) return false;
    this.#lostCreates.add(pair);
    return true;
  }

  draw(): InjectedFault | undefined {
    const { dropRate, rateLimitRate, failRate, ambiguousRate, htmlRate } = this.#options;
    if (dropRate + rateLimitRate + failRate + ambiguousRate + htmlRate <= 0) return undefined;
    const value = this.#faultDraw();
    // The faults share the unit interval in this order, each taking its rate's width (a new one goes last, so that a
    // seed keeps failing the same requests with the others).
    const upper = [dropRate, dropRate + rateLimitRate, dropRate + rateLimitRate + failRate];
    if (value < upper[0]!) return 'drop';
    if (value < upper[1]!) return 'rate_limit';
    if (value < upper[2]!) return 'server_error';
    if (value < upper[2]! + ambiguousRate) return 'ambiguous';
    if (value < upper[2]! + ambiguousRate + htmlRate) return 'html';
    return undefined;
  }
}

/** A token bucket holding one second of requests; 0 = no limit. */
export class RateLimiter {
  #rate: number;
  #tokens: number;
  #last = -Infinity;

  constructor(perSecond: number) {
    this.#rate = perSecond;
    this.#tokens = perSecond;
  }

  setRate(perSecond: number): void {
    this.#rate = perSecond;
    this.#tokens = Math.min(this.#tokens, perSecond);
  }

  /** Takes a token; returns undefined if one was free, else the whole seconds until one is. */
  take(now: number): number | undefined {
    if (this.#rate <= 0) return undefined;
    if (this.#last !== -Infinity)
      this.#tokens = Math.min(this.#rate, this.#tokens + ((now - this.#last) / 1000) * this.#rate);
    else this.#tokens = this.#rate;
    this.#last = now;
    if (this.#tokens >= 1) {
      this.#tokens -= 1;
      return undefined;
    }
    return Math.max(1, Math.ceil((1 - this.#tokens) / this.#rate));
  }
}
