import { describe, expect, it } from 'vitest';
import { paceOf, quietestHour, timelineOf, utcLabel } from '../../../src/commands/report/campaign.js';
import { labelEvery } from '../../../src/output/svg-charts.js';

// The campaign's timeline and pace for the HTML report: pure, over hours as the ledger gives them.

const at = (iso: string): number => Date.parse(iso);
const HOUR = 3_600_000;

describe('timelineOf', () => {
  it('a campaign of up to two days is drawn per hour, empty hours too', () => {
    const timeline = timelineOf(
      [
        { hour: '2026-11-20T10', done: 4 },
        { hour: '2026-11-20T13', done: 2 },
      ],
      at('2026-11-20T10:20:00Z'),
      at('2026-11-20T14:05:00Z'),
    );
    expect(timeline.unit).toBe('hour');
    expect(timeline.buckets.map((bucket) => [bucket.label, bucket.done])).toEqual([
      ['20 Nov 10:00', 4],
      ['20 Nov 11:00', 0],
      ['20 Nov 12:00', 0],
      ['20 Nov 13:00', 2],
      ['20 Nov 14:00', 0],
    ]);
  });

  it('nights of cron runs are one bucket each: days are cut at the quietest hour', () => {
    const hours = [];
    for (let night = 0; night < 5; night += 1)
      for (const hour of [22, 23, 0, 1, 2]) {
        const day = 10 + night + (hour < 12 ? 1 : 0);
        hours.push({ hour: `2026-11-${day}T${String(hour).padStart(2, '0')}`, done: 10 });
      }
    expect(quietestHour(hours)).toBe(3);
    const timeline = timelineOf(hours, at('2026-11-10T22:00:00Z'), at('2026-11-15T09:00:00Z'));
    expect(timeline.unit).toBe('day');
    expect(timeline.buckets.map((bucket) => [bucket.label, bucket.done])).toEqual([
      ['10 Nov', 50],
      ['11 Nov', 50],
      ['12 Nov', 50],
      ['13 Nov', 50],
      ['14 Nov', 50],
      ['15 Nov', 0],
    ]);
  });

  it('more than 60 days are drawn per week', () => {
    const timeline = timelineOf(
      [{ hour: '2026-09-01T10', done: 1 }],
      at('2026-09-01T00:00:00Z'),
      at('2026-11-20T00:00:00Z'),
    );
    expect(timeline.unit).toBe('week');
    expect(timeline.buckets.length).toBeLessThanOrEqual(13);
    expect(timeline.buckets.reduce((sum, bucket) => sum + bucket.done, 0)).toBe(1);
  });
});

describe('paceOf', () => {
  it('accounts a day over the last week, and the finish of what is left at that pace', () => {
    const hours = [
      { hour: '2026-11-01T01', done: 1000 },
      { hour: '2026-11-10T01', done: 700 },
      { hour: '2026-11-12T01', done: 700 },
    ];
    const now = at('2026-11-14T00:00:00Z');
    const pace = paceOf(hours, { from: at('2026-11-01T00:00:00Z'), now, left: 2000 });
    expect(pace).toMatchObject({ unit: 'day', window: 7, perUnit: 200, left: 2000 });
    expect(pace?.finishAt).toBe(now + 10 * 24 * HOUR);
  });

  it('per hour while the campaign is younger than a day; no finish when nothing was done lately', () => {
    const now = at('2026-11-14T04:00:00Z');
    const young = paceOf([{ hour: '2026-11-14T02', done: 30 }], { from: now - 2 * HOUR, now, left: 15 });
    expect(young).toMatchObject({ unit: 'hour', window: 2, perUnit: 15, finishAt: now + HOUR });
    const stalled = paceOf([{ hour: '2026-10-01T02', done: 30 }], { from: at('2026-10-01T00:00:00Z'), now, left: 15 });
    expect(stalled?.perUnit).toBe(0);
    expect(stalled?.finishAt).toBeUndefined();
  });
});

describe('chart labels', () => {
  it('are thinned so that each is clear of the next', () => {
    expect(labelEvery(['run 1'], 90)).toBe(1);
    expect(labelEvery(['runs 181–185'], 16)).toBe(6);
    expect(labelEvery(['20 Nov 10:00'], 13.75)).toBe(7);
  });

  it('name days and hours in UTC', () => {
    expect(utcLabel(at('2026-11-20T23:30:00Z'))).toBe('20 Nov');
    expect(utcLabel(at('2026-11-20T23:30:00Z'), true)).toBe('20 Nov 23:00');
  });
});
