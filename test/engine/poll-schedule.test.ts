import { describe, expect, it } from 'vitest';
import {
  DEFAULT_POLL_SCHEDULE,
  firstPollsSeenByList,
  listCheckWorthwhile,
  nextLookAt,
  nextPollDelay,
  pollerWaitMs,
  FirstPollTuner,
  type ParkedChecks,
} from '../../src/engine/poll-schedule.js';

describe('nextPollDelay', () => {
  it('grows geometrically to the cap', () => {
    const schedule = { ...DEFAULT_POLL_SCHEDULE, jitter: 0 };
    expect([0, 1, 2, 3, 10, 100].map((n) => nextPollDelay(schedule, n, 0.3))).toEqual([
      500, 1000, 2000, 4000, 30_000, 30_000,
    ]);
  });

  it('spreads checks of accounts created together within the jitter share', () => {
    const low = nextPollDelay(DEFAULT_POLL_SCHEDULE, 2, 0);
    const high = nextPollDelay(DEFAULT_POLL_SCHEDULE, 2, 0.999);
    expect(low).toBe(1800);
    expect(high).toBeGreaterThan(2190);
    expect(high).toBeLessThanOrEqual(2200);
  });
});

describe('listCheckWorthwhile', () => {
  it.each([
    [10, 0, false],
    [32, 0, true],
    [100, 5000, true],
    [100, 5001, false],
    // No cap on the list's size itself (it is read as it arrives): only its ratio to the parked accounts.
    [20_000, 1_000_000, true],
    [20_000, 1_000_001, false],
  ])('%i parked, last list %i -> %s', (parked, size, expected) => {
    expect(listCheckWorthwhile(parked, size)).toBe(expected);
  });
});

describe('FirstPollTuner', () => {
  const configured = { firstDelayMs: 500, factor: 2, maxDelayMs: 30_000, jitter: 0.2 };

  /**
   * A service that takes `processingMs` (times e^u, u uniform in [-noise, noise]): every `everyMs`,
   * `burst` accounts are created together, each polled when the run's schedule says, `lateMs` after
   * that. Returns the first delay at every millisecond and the share of first polls, after the
   * first 8 s, that found the account imported.
   */
  function simulate(
    tuner: FirstPollTuner,
    shape: { processingMs: number; noise: number; burst: number; everyMs: number; ms: number; lateMs?: number },
  ): { delays: number[]; importedShare: number } {
    let seed = 7;
    const random = (): number => ((seed = (seed * 48271) % 2147483647) - 1) / 2147483646;
    const due: Array<{ at: number; createdAt: number; processingMs: number }> = [];
    const delays: number[] = [];
    let answers = 0;
    let imported = 0;
    for (let now = 0; now < shape.ms; now += 1) {
      if (now % shape.everyMs === 0)
        for (let n = 0; n < shape.burst; n += 1)
          due.push({
            at: now + nextPollDelay(tuner.schedule, 0, random()),
            createdAt: now,
            processingMs: shape.processingMs * Math.exp(shape.noise * (2 * random() - 1)),
          });
      for (let i = due.length - 1; i >= 0; i -= 1) {
        const check = due[i];
        if (check === undefined || check.at + (shape.lateMs ?? 0) > now) continue;
        due.splice(i, 1);
        const found = now - check.createdAt >= check.processingMs;
        if (now >= 8_000) {
          answers += 1;
          if (found) imported += 1;
        }
        tuner.observe(found, now - check.at, now);
      }
      delays.push(tuner.schedule.firstDelayMs);
    }
    return { delays, importedShare: imported / answers };
  }

  it.each([
    ['one account at a time', 1, 1, 0],
    ['bursts of 32 every 20 ms', 32, 20, 0],
    ['bursts of 32, processing times spread x0.74 to x1.35', 32, 20, 0.3],
    ['one account every 50 ms', 1, 50, 0.3],
  ])('settles where about 90%% of first polls find the account imported: %s', (_name, burst, everyMs, noise) => {
    const tuner = new FirstPollTuner(configured);
    const { delays, importedShare } = simulate(tuner, { processingMs: 100, noise, burst, everyMs, ms: 30_000 });
    expect(delays.findIndex((delay) => delay < 150)).toBeLessThan(6_000);
    const settled = delays.slice(8_000);
    // Unguarded (a step per answer), one burst of 32 answers moved the delay x15 and it swung from 20 ms to 5 s.
    expect(Math.min(...settled)).toBeGreaterThan(85);
    expect(Math.max(...settled)).toBeLessThan(210);
    expect(importedShare).toBeGreaterThan(0.8);
    expect(configured.firstDelayMs).toBe(500);
  });

  it('does not shorten the delay on checks made late, which had longer to find the account imported', () => {
    const tuner = new FirstPollTuner(configured);
    // A busy run polls every account 2 s after its due time: all are found imported, none counts.
    simulate(tuner, { processingMs: 400, noise: 0, burst: 4, everyMs: 10, ms: 5_000, lateMs: 2_000 });
    expect(tuner.schedule.firstDelayMs).toBe(500);
  });

  it('moves once per interval of its own length, at most x1.25 or x0.8, within the configured bounds', () => {
    const tuner = new FirstPollTuner(configured);
    for (let n = 0; n < 60; n += 1) tuner.observe(false, 0, 0);
    expect(tuner.schedule.firstDelayMs).toBe(500);
    tuner.observe(false, 0, 500);
    expect(tuner.schedule.firstDelayMs).toBe(625);
    let now = 500;
    for (let n = 0; n < 200; n += 1) {
      now += tuner.schedule.firstDelayMs;
      for (let k = 0; k < 5; k += 1) tuner.observe(false, 0, now);
    }
    expect(tuner.schedule.firstDelayMs).toBe(30_000);
    for (let n = 0; n < 1_000; n += 1) {
      now += tuner.schedule.firstDelayMs;
      for (let k = 0; k < 5; k += 1) tuner.observe(true, 0, now);
    }
    expect(tuner.schedule.firstDelayMs).toBe(20);
  });
});

describe('firstPollsSeenByList', () => {
  it('counts an account named before its first check was due as found, one not named after as not, and no other', () => {
    const parked = new Map<string, number | null>([
      ['EARLY-NAMED', 1_200],
      ['LATE-NAMED', 900],
      ['EARLY-UNNAMED', 1_100],
      ['LATE-UNNAMED', 700],
      ['CHECKED-BEFORE', null],
    ]);
    const named = new Set(['EARLY-NAMED', 'LATE-NAMED', 'CHECKED-BEFORE']);
    expect([...firstPollsSeenByList(parked, named, 1_000)]).toEqual([
      [true, 0],
      [false, 300],
    ]);
  });

  it('brings the first delay to the processing time when every check waits for the list', () => {
    // 300 accounts a second, processed in 100 ms; a list call a second names those processed; no first check is made
    // on time (all held for the list), so only the list answers tell the tuner anything. It moves at most x0.8 a call:
    // 500 ms to about 100 in 20 s, then about the processing time (x0.8 under it, x1.25 over it).
    const processingMs = 100;
    const tuner = new FirstPollTuner(DEFAULT_POLL_SCHEDULE);
    const parked = new Map<string, { createdAt: number; firstCheckAt: number }>();
    for (let now = 0, n = 0; now <= 20_000; now += 10) {
      for (let k = 0; k < 3; k += 1, n += 1)
        parked.set(`A-${n}`, { createdAt: now, firstCheckAt: now + tuner.schedule.firstDelayMs });
      if (now % 1_000 !== 0) continue;
      const named = new Set([...parked].filter(([, a]) => a.createdAt + processingMs <= now).map(([number]) => number));
      const due = new Map([...parked].map(([number, a]) => [number, a.firstCheckAt]));
      for (const [imported, latenessMs] of firstPollsSeenByList(due, named, now))
        tuner.observe(imported, latenessMs, now);
      for (const number of named) parked.delete(number);
    }
    expect(tuner.schedule.firstDelayMs).toBeGreaterThanOrEqual(processingMs * 0.7);
    expect(tuner.schedule.firstDelayMs).toBeLessThan(processingMs * 1.6);
  });
});

describe('the poller', () => {
  const now = 1_000_000;
  const parked = (over: Partial<ParkedChecks>): ParkedChecks => ({
    held: false,
    nextCheckAt: () => now + 5_000,
    nextReconcileAt: () => null,
    nextListCallAt: now + 800,
    ...over,
  });

  it.each<[string, Partial<ParkedChecks>, number | null]>([
    ['nothing parked', { nextCheckAt: () => null }, null],
    ['checks go when due: the next one', {}, now + 5_000],
    ['checks that are due wait for the list: its next call', { held: true, nextCheckAt: () => now }, now + 800],
    ['waiting for the list, a reconcile check due sooner', { held: true, nextReconcileAt: () => now + 300 }, now + 300],
    [
      'waiting for the list, a reconcile check due later',
      { held: true, nextReconcileAt: () => now + 3_000 },
      now + 800,
    ],
  ])('looks again: %s', (_, over, expected) => {
    expect(nextLookAt(parked(over))).toBe(expected);
  });

  it.each<[string, number | null, number]>([
    ['nothing parked: the idle look', null, 250],
    ['a check due in 5 ms: not before the next tick', now + 5, 20],
    ['a check due in 100 ms', now + 100, 100],
    ['the list due in 800 ms: the idle look, not a look every tick', now + 800, 250],
  ])('waits: %s', (_, next, wait) => {
    expect(pollerWaitMs(now, next)).toBe(wait);
  });
});
