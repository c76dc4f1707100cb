import { describe, expect, it } from 'vitest';
import type { EngineEvent } from '../../../src/engine/index.js';
import { formatDuration } from '../../../src/commands/push/duration.js';
import { createProgressReporter, progressLine } from '../../../src/commands/push/progress.js';
import { ProgressTally } from '../../../src/commands/push/progress-tally.js';

// The progress display against a clock the test moves: no test waits on the wall clock.

const NO_ITEMS = { note: 0, transaction: 0, statement: 0, payment_instruction: 0 };

function clock(): { now: () => number; advance: (seconds: number) => void } {
  let t = 1_700_000_000_000;
  return { now: () => t, advance: (seconds) => (t += seconds * 1000) };
}

const created = (id: number): EngineEvent => ({
  type: 'account',
  accountId: id,
  externalAccountNumber: `A-${id}`,
  from: 'creating',
  to: 'scheduled',
});
const processed = (id: number): EngineEvent => ({
  type: 'account',
  accountId: id,
  externalAccountNumber: `A-${id}`,
  from: 'scheduled',
  to: 'processed',
});
const staging = (accounts: number, added = accounts, notes = 0): EngineEvent => ({
  type: 'staging',
  accounts,
  orphans: 0,
  added: { accounts: added, items: { ...NO_ITEMS, note: notes } },
});
const staged = (accounts: number, added = accounts, notes = 0): EngineEvent => ({
  type: 'staged',
  accounts,
  invalid: 0,
  orphans: 0,
  changedAfterImport: 0,
  recordsChangedAfterImport: 0,
  duplicateNotes: 0,
  omittedValues: 0,
  added: { accounts: added, items: { ...NO_ITEMS, note: notes } },
});
const emptyPlan: EngineEvent = { type: 'plan', toCreate: 0, toProcess: 0, items: NO_ITEMS };

describe('formatDuration', () => {
  it.each([
    [0, '0s'],
    [0.4, '0s'],
    [59.4, '59s'],
    [59.6, '1m00s'],
    [65, '1m05s'],
    [119.5, '2m00s'],
    [3599.4, '59m59s'],
    [3599.6, '1h00m'],
    [3661, '1h01m'],
    [7199.9, '2h00m'],
    [86_369, '23h59m'],
    [86_399, '1d00h'],
    [90_000, '1d01h'],
    [10 * 86_400, '10d00h'],
  ])('%s s is %s', (seconds, text) => {
    expect(formatDuration(seconds)).toBe(text);
  });

  it.each([NaN, Infinity, -Infinity, -1])('%s has no text (no ETA is printed)', (seconds) => {
    expect(formatDuration(seconds)).toBeUndefined();
  });

  it('never writes 60 seconds or 60 minutes', () => {
    for (let tenths = 0; tenths < 200_000; tenths += 7) {
      const text = formatDuration(tenths / 10) ?? '';
      expect(text, String(tenths / 10)).not.toMatch(/(^|\D)60[sm]|NaN|Infinity/);
    }
  });
});

describe('progress while the export is read', () => {
  it('says "so far" and gives no ETA while the export size is unknown', () => {
    const time = clock();
    const tally = new ProgressTally({ now: time.now });
    tally.emit(emptyPlan);
    tally.emit(staging(1000, 1000, 3000));
    tally.view();
    time.advance(10);
    for (let id = 1; id <= 800; id += 1) tally.emit(processed(id));
    const view = tally.view();
    expect(view.accounts).toMatchObject({ done: 800, total: 1000, soFar: true });
    expect(view.etaSeconds).toBeUndefined();
    const line = progressLine(view, true);
    expect(line).toContain('reading the export; so far: accounts processed 800/1,000, records 0/3,000;');
    expect(line).toContain('80.0 accounts/s');
    expect(line).not.toContain('ETA');
  });

  it('knows how many accounts of the export a stopped run never read: none once the whole export is read', () => {
    const tally = new ProgressTally({ now: clock().now });
    expect(tally.neverRead).toBeUndefined();
    tally.exportAccounts = 2249;
    tally.emit(emptyPlan);
    tally.emit(staging(177));
    expect(tally.neverRead).toBe(2072);
    // Staging ends at a stop too: what it had not read stays never read.
    const stopped = new ProgressTally({ now: clock().now });
    stopped.exportAccounts = 2249;
    stopped.emit(staging(177));
    const end = staged(177);
    if (end.type === 'staged') stopped.emit({ ...end, stopped: true });
    expect(stopped.neverRead).toBe(2072);
    tally.emit(staged(2249));
    expect(tally.neverRead).toBe(0);
  });

  it("a stop while reading keeps the last frame's totals (no jump to 95% with a short ETA)", () => {
    const time = clock();
    const tally = new ProgressTally({ now: time.now });
    tally.exportAccounts = 5000;
    tally.emit(emptyPlan);
    tally.emit(staging(1000, 1000, 3000));
    tally.view();
    time.advance(10);
    for (let id = 1; id <= 580; id += 1) tally.emit(processed(id));
    const before = tally.view();
    const end = staged(1000, 1000, 3000);
    if (end.type === 'staged') tally.emit({ ...end, stopped: true });
    const after = tally.view();
    expect(after.accounts).toMatchObject({ done: 580, total: before.accounts.total, estimated: true });
    expect(after.records.total).toBe(before.records.total);
    expect(after.etaSeconds).toBeUndefined();
  });

  it('extrapolates the unread export from its counted size: the bar is not 80% full with 80% left', () => {
    const time = clock();
    const tally = new ProgressTally({ now: time.now });
    tally.exportAccounts = 5000;
    tally.emit(emptyPlan);
    tally.emit(staging(1000, 1000, 3000));
    tally.view();
    time.advance(10);
    for (let id = 1; id <= 800; id += 1) tally.emit(processed(id));
    tally.emit(staging(1800, 1800, 5400));
    const view = tally.view();
    expect(view.accounts).toMatchObject({ done: 800, total: 5000, estimated: true, soFar: false });
    expect(view.records).toMatchObject({ total: 15_000, estimated: true });
    // 4,200 accounts left at 80 accounts/s; the reading pace (80 accounts/s) needs 40 s for the 3,200 unread.
    expect(view.etaSeconds).toBeCloseTo(4200 / 80, 5);
    const line = progressLine(view, true);
    expect(line).toMatch(
      /^\[10s\] export 36% read; accounts processed 800\/~5,000, records 0\/~15,000; 80\.0 accounts\/s, ETA ~53s; 0 problems$/,
    );
  });

  it('a rerun whose read accounts are mostly done extrapolates little work, and the reading pace bounds the ETA', () => {
    const time = clock();
    const tally = new ProgressTally({ now: time.now });
    tally.exportAccounts = 10_000;
    tally.emit(emptyPlan);
    tally.emit(staging(1000, 10));
    tally.view();
    time.advance(10);
    for (let id = 1; id <= 10; id += 1) tally.emit(processed(id));
    tally.emit(staging(2000, 20));
    const view = tally.view();
    expect(view.accounts.total).toBe(100);
    // 90 accounts at 1/s is 90 s; the 8,000 unread accounts at 100 read/s take 80 s.
    expect(view.etaSeconds).toBeCloseTo(90, 5);
  });

  it('a rerun after a stop counts the export left unread as work, not only what this run read so far', () => {
    const time = clock();
    const tally = new ProgressTally({ now: time.now });
    // The first run read 177 of 2,219 accounts and stopped; the rerun reads those 177 again (nothing new), then more.
    tally.ledgerAccounts = 177;
    tally.exportAccounts = 2219;
    tally.emit(emptyPlan);
    tally.emit(staging(177, 0, 0));
    expect(tally.view().steps.created).toMatchObject({ total: 2042, estimated: true });
    tally.emit(staging(577, 400, 1200));
    const view = tally.view();
    expect(view.steps.created).toMatchObject({ total: 2042, estimated: true });
    expect(view.steps.note.total).toBe(2042 * 3);
  });

  it('after staging, totals are exact: no "~", no "so far"', () => {
    const time = clock();
    const tally = new ProgressTally({ now: time.now });
    tally.exportAccounts = 5000;
    tally.emit(emptyPlan);
    tally.emit(staged(40, 40, 10));
    tally.view();
    time.advance(4);
    for (let id = 1; id <= 20; id += 1) tally.emit(processed(id));
    const line = progressLine(tally.view(), true);
    expect(line).toMatch(/^\[4s\] accounts processed 20\/40, records 0\/10; 5\.0 accounts\/s, ETA 4s; 0 problems$/);
  });

  it('counts the requests unanswered for over a minute beside the problems, instead of a bare "0 problems"', () => {
    const time = clock();
    const tally = new ProgressTally({ now: time.now });
    tally.emit(emptyPlan);
    tally.emit(staged(40, 40, 10));
    let unanswered = 0;
    tally.unanswered = () => unanswered;
    expect(progressLine(tally.view(), true)).toMatch(/; 0 problems$/);
    unanswered = 8;
    expect(progressLine(tally.view(), true)).toMatch(/; 0 problems, 8 requests unanswered for over a minute$/);
    unanswered = 1;
    expect(progressLine(tally.view(), true)).toMatch(/; 0 problems, 1 request unanswered for over a minute$/);
  });

  it('gives no ETA when nothing is left, before a rate can be measured, or while a file is sorted', () => {
    const time = clock();
    const tally = new ProgressTally({ now: time.now });
    tally.emit(emptyPlan);
    tally.emit(staged(2));
    expect(tally.view().etaSeconds).toBeUndefined();
    time.advance(1);
    tally.emit(processed(1));
    tally.emit(processed(2));
    expect(tally.view().ratePerSecond).toBeUndefined();
    time.advance(5);
    expect(progressLine(tally.view(), true)).not.toContain('ETA');
    const sorting = new ProgressTally({ now: time.now });
    sorting.exportAccounts = 100;
    sorting.emit(staging(10));
    sorting.view();
    time.advance(5);
    sorting.emit(processed(1));
    sorting.emit({ type: 'sorting', files: [{ file: 'notes.csv', line: 9 }] });
    const view = sorting.view();
    expect(view.etaSeconds).toBeUndefined();
    expect(progressLine(view, true)).toContain('sorting notes.csv before sending;');
  });

  it('a rate of 0 over the last minute is shown as such, with no ETA', () => {
    const time = clock();
    const tally = new ProgressTally({ now: time.now });
    tally.emit(emptyPlan);
    tally.emit(staged(10));
    tally.emit(processed(1));
    for (let second = 0; second < 120; second += 10) {
      time.advance(10);
      tally.view();
    }
    const view = tally.view();
    expect(view.ratePerSecond).toBe(0);
    expect(view.etaSeconds).toBeUndefined();
    expect(progressLine(view, true)).toContain('0.0 accounts/s; ');
  });
});

describe('--no-wait', () => {
  it('counts and rates the creates, not the processing it does not wait for', () => {
    const time = clock();
    const tally = new ProgressTally({ now: time.now, wait: false });
    tally.emit(emptyPlan);
    tally.emit(staged(100));
    tally.view();
    time.advance(10);
    for (let id = 1; id <= 50; id += 1) tally.emit(created(id));
    const line = progressLine(tally.view(), false);
    expect(line).toContain('accounts created 50/100');
    expect(line).toContain('5.0 creates/s, ETA 10s');
    expect(line).not.toContain('0.0 accounts/s');
  });
});

describe('the reporter', () => {
  function fakeTimer(): {
    every: (tick: () => void, ms: number) => { stop: () => void };
    fire: () => void;
    ms: number;
  } {
    const timer = { tick: () => undefined as void, ms: 0 };
    return {
      every: (tick, ms) => {
        timer.tick = tick;
        timer.ms = ms;
        return { stop: () => (timer.tick = () => undefined) };
      },
      fire: () => timer.tick(),
      get ms() {
        return timer.ms;
      },
    };
  }

  it('writes one short line per interval in a pipe, at the interval asked for', () => {
    const time = clock();
    const timer = fakeTimer();
    const written: string[] = [];
    const progress = createProgressReporter({
      stream: { isTTY: false, write: (text: string) => written.push(text) > 0 },
      intervalSeconds: 300,
      now: time.now,
      every: timer.every,
    });
    expect(timer.ms).toBe(300_000);
    progress.emit({ type: 'plan', toCreate: 0, toProcess: 0, items: { ...NO_ITEMS, note: 4000 } });
    progress.emit(staging(5000, 5000, 2000));
    for (let minute = 0; minute < 30; minute += 5) {
      time.advance(300);
      for (let id = 0; id < 100; id += 1) progress.emit(processed(minute * 1000 + id));
      timer.fire();
    }
    progress.stop();
    timer.fire();
    expect(written).toHaveLength(6);
    for (const line of written) {
      expect(line.length).toBeLessThanOrEqual(120);
      expect(line).not.toMatch(/NaN|Infinity|undefined|LL|NF/);
    }
    expect(written[0]).toBe(
      'migrate: [5m00s] reading the export; so far: accounts processed 100/5,000, records 0/6,000; 0.3 accounts/s; 0 problems\n',
    );
    expect(written[5]).toMatch(/^migrate: \[30m00s\] reading the export; so far: accounts processed 600\/5,000/);
  });

  it('--quiet writes nothing and still counts', () => {
    const written: string[] = [];
    const progress = createProgressReporter({
      stream: { isTTY: false, write: (text: string) => written.push(text) > 0 },
      quiet: true,
    });
    progress.emit(staged(3));
    progress.emit(processed(1));
    progress.stop();
    expect(written).toEqual([]);
    expect(progress.tally.done.processed).toBe(1);
  });
});
