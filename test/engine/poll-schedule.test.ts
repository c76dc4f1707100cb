import { describe, expect, it } from 'vitest';
import {
  DEFAULT_POLL_SCHEDULE,
  listCheckWorthwhile,
  nextPollDelay,
  FirstPollTuner,
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
    // Never a list too large to hold in memory, however many accounts wait.
    [10_000, 50_000, true],
    [10_000, 50_001, false],
  ])('%i parked, last list %i -> %s', (parked, size, expected) => {
    expect(listCheckWorthwhile(parked, size)).toBe(expected);
  });
});

describe('FirstPollTuner', () => {
  const configured = { firstDelayMs: 500, factor: 2, maxDelayMs: 30_000, jitter: 0 };

  it('moves the first delay towards the processing time the service shows', () => {
    const tuner = new FirstPollTuner(configured);
    // The service takes 100 ms: a first poll after at least that finds the account imported.
    for (let n = 0; n < 2000; n += 1) tuner.observe(tuner.schedule.firstDelayMs >= 100);
    expect(tuner.schedule.firstDelayMs).toBeGreaterThan(90);
    expect(tuner.schedule.firstDelayMs).toBeLessThan(160);
    expect(configured.firstDelayMs).toBe(500);
  });

  it('grows when first polls keep finding accounts in progress, within the configured bounds', () => {
    const tuner = new FirstPollTuner(configured);
    for (let n = 0; n < 60; n += 1) tuner.observe(false);
    expect(tuner.schedule.firstDelayMs).toBe(30_000);
    for (let n = 0; n < 2000; n += 1) tuner.observe(true);
    expect(tuner.schedule.firstDelayMs).toBe(20);
  });
});
