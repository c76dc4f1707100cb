import { describe, expect, it } from 'vitest';
import { AdaptiveLimiter, type LimitChange, type Ticket } from '../../src/api/rate-limiter.js';
import { FakeTime, flush } from './helpers/fake-time.js';

function setup(options: { concurrency: number; maxRequestsPerSecond?: number; recoveryIntervalMs?: number }) {
  const time = new FakeTime();
  const changes: LimitChange[] = [];
  const limiter = new AdaptiveLimiter({
    ...options,
    clock: time.clock,
    sleep: time.sleep,
    onChange: (change) => changes.push(change),
  });
  const started: Ticket[] = [];
  const request = () => limiter.acquire().then((ticket) => started.push(ticket));
  return { time, limiter, started, changes, request };
}

describe('AdaptiveLimiter', () => {
  it('never lets more than the limit in flight, and starts the next in FIFO order on release', async () => {
    const { limiter, started, request } = setup({ concurrency: 3 });
    for (let index = 0; index < 10; index += 1) void request();
    await flush();
    expect(started).toHaveLength(3);
    expect(limiter.snapshot()).toMatchObject({ inFlight: 3, queued: 7, concurrencyLimit: 3 });
    limiter.release(started[0] as Ticket, 'success');
    await flush();
    expect(started).toHaveLength(4);
    expect(limiter.snapshot().inFlight).toBe(3);
  });

  it('spaces starts to the maximum requests per second', async () => {
    const { time, started, request } = setup({ concurrency: 100, maxRequestsPerSecond: 10 });
    for (let index = 0; index < 25; index += 1) void request();
    await flush();
    expect(started).toHaveLength(1);
    await time.advance(1000);
    expect(started).toHaveLength(11);
    await time.advance(1000);
    expect(started).toHaveLength(21);
    const gaps = started.slice(1).map((ticket, index) => ticket.startedAt - (started[index] as Ticket).startedAt);
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(100);
  });

  it('a 429 halves the limit for the whole client, pauses every start for the Retry-After, and cuts once per window', async () => {
    const { time, limiter, started, changes, request } = setup({ concurrency: 8 });
    for (let index = 0; index < 20; index += 1) void request();
    await flush();
    expect(started).toHaveLength(8);
    const [first, second] = started as [Ticket, Ticket];
    limiter.release(first, 'rate_limited', 2000);
    // A second 429 from a request started before the cut carries no news.
    limiter.release(second, 'rate_limited', 2000);
    await flush();
    expect(limiter.snapshot().concurrencyLimit).toBe(4);
    expect(changes).toHaveLength(1);
    expect(changes[0]).toMatchObject({ reason: 'rate_limited', concurrencyLimit: 4, previousConcurrencyLimit: 8 });
    // In flight 6 > limit 4: nothing starts; and the pause holds everything for 2 s anyway.
    for (const ticket of started.slice(2)) limiter.release(ticket, 'failure');
    await time.advance(1999);
    expect(started).toHaveLength(8);
    await time.advance(1);
    expect(started).toHaveLength(12);
    expect(limiter.snapshot().inFlight).toBe(4);
    expect(started.slice(8).map((ticket) => ticket.startedAt)).toEqual([2000, 2000, 2000, 2000]);
  });

  it('repeated 429s go down to one request at a time, and no lower', async () => {
    const { time, limiter, request, started } = setup({ concurrency: 4 });
    for (let round = 0; round < 5; round += 1) {
      void request();
      await time.advance(5000);
      limiter.release(started[started.length - 1] as Ticket, 'rate_limited', 100);
      await time.advance(1);
    }
    expect(limiter.snapshot().concurrencyLimit).toBe(1);
  });

  it('recovers slowly: one step per recovery interval of successes, up to the configured concurrency', async () => {
    const { time, limiter, started, changes, request } = setup({ concurrency: 8, recoveryIntervalMs: 1000 });
    void request();
    await flush();
    limiter.release(started[0] as Ticket, 'rate_limited', 10);
    expect(limiter.snapshot().concurrencyLimit).toBe(4);
    const limits: number[] = [];
    for (let second = 0; second < 8; second += 1) {
      // many successes within one interval make one step only
      for (let index = 0; index < 5; index += 1) {
        void request();
        await flush();
        limiter.release(started[started.length - 1] as Ticket, 'success');
      }
      limits.push(limiter.snapshot().concurrencyLimit);
      await time.advance(1000);
    }
    expect(limits).toEqual([4, 5, 6, 7, 8, 8, 8, 8]);
    expect(changes.filter((change) => change.reason === 'recovered')).toHaveLength(4);
  });
});
