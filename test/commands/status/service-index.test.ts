import { describe, expect, it } from 'vitest';
import { ServiceIndex } from '../../../src/commands/status/service-index.js';
import type { ListItem } from '../../../src/schema/index.js';

const item = (number: string, platform: string | null = null): ListItem => ({
  external_account_number: number,
  platform_account_number: platform,
  account_created_at: platform === null ? null : '2026-01-01T00:00:00Z',
});

function indexOf(items: ListItem[]): ServiceIndex {
  const index = new ServiceIndex();
  items.forEach((listed) => index.add(listed));
  return index;
}

describe('ServiceIndex', () => {
  it('marks imported accounts by their number, pending ones from either list, in list order', () => {
    const all = indexOf([item('I-1', 'A-1'), item('P-1'), item('I-2', 'A-2')]);
    all.addPending(indexOf([item('P-1'), item('I-2'), item('P-LATE'), item('P-LATE')]));
    expect([...all.unclaimed()]).toEqual([
      ['I-1', { platformAccountNumber: 'A-1', pending: false }],
      ['P-1', { platformAccountNumber: null, pending: true }],
      // Listed as imported and as pending (read at different moments): pending, with its number.
      ['I-2', { platformAccountNumber: 'A-2', pending: true }],
      ['P-LATE', { platformAccountNumber: null, pending: true }],
    ]);
    expect([all.size, all.pending, all.pendingNumbers(2)]).toEqual([4, 3, ['P-1', 'I-2']]);
  });

  it('a claimed number is left out of what is unclaimed; an unknown one is undefined', () => {
    const index = indexOf([item('A'), item('B', 'A-B'), item('C')]);
    expect(index.claim('B')).toEqual({ platformAccountNumber: 'A-B', pending: false });
    expect(index.claim('nope')).toBeUndefined();
    expect([...index.unclaimed()].map(([number]) => number)).toEqual(['A', 'C']);
  });

  it('a number listed twice keeps its place and takes the later values', () => {
    const index = indexOf([item('X'), item('Y'), item('X', 'A-X')]);
    expect([...index.unclaimed()]).toEqual([
      ['X', { platformAccountNumber: 'A-X', pending: false }],
      ['Y', { platformAccountNumber: null, pending: true }],
    ]);
    expect([index.size, index.pending]).toEqual([2, 1]);
  });

  it('holds many entries and any UTF-8 number, found again exactly', () => {
    const index = new ServiceIndex();
    const count = 50_000;
    for (let n = 0; n < count; n += 1) index.add(item(`ÄCC-${n}-ü`, n % 3 === 0 ? null : `A-${n}`));
    index.add(item('x'.repeat(1000), 'long'));
    expect(index.size).toBe(count + 1);
    expect(index.pending).toBe(Math.ceil(count / 3));
    expect(index.claim('ÄCC-49999-ü')).toEqual({ platformAccountNumber: 'A-49999', pending: false });
    expect(index.claim('ÄCC-3-ü')).toEqual({ platformAccountNumber: null, pending: true });
    expect(index.claim('x'.repeat(1000))).toEqual({ platformAccountNumber: 'long', pending: false });
    expect(index.claim('ÄCC-50000-ü')).toBeUndefined();
    const left = [...index.unclaimed()];
    expect(left).toHaveLength(count - 2);
    expect(left[count - 3]).toEqual(['ÄCC-49998-ü', { platformAccountNumber: null, pending: true }]);
  });
});
