import { attrOf, asObject } from './read.js';
import type { ValidationIssue } from './issues.js';

// The two wire dialects (docs/real-platform.md). `spec` sends what the spec shows: amounts as JSON
// numbers, `{payload}` for v2 create. `kraken` sends what the real platform's published schema
// requires: amounts as decimal strings in its precision, `task_params` beside `payload`. The
// payload's fields and their meaning are the same in both; only the encoding of money differs.

export const DIALECTS = ['spec', 'kraken'] as const;
export type Dialect = (typeof DIALECTS)[number];

export function isDialect(value: unknown): value is Dialect {
  return value === 'spec' || value === 'kraken';
}

/** A money field's decimal string: decimals sent, and the platform's pattern (digits before/after the point). */
interface MoneyKind {
  decimals: number;
  integerDigits: number;
  fractionDigits: number;
}

const AMOUNT: MoneyKind = { decimals: 2, integerDigits: 10, fractionDigits: 10 };
const UNITS: MoneyKind = { decimals: 4, integerDigits: 12, fractionDigits: 4 };
const PRICE: MoneyKind = { decimals: 7, integerDigits: 8, fractionDigits: 7 };
const TAX: MoneyKind = { decimals: 5, integerDigits: 15, fractionDigits: 5 };

/** Where the money of a request body is: fields, lists of numbers, nested objects and lists of objects. */
interface MoneyShape {
  fields?: Record<string, MoneyKind>;
  numberLists?: Record<string, MoneyKind>;
  objects?: Record<string, MoneyShape>;
  lists?: Record<string, MoneyShape>;
}

const TRANSACTION: MoneyShape = {
  fields: { amount: AMOUNT },
  lists: {
    line_items: {
      fields: { number_of_units: UNITS, net_amount: AMOUNT, price_per_unit: PRICE },
      numberLists: { units: UNITS },
    },
    tax_items: { fields: { amount: AMOUNT, value_taxed: TAX, rate: TAX } },
  },
};

const LEDGER: MoneyShape = {
  fields: { last_statement_balance: AMOUNT, ledger_balance: AMOUNT },
  lists: { current_statement_transactions: TRANSACTION, historical_statement_transactions: TRANSACTION },
};

const ACCOUNT: MoneyShape = { fields: { transfer_balance: AMOUNT }, lists: { ledgers: LEDGER } };

/**
 * The money of each request body. Statements' gross_amount is not here: it is an integer in minor
 * units in both dialects (the real platform's type; the spec's "number" allows it).
 */
export const MONEY_SHAPES = {
  account: { objects: { payload: ACCOUNT } } satisfies MoneyShape,
  transactions: { lists: { transactions: TRANSACTION } } satisfies MoneyShape,
} as const;
export type MoneyBody = keyof typeof MONEY_SHAPES;

type Convert = (value: unknown, kind: MoneyKind, attr: string) => unknown;

function convert(value: unknown, shape: MoneyShape, path: string, fn: Convert): unknown {
  const object = asObject(value);
  if (!object) return value;
  const copy: Record<string, unknown> = { ...object };
  for (const [key, kind] of Object.entries(shape.fields ?? {}))
    if (copy[key] !== undefined && copy[key] !== null) copy[key] = fn(copy[key], kind, attrOf(path, key));
  for (const [key, kind] of Object.entries(shape.numberLists ?? {})) {
    const list = copy[key];
    if (Array.isArray(list)) copy[key] = list.map((item, index) => fn(item, kind, attrOf(path, key, index)));
  }
  for (const [key, inner] of Object.entries(shape.objects ?? {}))
    if (copy[key] !== undefined) copy[key] = convert(copy[key], inner, attrOf(path, key), fn);
  for (const [key, inner] of Object.entries(shape.lists ?? {})) {
    const list = copy[key];
    if (Array.isArray(list)) copy[key] = list.map((item, index) => convert(item, inner, attrOf(path, key, index), fn));
  }
  return copy;
}

/** A JSON number as a decimal string with exactly `decimals` places, from its shortest text (never rounded). */
export function decimalText(value: number, decimals: number): string | undefined {
  let text = String(value);
  if (/e/i.test(text)) {
    // Exponent notation: an integer from 1e21 up, or a fraction below 1e-6.
    const fixed = Number.isInteger(value) ? BigInt(value).toString() : value.toFixed(20).replace(/0+$/, '');
    if (Number(fixed) !== value) return undefined;
    text = fixed;
  }
  const [whole = '0', fraction = ''] = text.split('.');
  if (fraction.length > decimals) return undefined;
  return decimals === 0 ? whole : `${whole}.${fraction.padEnd(decimals, '0')}`;
}

/**
 * The body with its money as decimal strings (the real platform's format). A number with more
 * places than the field takes is a problem, never rounded; so is one with more digits before the point than the
 * platform's pattern allows (it would refuse it).
 */
export function moneyToStrings(body: MoneyBody, value: unknown): { value: unknown; issues: ValidationIssue[] } {
  const issues: ValidationIssue[] = [];
  const converted = convert(value, MONEY_SHAPES[body], '', (item, kind, attr) => {
    if (typeof item !== 'number') return item;
    const text = decimalText(item, kind.decimals);
    const whole = text?.replace(/^-/, '').split('.')[0] ?? '';
    if (text !== undefined && whole.replace(/^0+(?=\d)/, '').length <= kind.integerDigits) return text;
    issues.push({
      attr: attr.replace(/^payload\./, ''),
      ...(text === undefined
        ? {
            code: 'max_decimal_places',
            detail:
              `${item} has more than ${kind.decimals} decimal places; the platform takes ${kind.decimals} for ` +
              `this field.`,
          }
        : {
            code: 'max_whole_digits',
            detail:
              `${text} has more than ${kind.integerDigits} digits before the decimal point; the platform takes ` +
              `at most ${kind.integerDigits} for this field.`,
          }),
    });
    return item;
  });
  return { value: converted, issues };
}

function pattern(kind: MoneyKind): RegExp {
  return new RegExp(`^-?\\d{0,${kind.integerDigits}}(?:\\.\\d{0,${kind.fractionDigits}})?$`);
}

/**
 * The sandbox's reading of a real-platform body: decimal strings back to numbers; a JSON number or
 * a string outside the field's pattern is a field error, as the platform gives it.
 */
export function moneyFromStrings(body: MoneyBody, value: unknown): { value: unknown; issues: ValidationIssue[] } {
  const issues: ValidationIssue[] = [];
  const converted = convert(value, MONEY_SHAPES[body], '', (item, kind, attr) => {
    const at = attr.replace(/^payload\./, '');
    if (typeof item === 'string' && item !== '' && item !== '-' && pattern(kind).test(item)) return Number(item);
    issues.push({
      attr: at,
      code: 'invalid',
      detail:
        typeof item === 'number'
          ? `A valid string is required: send ${item} as a decimal string such as ` +
            `"${decimalText(item, kind.decimals) ?? item}".`
          : `${JSON.stringify(item)} is not a decimal with at most ${kind.fractionDigits} decimal places.`,
    });
    return item;
  });
  return { value: converted, issues };
}
