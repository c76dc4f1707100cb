import { describe, expect, it } from 'vitest';
import {
  addDecimals,
  asDouble,
  multiply,
  parseDecimal,
  plainDecimal,
  wholeNumberOf,
} from '../../src/mapping/decimal.js';

// Exact decimal arithmetic on a number's text: what the mapping compares, scales and converts numbers with.

const decimal = (text: string) => {
  const value = parseDecimal(text);
  if (value === undefined) throw new Error(`${text} is not a number`);
  return value;
};

describe('decimals', () => {
  it('reads a number text into digits and an exponent, without leading or trailing zeros', () => {
    expect(parseDecimal('-001.2300')).toEqual({ negative: true, digits: '123', exponent: -2 });
    expect(parseDecimal('1.5e2')).toEqual({ negative: false, digits: '15', exponent: 1 });
    expect(parseDecimal('+.5')).toEqual({ negative: false, digits: '5', exponent: -1 });
    expect(parseDecimal('-0.000')).toEqual({ negative: false, digits: '', exponent: 0 });
    for (const text of ['', '.', '-', 'e5', '1e', '1,5', '0x10', 'Infinity'])
      expect(parseDecimal(text), text).toBeUndefined();
  });

  it('finds the double that carries a decimal exactly, or says why none does', () => {
    expect(asDouble(decimal('1.10'))).toEqual({ ok: true, value: 1.1 });
    expect(asDouble(decimal('9007199254740993'))).toEqual({
      ok: false,
      problem: 'precision',
      nearest: 9007199254740992,
    });
    expect(asDouble(decimal('1.7976931348623157e308'))).toEqual({ ok: true, value: Number.MAX_VALUE });
    expect(asDouble(decimal('1e309'))).toEqual({ ok: false, problem: 'range' });
    expect(asDouble(decimal('5e-324'))).toEqual({ ok: true, value: 5e-324 });
    expect(asDouble(decimal('1e-400'))).toEqual({ ok: false, problem: 'precision', nearest: 0 });
  });

  it('multiplies and converts to minor units exactly', () => {
    expect(multiply(decimal('0.29'), decimal('100'))).toEqual(decimal('29'));
    expect(multiply(decimal('-1234'), decimal('0.01'))).toEqual(decimal('-12.34'));
    expect(multiply(decimal('1'.repeat(1001)), decimal('1'))).toBeUndefined();
    expect(wholeNumberOf(decimal('40.10'), 2)).toBe(4010);
    expect(wholeNumberOf(decimal('-0.07'), 2)).toBe(-7);
    expect(wholeNumberOf(decimal('40.105'), 2)).toBe('fraction');
    expect(wholeNumberOf(decimal('90071992547409.91'), 2)).toBe(Number.MAX_SAFE_INTEGER);
    expect(wholeNumberOf(decimal('90071992547409.92'), 2)).toBe('range');
    expect(wholeNumberOf(decimal('1e309'), 2)).toBe('range');
  });

  it('adds exactly where doubles drift, and writes sums in plain notation', () => {
    // 0.1 + 0.2 is 0.30000000000000004 in binary floating point; a million pennies sum to exactly 10000.00.
    expect(plainDecimal(addDecimals(decimal('0.1'), decimal('0.2')), 2)).toBe('0.30');
    let sum = decimal('0');
    for (let index = 0; index < 1_000_000; index += 1) sum = addDecimals(sum, decimal('0.01'));
    expect(plainDecimal(sum, 2)).toBe('10000.00');
    expect(plainDecimal(addDecimals(decimal('-154.23'), decimal('154.23')), 2)).toBe('0.00');
    expect(plainDecimal(addDecimals(decimal('-1229.65'), decimal('12.5')), 2)).toBe('-1217.15');
    expect(plainDecimal(addDecimals(decimal('1e3'), decimal('0.125')), 2)).toBe('1000.125');
    expect(plainDecimal(decimal('-0.05'), 2)).toBe('-0.05');
    expect(plainDecimal(decimal('12'))).toBe('12');
  });
});
