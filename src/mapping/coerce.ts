import { parsePhoneNumberFromString, type CountryCode } from 'libphonenumber-js';
import { applyDateFormat, type DateFormat } from './date-format.js';
import type { FileMapping } from './mapping-rules.js';
import { isCalendarDate, isIsoDatetime } from '../schema/index.js';
import type { FieldType } from './fields.js';
import { ExportCode } from './issue-codes.js';

// One cell -> one payload value (docs/export-format.md "Values"). Pure. A cell that cannot be coerced
// yields an issue and keeps its text, so that the payload still shows what was there and the
// schema does not report the field as missing as well.

export type Coerced =
  { value: unknown; issue?: undefined } | { value: unknown; issue: { code: string; message: string } };

export interface CoerceContext {
  mapping: FileMapping;
  field: string;
  phoneCountry: CountryCode | undefined;
}

const TRUE = new Set(['true', '1', 'yes', 'y']);
const FALSE = new Set(['false', '0', 'no', 'n']);
const DECIMAL = /^[+-]?(\d+\.?\d*|\.\d+)$/;

function fail(value: unknown, code: string, message: string): Coerced {
  return { value, issue: { code, message } };
}

/** Empty cells (and JSON nulls) mean "no data": the field is omitted (spec "General rules"). */
export function isEmptyCell(value: unknown): boolean {
  return value === undefined || value === null || (typeof value === 'string' && value.trim() === '');
}

export function coerceValue(type: FieldType, input: unknown, context: CoerceContext): Coerced {
  const value = typeof input === 'string' ? input.trim() : input;
  switch (type) {
    case 'string':
      return typeof value === 'string'
        ? { value }
        : typeof value === 'number'
          ? { value: String(value) }
          : fail(value, ExportCode.invalidType, `${context.field} must be text.`);
    case 'phone':
      return typeof value === 'string'
        ? { value: normalisePhone(value, context.phoneCountry) }
        : fail(value, ExportCode.invalidType, `${context.field} must be text.`);
    case 'boolean':
      return coerceBoolean(value, context.field);
    case 'integer':
    case 'number':
    case 'amount':
      return coerceNumber(type, value, context);
    case 'minor-amount':
      return coerceMinorAmount(value, context);
    case 'date':
      return coerceDate(value, context);
    case 'datetime':
      return coerceDatetime(value, context);
    case 'json':
    case 'json-array':
      return coerceJson(type, value, context.field);
    case 'document-paths':
      return coerceDocumentPaths(value, context.field);
  }
}

function coerceBoolean(value: unknown, field: string): Coerced {
  if (typeof value === 'boolean') return { value };
  const text = String(value).toLowerCase();
  if (TRUE.has(text)) return { value: true };
  if (FALSE.has(text)) return { value: false };
  return fail(
    value,
    ExportCode.invalidBoolean,
    `${field}: "${String(value)}" is not a boolean (true/false, 1/0, yes/no, y/n); map other values with "values" ` +
      `in the mapping file.`,
  );
}

function coerceNumber(type: 'integer' | 'number' | 'amount', value: unknown, context: CoerceContext): Coerced {
  let number: number;
  if (typeof value === 'number') number = value;
  else if (typeof value === 'string' && DECIMAL.test(value)) number = Number(value);
  else
    return fail(
      value,
      ExportCode.invalidNumber,
      `${context.field}: "${String(value)}" is not a number ("." as the decimal point, no currency sign or ` +
        `thousands separator).`,
    );
  const factor = context.mapping.scale[context.field];
  // Scaling (pence -> pounds) in binary floating point leaves noise such as 12.340000000000002.
  if (factor !== undefined) number = Number((number * factor).toFixed(10));
  if (type === 'integer' && !Number.isInteger(number))
    return fail(value, ExportCode.invalidInteger, `${context.field}: "${String(value)}" is not a whole number.`);
  return { value: number };
}

/**
 * Statements' gross_amount: the export gives major units (40.10), the service takes an integer in
 * minor units (4010). Converted on the text, never in binary floating point (0.29 * 100 is
 * 28.999999999999996). A column the mapping file declares in `minor_units` is taken as it is.
 */
function coerceMinorAmount(value: unknown, context: CoerceContext): Coerced {
  const text = typeof value === 'number' ? String(value) : value;
  if (typeof text !== 'string' || !DECIMAL.test(text))
    return fail(
      value,
      ExportCode.invalidNumber,
      `${context.field}: "${String(value)}" is not a number ("." as the decimal point, no currency sign or ` +
        `thousands separator).`,
    );
  if (context.mapping.minorUnits.includes(context.field)) {
    const number = Number(text);
    if (!Number.isSafeInteger(number))
      return fail(
        value,
        ExportCode.invalidInteger,
        `${context.field}: "${text}" is not a whole number of minor units (pence, cents); the mapping file ` +
          `declares this column in minor units.`,
      );
    return { value: number };
  }
  const minor = minorUnitsOf(text);
  if (minor === undefined)
    return fail(
      value,
      ExportCode.tooManyDecimalPlaces,
      `${context.field}: "${text}" has more than two decimal places; give the amount in major units with at most ` +
        `two (e.g. 40.10), or declare the column in "minor_units" in the mapping file if it holds pence or cents.`,
    );
  return { value: minor };
}

/**
 * `40.1` -> 4010, `-0.29` -> -29, `12` -> 1200; undefined for more than two decimal places or beyond a safe integer.
 */
function minorUnitsOf(text: string): number | undefined {
  const negative = text.startsWith('-');
  const unsigned = text.replace(/^[+-]/, '');
  const [whole = '', fraction = ''] = unsigned.split('.');
  if (fraction.length > 2) return undefined;
  const minor = Number(`${whole || '0'}${fraction.padEnd(2, '0')}`);
  if (!Number.isSafeInteger(minor)) return undefined;
  return negative && minor !== 0 ? -minor : minor;
}

/**
 * Every declared format is tried: `matched` says whether any format's pattern fitted, `readings` holds the distinct
 * values that exist (a value two formats read differently is ambiguous, never guessed).
 */
function readUnder(
  formats: readonly DateFormat[],
  text: string,
  toValue: (reading: string) => string | undefined,
): { readings: Set<string>; matched: boolean } {
  const readings = new Set<string>();
  let matched = false;
  for (const format of formats) {
    const reading = applyDateFormat(format, text);
    if (reading === undefined) continue;
    matched = true;
    const value = toValue(reading);
    if (value !== undefined) readings.add(value);
  }
  return { readings, matched };
}

function ambiguous(context: CoerceContext, text: string, readings: Set<string>, kind: 'date' | 'datetime'): Coerced {
  return fail(
    text,
    ExportCode.ambiguousDate,
    `${context.field}: "${text}" is ambiguous: it reads as ${[...readings].join(' or ')} under the declared ` +
      `${kind} formats; it is never guessed.`,
  );
}

function coerceDate(value: unknown, context: CoerceContext): Coerced {
  const text = String(value);
  if (isCalendarDate(text)) return { value: text };
  const formats = context.mapping.dateFormats;
  const { readings, matched } = readUnder(formats, text, (reading) => (isCalendarDate(reading) ? reading : undefined));
  if (readings.size === 1) return { value: [...readings][0] };
  if (readings.size > 1) return ambiguous(context, text, readings, 'date');
  if (matched || /^\d{4}-\d{2}-\d{2}$/.test(text))
    return fail(text, ExportCode.invalidDate, `${context.field}: "${text}" is not a date that exists.`);
  const declared =
    formats.length > 0
      ? `YYYY-MM-DD or ${formats.map((format) => format.source).join(', ')}`
      : 'YYYY-MM-DD (declare other formats with "date_format" in the mapping file)';
  return fail(text, ExportCode.invalidDate, `${context.field}: "${text}" is not a date in the format ${declared}.`);
}

function coerceDatetime(value: unknown, context: CoerceContext): Coerced {
  const text = String(value);
  if (isIsoDatetime(text)) return { value: text };
  const offset = context.mapping.utcOffset;
  const formats = offset === undefined ? [] : context.mapping.datetimeFormats;
  const { readings, matched } = readUnder(formats, text, (reading) =>
    isIsoDatetime(`${reading}${offset}`) ? `${reading}${offset}` : undefined,
  );
  if (readings.size === 1) return { value: [...readings][0] };
  if (readings.size > 1) return ambiguous(context, text, readings, 'datetime');
  if (matched)
    return fail(text, ExportCode.invalidDatetime, `${context.field}: "${text}" is not a datetime that exists.`);
  return fail(
    text,
    ExportCode.invalidDatetime,
    `${context.field}: "${text}" is not an ISO 8601 datetime with a UTC offset (e.g. 2024-01-31T09:30:00Z); ` +
      `declare other formats with "datetime_format" and "utc_offset".`,
  );
}

function coerceJson(type: 'json' | 'json-array', value: unknown, field: string): Coerced {
  let parsed = value;
  if (typeof value === 'string') {
    try {
      parsed = JSON.parse(value);
    } catch (error) {
      return fail(value, ExportCode.invalidJson, `${field}: the cell is not valid JSON (${(error as Error).message}).`);
    }
  }
  if (type === 'json-array' && !Array.isArray(parsed))
    return fail(value, ExportCode.invalidType, `${field} must be a JSON array.`);
  if (type === 'json' && parsed !== null && (typeof parsed !== 'object' || Array.isArray(parsed)))
    return fail(value, ExportCode.invalidType, `${field} must be a JSON object.`);
  return { value: parsed };
}

/** `a.pdf;b.pdf` or `["a.pdf"]` -> `[{document_path: "a.pdf"}, ...]` (docs/export-format.md "Columns", notes). */
function coerceDocumentPaths(value: unknown, field: string): Coerced {
  let list: unknown = value;
  if (typeof value === 'string') {
    if (value.startsWith('[')) {
      const json = coerceJson('json-array', value, field);
      if (json.issue) return json;
      list = json.value;
    } else {
      list = value
        .split(';')
        .map((part) => part.trim())
        .filter((part) => part !== '');
    }
  }
  if (!Array.isArray(list))
    return fail(value, ExportCode.invalidType, `${field} must be paths separated by ";" or a JSON array of strings.`);
  return { value: list.map((item: unknown) => (typeof item === 'string' ? { document_path: item } : item)) };
}

/**
 * National numbers become international (E.164) for the declared default country; anything else is left for the schema
 * to judge.
 */
export function normalisePhone(value: string, country: CountryCode | undefined): string {
  if (country === undefined || value.startsWith('+')) return value;
  const parsed = parsePhoneNumberFromString(value, country);
  return parsed?.isValid() ? parsed.number : value;
}
