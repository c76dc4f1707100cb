import { describe, expect, it } from 'vitest';
import { DETAIL_LIMIT, limitDetail } from '../src/errors.js';

// The one bound on error details kept or shown (docs/limits.md): the start of the text and its whole length.

describe('limitDetail', () => {
  it('keeps a text up to the limit as it is, and cuts a longer one saying how long it was', () => {
    expect(limitDetail('x'.repeat(DETAIL_LIMIT))).toBe('x'.repeat(DETAIL_LIMIT));
    expect(limitDetail('x'.repeat(10_485_760))).toBe(`${'x'.repeat(2_000)}... (10,485,760 characters in all)`);
    expect(limitDetail('abcdefgh', 3)).toBe('abc... (8 characters in all)');
  });

  it('is idempotent: a detail cut before keeps its original length', () => {
    const once = limitDetail('y'.repeat(50_000));
    expect(limitDetail(once)).toBe(once);
  });

  it('a long text that only ends like a cut one is cut again', () => {
    const forged = `${'z'.repeat(3_000)}... (5 characters in all)`;
    expect(limitDetail(forged)).toBe(`${'z'.repeat(2_000)}... (3,025 characters in all)`);
    const digits = `${'z'.repeat(1_990)}... (${'9'.repeat(100_000)} characters in all)`;
    expect(limitDetail(digits).length).toBeLessThan(2_100);
  });

  it('never keeps half of a surrogate pair', () => {
    const text = `${'a'.repeat(2)}😀${'b'.repeat(10)}`;
    expect(limitDetail(text, 3)).toBe('aa... (14 characters in all)');
  });
});
