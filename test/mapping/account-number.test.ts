import { describe, expect, it } from 'vitest';
import { unaddressableReason } from '../../src/mapping/account-number.js';

// External account numbers that cannot be one segment of the service's URL paths (mapping/account-number.ts).

describe('an external account number in a URL path', () => {
  it.each(['.', '..', 'A/1', 'A\\1', 'A?1', 'A#1', 'A%2F1', 'A%1', 'A\n1', 'A\t1', 'A\u007f1', 'A\u00851', '\u0000'])(
    'refuses %j',
    (number) => {
      expect(unaddressableReason(number)).toBeDefined();
    },
  );

  it.each(['A-1', '...', '.A', 'A.', 'A..B', 'A 1', 'ÄÖÜ-1', '90000000000000000001', 'a+b=c', "O'Brien", 'x@y', 'A~1'])(
    'takes %j',
    (number) => {
      expect(unaddressableReason(number)).toBeUndefined();
    },
  );

  it('names what is wrong', () => {
    expect(unaddressableReason('..')).toBe('".." is a dot path segment, which URLs remove');
    expect(unaddressableReason('A/B')).toBe(
      '"A/B" holds "/", which servers and proxies decode, normalise or refuse in a URL path',
    );
    expect(unaddressableReason('A\tB')).toContain('holds a control character (U+0009)');
  });
});
