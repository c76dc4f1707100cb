import { isJsonNumber, jsonNumberText } from '../sources/json-value.js';
import { issue, type CoerceContext, type Coerced } from './coerced.js';
import { asDouble, multiply, parseDecimal, wholeNumberOf, type Decimal } from './decimal.js';
import { ExportCode } from './issue-codes.js';
import { formatInWords, readFormattedNumber } from './number-format.js';

// Numbers and amounts (docs/export-format.md "Values"): read exactly from their text (a CSV cell, or a JSON number
// as the export wrote it), scaled exactly, and sent only where the JSON number that carries them is the same
// number. Anything else is an error on the cell, never a rounded, infinite or missing value. Pure.

/** `.` as the decimal point, an optional sign, no exponent: a number in a cell (JSON numbers follow JSON's grammar). */
const DECIMAL = /^[+-]?(\d+\.?\d*|\.\d+)$/;

/**
 * The decimal of a cell (as the kind's number_format writes it, when it declares one), a JSON number, or a number the
 * mapping file gives; undefined for anything else.
 */
function decimalOf(value: unknown, context: CoerceContext): Decimal | undefined {
  if (isJsonNumber(value)) return parseDecimal(jsonNumberText(value));
  if (typeof value === 'number') return Number.isFinite(value) ? parseDecimal(String(value)) : undefined;
  if (typeof value !== 'string') return undefined;
  const format = context.mapping.numberFormat;
  if (format === undefined) return DECIMAL.test(value) ? parseDecimal(value) : undefined;
  const plain = readFormattedNumber(value, format);
  return plain === undefined ? undefined : parseDecimal(plain);
}

function shown(value: unknown): string {
  return isJsonNumber(value) ? jsonNumberText(value) : String(value);
}

function notANumber(value: unknown, context: CoerceContext): Coerced {
  const format = context.mapping.numberFormat;
  if (format !== undefined)
    return issue(
      value,
      ExportCode.invalidNumber,
      `${context.field}: "${shown(value)}" is not a number in the mapping file's number_format ` +
        `(${formatInWords(format)}; "." as the decimal point).`,
    );
  return issue(
    value,
    ExportCode.invalidNumber,
    `${context.field}: "${shown(value)}" is not a number ("." as the decimal point, no currency sign or thousands ` +
      `separator; declare them with "number_format" in the mapping file).`,
  );
}

/** The mapping file's scale of this field applied exactly; undefined where the product has too many digits. */
function scaled(decimal: Decimal, context: CoerceContext): Decimal | undefined {
  const factor = context.mapping.scale[context.field];
  if (factor === undefined) return decimal;
  const by = parseDecimal(String(factor));
  return by === undefined ? undefined : multiply(decimal, by);
}

function afterScale(context: CoerceContext): string {
  const factor = context.mapping.scale[context.field];
  return factor === undefined ? '' : ` (after the mapping file's scale of ${factor})`;
}

/**
 * A plain cell of at most 15 characters (so at most 15 digits) with no number_format or scale: its nearest double
 * carries exactly its number (any decimal of 15 significant digits or fewer comes back from its double), so it is
 * Number()'s answer, as the exact path below would find at several times the cost (profiled: every amount cell).
 */
function plainNumber(
  type: 'integer' | 'number' | 'amount',
  value: unknown,
  context: CoerceContext,
): number | undefined {
  if (typeof value !== 'string' || value.length > 15 || !DECIMAL.test(value)) return undefined;
  if (context.mapping.numberFormat !== undefined || context.mapping.scale[context.field] !== undefined)
    return undefined;
  const number = Number(value);
  if (type === 'integer' && !Number.isInteger(number)) return undefined;
  // -0 is sent as 0, the same number.
  return number === 0 ? 0 : number;
}

export function coerceNumber(type: 'integer' | 'number' | 'amount', value: unknown, context: CoerceContext): Coerced {
  const plain = plainNumber(type, value, context);
  if (plain !== undefined) return { value: plain };
  const read = decimalOf(value, context);
  if (read === undefined) return notANumber(value, context);
  const decimal = scaled(read, context);
  if (type === 'integer' && decimal !== undefined && decimal.exponent < 0)
    return issue(value, ExportCode.invalidInteger, `${context.field}: "${shown(value)}" is not a whole number.`);
  const double = decimal === undefined ? undefined : asDouble(decimal);
  if (double?.ok) return { value: double.value };
  if (double?.problem === 'range')
    return issue(
      value,
      ExportCode.numberOutOfRange,
      `${context.field}: ${shown(value)}${afterScale(context)} is beyond the largest number a JSON number ` +
        `carries (about 1.8e308); it cannot be sent.`,
    );
  const arrives = double === undefined ? '' : `: it would arrive as ${double.nearest}`;
  return issue(
    value,
    ExportCode.numberTooPrecise,
    `${context.field}: ${shown(value)}${afterScale(context)} has more significant digits than a JSON number ` +
      `carries exactly${arrives}; give at most 15 significant digits.`,
  );
}

/**
 * Statements' gross_amount: the export gives major units (40.10), the service takes an integer in
 * minor units (4010). Converted on the text, never in binary floating point (0.29 * 100 is
 * 28.999999999999996). A column the mapping file declares in `minor_units` is taken as it is.
 */
export function coerceMinorAmount(value: unknown, context: CoerceContext): Coerced {
  const decimal = decimalOf(value, context);
  if (decimal === undefined) return notANumber(value, context);
  const declaredMinor = context.mapping.minorUnits.includes(context.field);
  const minor = wholeNumberOf(decimal, declaredMinor ? 0 : 2);
  if (typeof minor === 'number') return { value: minor };
  const text = shown(value);
  if (minor === 'range')
    return issue(
      value,
      ExportCode.numberOutOfRange,
      `${context.field}: ${text} is beyond ${Number.MAX_SAFE_INTEGER} minor units (pence, cents), the largest ` +
        `whole number a JSON number carries exactly; it cannot be sent.`,
    );
  if (declaredMinor)
    return issue(
      value,
      ExportCode.invalidInteger,
      `${context.field}: "${text}" is not a whole number of minor units (pence, cents); the mapping file ` +
        `declares this column in minor units.`,
    );
  return issue(
    value,
    ExportCode.tooManyDecimalPlaces,
    `${context.field}: "${text}" has more than two decimal places; give the amount in major units with at most ` +
      `two (e.g. 40.10), or declare the column in "minor_units" in the mapping file if it holds pence or cents.`,
  );
}

/** A number inside a JSON value (metadata, ledgers, line items, ...), sent as a JSON number: exactly, or a problem. */
export function exactNumber(text: string): { value: number } | { code: string; problem: string } {
  const decimal = parseDecimal(text);
  const double = decimal === undefined ? undefined : asDouble(decimal);
  if (double?.ok) return { value: double.value };
  if (double?.problem === 'range')
    return {
      code: ExportCode.numberOutOfRange,
      problem: `${text} is beyond the largest number a JSON number carries (about 1.8e308)`,
    };
  const arrives = double === undefined ? '' : ` (it would arrive as ${double.nearest})`;
  return {
    code: ExportCode.numberTooPrecise,
    problem: `${text} has more significant digits than a JSON number carries exactly${arrives}`,
  };
}
