// A kind's number format (docs/export-format.md "The mapping file", `number_format`): how amounts and numbers are
// written in a legacy export (`£1,234.50`, `-£12.00`, `12.00-`, `(12.00)`), read back to plain decimal text that is
// then read exactly like any other number cell. Anything the format does not describe is not a number. Pure.

export type NegativeForm = 'leading' | 'trailing' | 'parentheses' | 'any';

export interface NumberFormat {
  /** A currency sign the value may start with (after a leading minus, or before it): `£`. */
  currency?: string | undefined;
  /** The thousands separator, in groups of three digits before the decimal point: `,`. */
  thousands?: string | undefined;
  /** Where a minus goes: before the number (default), after it, in parentheses, or any of these. */
  negative: NegativeForm;
}

const PLAIN = /^(\d+\.?\d*|\.\d+)$/u;

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/gu, '\\$&');
}

/** The sign a value's form gives and the rest of it; undefined where the form is not allowed. */
function signOf(text: string, negative: NegativeForm): { minus: boolean; rest: string } | undefined {
  const any = negative === 'any';
  if (text.startsWith('(') && text.endsWith(')'))
    return any || negative === 'parentheses' ? { minus: true, rest: text.slice(1, -1).trim() } : undefined;
  if (text.endsWith('-'))
    return any || negative === 'trailing' ? { minus: true, rest: text.slice(0, -1).trimEnd() } : undefined;
  return { minus: false, rest: text };
}

/** What a format compiles to: the value after its outer sign, split into signs, currency and digits. */
interface Compiled {
  body: RegExp;
  thousands: RegExp | undefined;
}

const compiled = new WeakMap<NumberFormat, Compiled>();

function compile(format: NumberFormat): Compiled {
  let found = compiled.get(format);
  if (found === undefined) {
    const currency = format.currency === undefined ? '' : `(?:${escape(format.currency)})?`;
    const sep = format.thousands === undefined ? undefined : escape(format.thousands);
    found = {
      // A sign before or after the currency sign (`-£12`, `£-12`), never both.
      body: new RegExp(`^([+-]?)${currency}([+-]?)(.*)$`, 'u'),
      thousands: sep === undefined ? undefined : new RegExp(`^\\d{1,3}(${sep}\\d{3})+(\\.\\d*)?$`, 'u'),
    };
    compiled.set(format, found);
  }
  return found;
}

/**
 * The plain decimal text (`-1234.50`) a cell means in the format, or undefined when the format does not describe it.
 * Thousands separators must group three digits each (`1,23.4` is not a number).
 */
export function readFormattedNumber(text: string, format: NumberFormat): string | undefined {
  const outer = signOf(text.trim(), format.negative);
  if (outer === undefined) return undefined;
  const { body, thousands } = compile(format);
  const [, before = '', after = '', rest = ''] = body.exec(outer.rest) ?? [];
  const sign = before + after;
  if (sign.length > 1 || (outer.minus && sign !== '')) return undefined;
  if (sign === '-' && format.negative !== 'leading' && format.negative !== 'any') return undefined;
  let digits = rest;
  if (thousands !== undefined && format.thousands !== undefined && digits.includes(format.thousands)) {
    if (!thousands.test(digits)) return undefined;
    digits = digits.split(format.thousands).join('');
  }
  if (!PLAIN.test(digits)) return undefined;
  return `${outer.minus || sign === '-' ? '-' : ''}${digits}`;
}

/** The format in words, for a message: `currency "£", thousands ",", negative leading`. */
export function formatInWords(format: NumberFormat): string {
  const parts = [
    ...(format.currency === undefined ? [] : [`currency ${JSON.stringify(format.currency)}`]),
    ...(format.thousands === undefined ? [] : [`thousands ${JSON.stringify(format.thousands)}`]),
    `negative ${format.negative}`,
  ];
  return parts.join(', ');
}
