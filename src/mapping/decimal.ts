// Exact decimal arithmetic on a number's text, for the few things the mapping does to numbers: compare a value with
// the JSON number that would carry it, scale it (pence -> pounds), turn it into minor units. Binary floating point
// does none of these exactly (0.29 * 100 is 28.999999999999996; 90000000000000000001 is 9e19 as a double). Pure.

/** A finite decimal: (-1)^negative * digits * 10^exponent, digits without leading or trailing zeros ('' is zero). */
export interface Decimal {
  negative: boolean;
  digits: string;
  exponent: number;
}

const NUMBER_TEXT = /^([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/;

/** Most significant digits worked on exactly: more cannot be sent exactly in any form the service takes anyway. */
const MAX_DIGITS = 1000;

/** The decimal a number's text denotes (`-1.50e2`, `+3`, `.5`, `5.`), or undefined for text that is not a number. */
export function parseDecimal(text: string): Decimal | undefined {
  const match = NUMBER_TEXT.exec(text);
  if (!match) return undefined;
  const [, sign = '', whole = '', fraction = '', power = '0'] = match;
  if (whole === '' && fraction === '') return undefined;
  let digits = (whole + fraction).replace(/^0+/, '');
  const trimmed = digits.replace(/0+$/, '');
  const exponent = Number(power) - fraction.length + (digits.length - trimmed.length);
  digits = trimmed;
  if (digits === '') return { negative: false, digits: '', exponent: 0 };
  return { negative: sign === '-', digits, exponent };
}

function sameDecimal(a: Decimal, b: Decimal): boolean {
  return a.negative === b.negative && a.digits === b.digits && a.exponent === b.exponent;
}

/** `1.5e2` as the text JavaScript's Number() reads exactly as this decimal's nearest double. */
export function decimalNotation(value: Decimal): string {
  if (value.digits === '') return '0';
  return `${value.negative ? '-' : ''}${value.digits}e${value.exponent}`;
}

/** How a decimal fares as a JSON number (a binary double, as the service reads it and JSON.stringify writes it). */
export type AsDouble =
  { ok: true; value: number } | { ok: false; problem: 'range' } | { ok: false; problem: 'precision'; nearest: number };

/**
 * The double that carries exactly this decimal: one whose shortest text (what JSON.stringify sends) denotes the same
 * number. `1.10` is 1.1 (the same number); 90000000000000000001 has no such double (it would arrive as 9e19), nor
 * 1e309 (Infinity) or 1e-400 (0).
 */
export function asDouble(value: Decimal): AsDouble {
  // An exponent too large for its own text (1e99999999999999999999) is far beyond a double either way.
  const magnitude = value.exponent + value.digits.length;
  if (magnitude > 400) return { ok: false, problem: 'range' };
  if (magnitude < -400) return { ok: false, problem: 'precision', nearest: 0 };
  const nearest = Number(decimalNotation(value));
  if (!Number.isFinite(nearest)) return { ok: false, problem: 'range' };
  const back = parseDecimal(String(nearest));
  // -0 is sent as 0, the same number.
  if (back !== undefined && sameDecimal(back, value)) return { ok: true, value: nearest === 0 ? 0 : nearest };
  return { ok: false, problem: 'precision', nearest };
}

/** a * b, exactly; undefined where either has more significant digits than anything the service takes. */
export function multiply(a: Decimal, b: Decimal): Decimal | undefined {
  if (a.digits.length > MAX_DIGITS || b.digits.length > MAX_DIGITS) return undefined;
  if (a.digits === '' || b.digits === '') return { negative: false, digits: '', exponent: 0 };
  const product = (BigInt(a.digits) * BigInt(b.digits)).toString();
  const digits = product.replace(/0+$/, '');
  return {
    negative: a.negative !== b.negative,
    digits,
    exponent: a.exponent + b.exponent + (product.length - digits.length),
  };
}

/**
 * The whole number `value * 10^places` (major units -> minor units: 40.10 -> 4010), or why there is none: a fraction
 * left over, or beyond Number.MAX_SAFE_INTEGER (the largest whole number a JSON number carries exactly).
 */
export function wholeNumberOf(value: Decimal, places: number): number | 'fraction' | 'range' {
  if (value.digits === '') return 0;
  const exponent = value.exponent + places;
  if (exponent < 0) return 'fraction';
  if (value.digits.length + exponent > 16) return 'range';
  const whole = BigInt(value.digits) * 10n ** BigInt(exponent);
  if (whole > BigInt(Number.MAX_SAFE_INTEGER)) return 'range';
  return Number(value.negative ? -whole : whole);
}

/** a + b, exactly (sums of money: control totals never drift as binary floating point does). */
export function addDecimals(a: Decimal, b: Decimal): Decimal {
  if (a.digits === '') return b;
  if (b.digits === '') return a;
  const exponent = Math.min(a.exponent, b.exponent);
  const scaled = (value: Decimal): bigint =>
    (value.negative ? -1n : 1n) * BigInt(value.digits) * 10n ** BigInt(value.exponent - exponent);
  const sum = scaled(a) + scaled(b);
  if (sum === 0n) return { negative: false, digits: '', exponent: 0 };
  const text = (sum < 0n ? -sum : sum).toString();
  const digits = text.replace(/0+$/, '');
  return { negative: sum < 0n, digits, exponent: exponent + (text.length - digits.length) };
}

/** A decimal in plain notation with at least `places` decimals (`-1234.5` -> `-1234.50` for 2): no exponent. */
export function plainDecimal(value: Decimal, places = 0): string {
  const decimals = Math.max(places, -value.exponent, 0);
  const whole = value.digits === '' ? 0n : BigInt(value.digits) * 10n ** BigInt(value.exponent + decimals);
  const text = whole.toString().padStart(decimals + 1, '0');
  const point = decimals === 0 ? text : `${text.slice(0, -decimals)}.${text.slice(-decimals)}`;
  return value.negative && whole !== 0n ? `-${point}` : point;
}
