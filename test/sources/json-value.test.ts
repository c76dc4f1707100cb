import { describe, expect, it } from 'vitest';
import {
  isJsonNumber,
  JsonSyntaxError,
  jsonNumberText,
  MAX_JSON_DEPTH,
  NUMBER_MARK,
  parseJson,
} from '../../src/sources/json-value.js';

// The export's JSON parser: every number keeps its source text, a key twice in one object is an error, and
// otherwise it reads exactly what JSON.parse reads and refuses what JSON.parse refuses.

const number = (text: string): string => `${NUMBER_MARK}${text}`;

/** parseJson's value with each number read by Number(): JSON.parse's value for the same text. */
function asJsonParseWould(value: unknown): unknown {
  if (isJsonNumber(value)) return Number(jsonNumberText(value));
  if (Array.isArray(value)) return value.map(asJsonParseWould);
  if (value !== null && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, asJsonParseWould(inner)]));
  return value;
}

function failure(text: string): JsonSyntaxError {
  try {
    parseJson(text);
  } catch (error) {
    expect(error).toBeInstanceOf(JsonSyntaxError);
    return error as JsonSyntaxError;
  }
  throw new Error(`${text} was read`);
}

describe('parseJson', () => {
  it('keeps each number as written: digits, trailing zeros, exponents, beyond a double', () => {
    expect(
      parseJson('{"a": 1.10, "b": 90000000000000000001, "c": 1e309, "d": -0, "e": [1E+2, 0.5e-3], "f": "1.10"}'),
    ).toEqual({
      a: number('1.10'),
      b: number('90000000000000000001'),
      c: number('1e309'),
      d: number('-0'),
      e: [number('1E+2'), number('0.5e-3')],
      f: '1.10',
    });
    expect(isJsonNumber(parseJson('12'))).toBe(true);
    expect(isJsonNumber('12')).toBe(false);
  });

  it('refuses a key given twice in one object, at any depth and even with the same value, naming the key', () => {
    const top = failure('{"external_account_number": "A-2", "external_account_number": "A-3"}');
    expect(top.problem).toBe('duplicate_key');
    expect(top.key).toBe('external_account_number');
    expect(top.offset).toBe(35);
    const nested = failure('{"a": [{"x": 1}, {"y": {"k": 1, "k": 1}}]}');
    expect([nested.problem, nested.key]).toEqual(['duplicate_key', 'k']);
    // The same key in different objects is fine; so are keys that differ only after escaping.
    expect(parseJson('[{"k": 1}, {"k": 2}, {"k": {"k": 3}}]')).toHaveLength(3);
    expect(failure('{"\\u0061": 1, "a": 2}').key).toBe('a');
  });

  it('keeps "__proto__" as an own key, as JSON.parse does', () => {
    const value = parseJson('{"__proto__": {"x": 1}, "a": 2}') as Record<string, unknown>;
    expect(Object.keys(value)).toEqual(['__proto__', 'a']);
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
    expect(JSON.stringify(value)).toBe(`{"__proto__":{"x":"${'\\u0000'}1"},"a":"${'\\u0000'}2"}`);
  });

  it('refuses a NUL character in a string (what tells a number from a string), but not the text \\u0000', () => {
    expect(failure('{"a": "x\\u0000y"}').problem).toBe('nul_character');
    expect(parseJson('{"a": "\\\\u0000"}')).toEqual({ a: '\\u0000' });
  });

  it(`refuses nesting deeper than ${MAX_JSON_DEPTH} levels instead of overflowing the stack`, () => {
    expect(parseJson(`${'['.repeat(MAX_JSON_DEPTH)}${']'.repeat(MAX_JSON_DEPTH)}`)).toBeDefined();
    expect(failure('['.repeat(100_000)).problem).toBe('too_deep');
  });

  it('reads and refuses exactly what JSON.parse reads and refuses (a corpus of edge cases)', () => {
    const corpus = [
      '0',
      '-0',
      '01',
      '-',
      '1.',
      '.5',
      '1e',
      '1e+',
      '1.5E-3',
      '+1',
      'tru',
      'true',
      'nul',
      'null',
      'false ',
      ' [ ] ',
      '[1,]',
      '[,1]',
      '{"a":1,}',
      '{"a"}',
      '{"a":}',
      '{a:1}',
      "{'a':1}",
      '[',
      ']',
      '{',
      '"',
      '"abc',
      '"a\\"b"',
      '"\\\\"',
      '"\\x"',
      '"\\u12"',
      '"\\ud800"',
      '"\t"',
      '"a\nb"',
      '"é€😀"',
      '[1 2]',
      '{"a":1 "b":2}',
      '{} {}',
      '[1]x',
      '[[[]]]',
      '{"a":{"b":[{"c":null}]}}',
      '\uFEFF{}',
      '1 ',
      ' ',
      '',
      '[1e400]',
      '"\\/"',
      '[-]',
      '[- 1]',
      '[1,,2]',
      '{"":0}',
      '[0.0e0]',
      '[1E400, -1e-400]',
      '["\\b\\f\\n\\r\\t"]',
    ];
    for (const text of corpus) {
      let expected: unknown;
      let refused = false;
      try {
        expected = JSON.parse(text);
      } catch {
        refused = true;
      }
      if (refused) expect(() => parseJson(text), text).toThrow(JsonSyntaxError);
      else expect(asJsonParseWould(parseJson(text)), text).toEqual(expected);
    }
  });

  it('reads what JSON.stringify writes, for generated values with random white space', () => {
    let seed = 7;
    const random = (): number => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const make = (depth: number): unknown => {
      const pick = Math.floor(random() * (depth > 3 ? 5 : 7));
      if (pick === 0) return random() * 10 ** Math.floor(random() * 30) * (random() < 0.5 ? -1 : 1);
      if (pick === 1) return String.fromCharCode(...Array.from({ length: 8 }, () => Math.floor(random() * 0x2fff)));
      if (pick === 2) return random() < 0.5;
      if (pick === 3) return null;
      if (pick === 4) return Math.floor(random() * 1000);
      if (pick === 5) return Array.from({ length: Math.floor(random() * 4) }, () => make(depth + 1));
      return Object.fromEntries(Array.from({ length: Math.floor(random() * 4) }, (_, i) => [`k${i}`, make(depth + 1)]));
    };
    for (let round = 0; round < 500; round += 1) {
      const value = make(0);
      const text = JSON.stringify(value, null, round % 3).replace(/\n/g, round % 2 ? '\r\n' : '\n');
      expect(asJsonParseWould(parseJson(text))).toEqual(JSON.parse(text));
    }
  });
});
