// The client's one gate for requests (docs/api-client.md, Pace): at most `limit` requests
// in flight, at most the configured starts per second, and a client-wide pause. A 429 halves the
// concurrency limit (once per window: answers to requests started before the last cut carry no
// news) and pauses every start for the Retry-After (octokit's throttling pauses the whole client
// the same way); the limit recovers by one per interval without 429s (AIMD, as TCP does). The
// spec publishes no rate limit ("Limits: not shown"), so the client learns it from the 429s.
// The rate itself is not adapted: injected or sporadic 429s would starve it, and the pause plus
// the smaller concurrency already bring the pace under what the service accepts.

export interface Clock {
  now(): number;
}

/** Resolves after `ms`, or at once when `signal` aborts (so that no timer outlives a stopped run). */
export type Sleep = (ms: number, signal?: AbortSignal) => Promise<void>;

export interface LimiterOptions {
  /** The configured concurrency: the ceiling the limit never exceeds. */
  concurrency: number;
  /** The configured cap of request starts per second; undefined = none. */
  maxRequestsPerSecond?: number | undefined;
  /** Time between recovery steps (+1 concurrency) after the last 429. */
  recoveryIntervalMs?: number;
  /** Whole-client pause after a 429 that gave no Retry-After. */
  pauseWithoutHintMs?: number;
  clock: Clock;
  sleep: Sleep;
  onChange?: (change: LimitChange) => void;
  /**
   * Ends every wait (the run stopped, or the client closed): requests waiting for a slot or for a pause to end are
   * refused at once (acquire rejects with LimiterStoppedError), and so is any later acquire.
   */
  signal?: AbortSignal | undefined;
}

/** acquire() after the limiter's signal aborted: the request was never started. */
export class LimiterStoppedError extends Error {
  constructor() {
    super('the client stopped taking requests');
    this.name = 'LimiterStoppedError';
  }
}

export interface LimitChange {
  reason: 'rate_limited' | 'recovered';
  concurrencyLimit: number;
  previousConcurrencyLimit: number;
  /** Epoch ms until which no request starts. */
  pausedUntil: number;
}

export interface LimiterSnapshot {
  concurrencyLimit: number;
  maxConcurrency: number;
  inFlight: number;
  queued: number;
  /** The configured cap of starts per second, or null for none. */
  maxRequestsPerSecond: number | null;
  pausedUntil: number;
}

/** Handed out by acquire(); give it back to release(). */
export interface Ticket {
  readonly startedAt: number;
  /** How many cuts had happened when it started. */
  readonly generation: number;
}

export type ReleaseSignal = 'success' | 'rate_limited' | 'failure';

export class AdaptiveLimiter {
  readonly #max: number;
  readonly #intervalMs: number;
  readonly #recoveryMs: number;
  readonly #pauseWithoutHintMs: number;
  readonly #clock: Clock;
  readonly #sleep: Sleep;
  readonly #onChange: ((change: LimitChange) => void) | undefined;
  readonly #queue: Array<{ resolve: (ticket: Ticket) => void; reject: (error: Error) => void }> = [];
  readonly #signal: AbortSignal | undefined;
  readonly #rate: number | undefined;
  #limit: number;
  #inFlight = 0;
  #pausedUntil = 0;
  #nextStartAt = 0;
  #generation = 0;
  #lastStepAt = Number.NEGATIVE_INFINITY;
  #waking = false;

  constructor(options: LimiterOptions) {
    this.#max = options.concurrency;
    this.#limit = options.concurrency;
    this.#rate = options.maxRequestsPerSecond;
    this.#intervalMs = options.maxRequestsPerSecond === undefined ? 0 : 1000 / options.maxRequestsPerSecond;
    this.#recoveryMs = options.recoveryIntervalMs ?? 2000;
    this.#pauseWithoutHintMs = options.pauseWithoutHintMs ?? 1000;
    this.#clock = options.clock;
    this.#sleep = options.sleep;
    this.#onChange = options.onChange;
    this.#signal = options.signal;
    this.#signal?.addEventListener('abort', () => this.#refuseAll(), { once: true });
  }

  /** Resolves when this request may start; FIFO. Rejects with LimiterStoppedError once the signal has aborted. */
  acquire(): Promise<Ticket> {
    if (this.#signal?.aborted) return Promise.reject(new LimiterStoppedError());
    return new Promise((resolve, reject) => {
      this.#queue.push({ resolve, reject });
      this.#pump();
    });
  }

  release(ticket: Ticket, signal: ReleaseSignal, retryAfterMs?: number): void {
    this.#inFlight -= 1;
    const now = this.#clock.now();
    if (signal === 'rate_limited') this.#onRateLimited(ticket, now, retryAfterMs);
    else if (signal === 'success') this.#maybeRecover(now);
    this.#pump();
  }

  snapshot(): LimiterSnapshot {
    return {
      concurrencyLimit: this.#limit,
      maxConcurrency: this.#max,
      inFlight: this.#inFlight,
      queued: this.#queue.length,
      maxRequestsPerSecond: this.#rate ?? null,
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
      const { resolve } = this.#queue.shift() as { resolve: (ticket: Ticket) => void };
      this.#inFlight += 1;
      // Strict spacing (a token bucket of one): a late timer is not made up for, so no burst ever exceeds the cap.
      if (this.#intervalMs > 0) this.#nextStartAt = Math.max(this.#nextStartAt, now) + this.#intervalMs;
      resolve({ startedAt: now, generation: this.#generation });
    }
  }

  #wakeIn(ms: number): void {
    if (this.#waking || this.#signal?.aborted) return;
    this.#waking = true;
    void this.#sleep(ms, this.#signal).then(() => {
      this.#waking = false;
      this.#pump();
    });
  }

  #refuseAll(): void {
    for (const waiter of this.#queue.splice(0)) waiter.reject(new LimiterStoppedError());
  }

  #onRateLimited(ticket: Ticket, now: number, retryAfterMs: number | undefined): void {
    this.#pausedUntil = Math.max(this.#pausedUntil, now + (retryAfterMs ?? this.#pauseWithoutHintMs));
    // One cut per window: requests started before the last cut were sent at the old pace.
    if (ticket.generation < this.#generation) return;
    const previous = this.#limit;
    this.#limit = Math.max(1, Math.floor(this.#limit / 2));
    this.#generation += 1;
    this.#lastStepAt = now;
    this.#emit('rate_limited', previous);
  }

  #maybeRecover(now: number): void {
    if (this.#limit >= this.#max || now - this.#lastStepAt < this.#recoveryMs) return;
    const previous = this.#limit;
    this.#limit += 1;
    this.#lastStepAt = now;
    this.#emit('recovered', previous);
  }

  #emit(reason: LimitChange['reason'], previous: number): void {
    this.#onChange?.({
      reason,
      concurrencyLimit: this.#limit,
      previousConcurrencyLimit: previous,
      pausedUntil: this.#pausedUntil,
    });
  }
}
