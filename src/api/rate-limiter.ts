// The client's one gate for requests (issue 3 "A shared rate limiter"): at most `limit` requests
// in flight, at most `rate` starts per second, and a client-wide pause. A 429 halves the
// concurrency limit and caps the rate below what the service accepted in the last second (once
// per window: answers to requests started before the last cut carry no news), and pauses every start for the Retry-After; both recover slowly (AIMD, as
// TCP does; octokit's throttling pauses the whole client the same way). The spec publishes no
// rate limit ("Limits: not shown"), so the client learns it from the 429s.

export interface Clock {
  now(): number;
}

export type Sleep = (ms: number) => Promise<void>;

export interface LimiterOptions {
  /** The configured concurrency: the ceiling the limit never exceeds. */
  concurrency: number;
  /** The configured cap of request starts per second; undefined = none. */
  maxRequestsPerSecond?: number | undefined;
  /** Time between recovery steps (+1 concurrency, rate x1.25) after the last 429. */
  recoveryIntervalMs?: number;
  /** Whole-client pause after a 429 that gave no Retry-After. */
  pauseWithoutHintMs?: number;
  clock: Clock;
  sleep: Sleep;
  onChange?: (change: LimitChange) => void;
}

export interface LimitChange {
  reason: 'rate_limited' | 'recovered';
  concurrencyLimit: number;
  previousConcurrencyLimit: number;
  /** Current cap of starts per second (Infinity = none). */
  rateLimit: number;
  pausedUntil: number;
}

export interface LimiterSnapshot {
  concurrencyLimit: number;
  maxConcurrency: number;
  inFlight: number;
  queued: number;
  rateLimit: number;
  pausedUntil: number;
}

/** Handed out by acquire(); give it back to release(). */
export interface Ticket {
  readonly startedAt: number;
  /** How many cuts had happened when it started. */
  readonly generation: number;
}

export type ReleaseSignal = 'success' | 'rate_limited' | 'failure';

const BUCKET_MS = 100;
/** After a 429 the rate cap goes to this share of the accepted rate. */
const RATE_CUT = 0.7;
const BUCKETS = 10;

export class AdaptiveLimiter {
  readonly #max: number;
  readonly #configuredRate: number;
  readonly #recoveryMs: number;
  readonly #pauseWithoutHintMs: number;
  readonly #clock: Clock;
  readonly #sleep: Sleep;
  readonly #onChange: ((change: LimitChange) => void) | undefined;
  readonly #queue: Array<(ticket: Ticket) => void> = [];
  readonly #bucketAt = new Array<number>(BUCKETS).fill(-1);
  readonly #bucketCount = new Array<number>(BUCKETS).fill(0);
  #limit: number;
  #rate: number;
  #inFlight = 0;
  #pausedUntil = 0;
  #nextStartAt = 0;
  #generation = 0;
  #lastStepAt = Number.NEGATIVE_INFINITY;
  #waking = false;

  constructor(options: LimiterOptions) {
    this.#max = options.concurrency;
    this.#limit = options.concurrency;
    this.#configuredRate = options.maxRequestsPerSecond ?? Number.POSITIVE_INFINITY;
    this.#rate = this.#configuredRate;
    this.#recoveryMs = options.recoveryIntervalMs ?? 2000;
    this.#pauseWithoutHintMs = options.pauseWithoutHintMs ?? 1000;
    this.#clock = options.clock;
    this.#sleep = options.sleep;
    this.#onChange = options.onChange;
  }

  /** Resolves when this request may start; FIFO. */
  acquire(): Promise<Ticket> {
    return new Promise((resolve) => {
      this.#queue.push(resolve);
      this.#pump();
    });
  }

  release(ticket: Ticket, signal: ReleaseSignal, retryAfterMs?: number): void {
    this.#inFlight -= 1;
    const now = this.#clock.now();
    if (signal === 'rate_limited') this.#onRateLimited(ticket, now, retryAfterMs);
    else if (signal === 'success') {
      this.#countSuccess(now);
      this.#maybeRecover(now);
    }
    this.#pump();
  }

  snapshot(): LimiterSnapshot {
    return {
      concurrencyLimit: this.#limit,
      maxConcurrency: this.#max,
      inFlight: this.#inFlight,
      queued: this.#queue.length,
      rateLimit: this.#rate,
      pausedUntil: this.#pausedUntil,
    };
  }

  #pump(): void {
    while (this.#queue.length > 0 && this.#inFlight < this.#limit) {
      const now = this.#clock.now();
      const readyAt = Math.max(this.#pausedUntil, this.#nextStartAt);
      if (readyAt > now) {
        this.#wakeIn(readyAt - now);
        return;
      }
      const resolve = this.#queue.shift() as (ticket: Ticket) => void;
      this.#inFlight += 1;
      if (Number.isFinite(this.#rate)) this.#nextStartAt = Math.max(this.#nextStartAt, now) + 1000 / this.#rate;
      resolve({ startedAt: now, generation: this.#generation });
    }
  }

  #wakeIn(ms: number): void {
    if (this.#waking) return;
    this.#waking = true;
    void this.#sleep(ms).then(() => {
      this.#waking = false;
      this.#pump();
    });
  }

  #onRateLimited(ticket: Ticket, now: number, retryAfterMs: number | undefined): void {
    this.#pausedUntil = Math.max(this.#pausedUntil, now + (retryAfterMs ?? this.#pauseWithoutHintMs));
    // One cut per window: requests started before the last cut were sent at the old pace.
    if (ticket.generation < this.#generation) return;
    const previous = this.#limit;
    this.#limit = Math.max(1, Math.floor(this.#limit / 2));
    // What the service accepted in the last second is its capacity now; go below it. Without
    // successes to measure, allow as many starts per second as the new concurrency limit.
    const accepted = this.#acceptedRate(now);
    this.#rate = accepted > 0 ? Math.max(1, Math.min(this.#rate, accepted * RATE_CUT)) : Math.min(this.#rate, Math.max(1, this.#limit));
    this.#generation += 1;
    this.#lastStepAt = now;
    this.#emit('rate_limited', previous);
  }

  #maybeRecover(now: number): void {
    if (now - this.#lastStepAt < this.#recoveryMs) return;
    if (this.#limit >= this.#max && this.#rate >= this.#configuredRate) return;
    const previous = this.#limit;
    this.#limit = Math.min(this.#max, this.#limit + 1);
    this.#rate *= 1.25;
    // Once the cap is well above what is being sent it binds nothing: back to the configured one.
    if (this.#rate >= this.#configuredRate || this.#rate > 2 * this.#acceptedRate(now) + 1) this.#rate = this.#configuredRate;
    this.#lastStepAt = now;
    this.#emit('recovered', previous);
  }

  #emit(reason: LimitChange['reason'], previous: number): void {
    this.#onChange?.({
      reason,
      concurrencyLimit: this.#limit,
      previousConcurrencyLimit: previous,
      rateLimit: this.#rate,
      pausedUntil: this.#pausedUntil,
    });
  }

  #countSuccess(now: number): void {
    const slot = Math.floor(now / BUCKET_MS);
    const index = slot % BUCKETS;
    if (this.#bucketAt[index] !== slot) {
      this.#bucketAt[index] = slot;
      this.#bucketCount[index] = 0;
    }
    this.#bucketCount[index] = (this.#bucketCount[index] ?? 0) + 1;
  }

  /** Successful requests per second over the last second. */
  #acceptedRate(now: number): number {
    const slot = Math.floor(now / BUCKET_MS);
    let total = 0;
    for (let index = 0; index < BUCKETS; index += 1) {
      const at = this.#bucketAt[index] ?? -1;
      if (at > slot - BUCKETS && at <= slot) total += this.#bucketCount[index] ?? 0;
    }
    return total * (1000 / (BUCKET_MS * BUCKETS));
  }
}
