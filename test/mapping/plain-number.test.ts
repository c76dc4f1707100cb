import { describe, expect, it } from 'vitest';
import { coerceValue } from '../../src/mapping/coerce.js';
import { asDouble, parseDecimal } from '../../src/mapping/decimal.js';
import { fileMapping } from './helpers/file-mapping.js';

// A short plain number cell is read by Number() (coerce-number.ts): it must give what the exact decimal path gives,
// the cell's number where its double carries it exactly, for every cell it takes.

const mapping = fileMapping();

/** What the exact path makes of a cell: its double where that carries it exactly, else undefined (a problem). */
function exact(cell: string, integer: boolean): number | undefined {
  const decimal = parseDecimal(cell);
  if (decimal === undefined || (integer && decimal.exponent < 0)) return undefined;
  const double = asDouble(decimal);
  return double.ok ? double.value : undefined;
}

/** A seeded generator (mulberry32): the same cells every run. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function cells(count: number): string[] {
  const next = random(36);
  const digits = (length: number) => Array.from({ length }, () => String(Math.floor(next() * 10))).join('');
  const out: string[] = [];
  for (let index = 0; index < count; index += 1) {
    const sign = ['', '-', '+'][Math.floor(next() * 3)] ?? '';
    const whole = digits(Math.floor(next() * 16));
    const fraction = digits(Math.floor(next() * 16));
    const point = fraction === '' ? (next() < 0.1 ? '.' : '') : '.';
    out.push(`${sign}${whole}${point}${fraction}`);
  }
  return out;
}

const edges = [
  '0',
  '-0',
  '0.0',
  '+3',
  '.5',
  '5.',
  '-.000000000001',
  '0.1',
  '1.0',
  '1.5',
  '1.0000000000001',
  '999999999999999',
  '123456789012345',
  '9007199254740993',
  '12345678901234567',
  '0.30000000000000004',
];

describe('a short plain number cell', () => {
  it.each(['number', 'amount', 'integer'] as const)('reads as the exact path does, as a %s', (type) => {
    for (const cell of [...edges, ...cells(20_000)]) {
      const read = coerceValue(type, cell, { mapping, field: 'transfer_balance', phoneCountry: undefined });
      const expected = exact(cell, type === 'integer');
      if (expected === undefined) expect(read.issue, cell).toBeDefined();
      else expect([read.value, read.issue, Object.is(read.value, -0)], cell).toEqual([expected, undefined, false]);
    }
  });
});
