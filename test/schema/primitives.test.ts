import { describe, expect, it } from 'vitest';
import { isCalendarDate, isIsoDatetime } from '../../src/schema/index.js';

describe('isCalendarDate', () => {
  it('accepts days that exist, leap days included', () => {
    for (const day of ['2024-02-29', '2000-02-29', '0001-01-01', '9999-12-31', '2026-04-30', '2026-01-31'])
      expect(isCalendarDate(day)).toBe(true);
  });

  it('refuses days that do not exist and anything not YYYY-MM-DD', () => {
    const refused = [
      '2023-02-29',
      '1900-02-29',
      '2026-04-31',
      '2026-13-01',
      '2026-00-10',
      '2026-01-00',
      '2026-1-01',
      '26-01-01',
      '2026/01/01',
      ' 2026-01-01',
      '2026-01-01 ',
      '2026-01-01\n',
      '+026-01-01',
      '2026-0a-01',
      '\u0662\u0660\u0662\u0666-01-01',
      '',
    ];
    for (const text of refused) expect(isCalendarDate(text), text).toBe(false);
  });

  it('checks the date of a datetime', () => {
    expect(isIsoDatetime('2024-02-29T10:00:00Z')).toBe(true);
    expect(isIsoDatetime('2023-02-29T10:00:00Z')).toBe(false);
  });
});
