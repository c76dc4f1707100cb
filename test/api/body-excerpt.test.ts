import { describe, expect, it } from 'vitest';
import { EXCERPT_CHARS, bodyExcerpt } from '../../src/api/body-excerpt.js';

// The excerpt of a body an error message quotes: bounded, and nothing in it a terminal acts on.

describe('bodyExcerpt', () => {
  it.each([
    ['{"status": "WAI', '"{\\"status\\": \\"WAI"'],
    ['\u001b]52;c;aGk=\u0007', '"\\u001b]52;c;aGk=\\u0007"'],
    ['a\u009b31mb', '"a\\u009b31mb"'],
    ['line\r\nnext\u2028', '"line\\u000d\\u000anext\\u2028"'],
    ['abc\u202edef', '"abc\\u202edef"'],
    ['back\\slash', '"back\\\\slash"'],
    ['', '(empty)'],
  ])('%j -> %s', (body, shown) => {
    expect(bodyExcerpt(body)).toBe(shown);
  });

  it('writes parsed JSON back as text', () => {
    expect(bodyExcerpt({ token: 12345 })).toBe('"{\\"token\\":12345}"');
    expect(bodyExcerpt(undefined)).toBe('(empty)');
  });

  it(`keeps ${EXCERPT_CHARS} characters and says how long the body was`, () => {
    const shown = bodyExcerpt('€'.repeat(5000));
    expect(shown).toBe(`"${'€'.repeat(EXCERPT_CHARS)}"... (5,000 characters in all)`);
  });
});
