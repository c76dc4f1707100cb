import { parsePhoneNumberFromString, type CountryCode } from 'libphonenumber-js';
import { applyDateFormat, type DateFormat } from './date-format.js';
import { Code, isCalendarDate, isIsoDatetime } from '../schema/index.js';
import { isJsonNumber, jsonNumberText, type JsonNumber } from '../sources/json-value.js';
import type { FieldType } from './fields.js';
import { ExportCode } from './issue-codes.js';
import { issue, textOf, type CoerceContext, type Coerced } from './coerced.js';
import { coerceMinorAmount, coerceNumber } from './coerce-number.js';
import { parseDecimal } from './decimal.js';
import { coerceDocumentPaths, coerceJson } from './json-cell.js';
import { zonedDatetime } from './time-zone.js';

// One cell -> one payload value (docs/export-format.md "Values"). Pure. A cell that cannot be coerced
// yields an issue and keeps its text, so that the payload still shows what was there and the
// schema does not report the field as missing as well.

export type { Coerced, CoerceContext } from './coerced.js';

const TRUE = new Set(['true', '1', 'yes', 'y']);
const FALSE = new Set(['false', '0', 'no', 'n']);

/** Empty cells (and JSON nulls) mean "no data": the field is omitted (spec "General rules"). */
export function isEmptyCell(value: unknown): boolean {
  return value === undefined || value === null || (typeof value === 'string' && value.trim() === '');
}

/**
 * A JSON number (from a JSON record or a JSON cell) comes marked with its source text (sources/json-value.ts) and is
 * converted here by what its field takes: text keeps its digits (`1.10` is sent as "1.10"), a number is checked
 * against the JSON number that will carry it.
 */
export function coerceValue(type: FieldType, input: unknown, context: CoerceContext): Coerced {
  const value = typeof input === 'string' && !isJsonNumber(input) ? input.trim() : input;
  switch (type) {
    case 'string':
      return isJsonNumber(value)
        ? { value: jsonNumberText(value) }
        : typeof value === 'string'
          ? { value }
          : typeof value === 'number'
            ? { value: String(value) }
            : issue(value, ExportCode.invalidType, `${context.field} must be text.`);
    case 'phone':
      return typeof value === 'string' && !isJsonNumber(value)
        ? coercePhone(value, context)
        : issue(value, ExportCode.invalidType, `${context.field} must be text.`);
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

/** A JSON number as a boolean: exactly 1 or 0 (`1.0` too), as the cell text "1" or "0". */
function numberAsBooleanText(value: JsonNumber): string {
  const decimal = parseDecimal(jsonNumberText(value));
  if (decimal?.digits === '') return '0';
  return decimal?.digits === '1' && decimal.exponent === 0 && !decimal.negative ? '1' : jsonNumberText(value);
}

function coerceBoolean(value: unknown, field: string): Coerced {
  if (typeof value === 'boolean') return { value };
  const text = (isJsonNumber(value) ? numberAsBooleanText(value) : String(value)).toLowerCase();
  if (TRUE.has(text)) return { value: true };
  if (FALSE.has(text)) return { value: false };
  return issue(
    value,
    ExportCode.invalidBoolean,
    `${field}: "${textOf(value)}" is not a boolean (true/false, 1/0, yes/no, y/n); map other values with "values" ` +
      `in the mapping file.`,
  );
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
  return issue(
    text,
    ExportCode.ambiguousDate,
    `${context.field}: "${text}" is ambiguous: it reads as ${[...readings].join(' or ')} under the declared ` +
      `${kind} formats; it is never guessed.`,
  );
}

function coerceDate(value: unknown, context: CoerceContext): Coerced {
  const text = textOf(value);
  if (isCalendarDate(text)) return { value: text };
  const formats = context.mapping.dateFormats;
  const { readings, matched } = readUnder(formats, text, (reading) => (isCalendarDate(reading) ? reading : undefined));
  if (readings.size === 1) return { value: [...readings][0] };
  if (readings.size > 1) return ambiguous(context, text, readings, 'date');
  if (matched || /^\d{4}-\d{2}-\d{2}$/.test(text))
    return issue(text, ExportCode.invalidDate, `${context.field}: "${text}" is not a date that exists.`);
  const declared =
    formats.length > 0
      ? `YYYY-MM-DD or ${formats.map((format) => format.source).join(', ')}`
      : 'YYYY-MM-DD (declare other formats with "date_format" in the mapping file)';
  return issue(text, ExportCode.invalidDate, `${context.field}: "${text}" is not a date in the format ${declared}.`);
}

function coerceDatetime(value: unknown, context: CoerceContext): Coerced {
  const text = textOf(value);
  if (isIsoDatetime(text)) return { value: text };
  if (context.mapping.timeZone !== undefined) return coerceLocalDatetime(text, context, context.mapping.timeZone);
  const offset = context.mapping.utcOffset;
  const formats = offset === undefined ? [] : context.mapping.datetimeFormats;
  const { readings, matched } = readUnder(formats, text, (reading) =>
    isIsoDatetime(`${reading}${offset}`) ? `${reading}${offset}` : undefined,
  );
  if (readings.size === 1) return { value: [...readings][0] };
  if (readings.size > 1) return ambiguous(context, text, readings, 'datetime');
  if (matched)
    return issue(text, ExportCode.invalidDatetime, `${context.field}: "${text}" is not a datetime that exists.`);
  return issue(
    text,
    ExportCode.invalidDatetime,
    `${context.field}: "${text}" is not an ISO 8601 datetime with a UTC offset (e.g. 2024-01-31T09:30:00Z); ` +
      `declare other formats with "datetime_format" and "utc_offset".`,
  );
}

/** `2026-10-25T01:30` or `2026-10-25 01:30:00`: an ISO datetime without an offset (a local time). */
const ISO_LOCAL = /^(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2})(:\d{2})?$/u;

/** A datetime without an offset, as a local time in the mapping file's timezone (time-zone.ts). */
function coerceLocalDatetime(text: string, context: CoerceContext, zone: string): Coerced {
  const iso = ISO_LOCAL.exec(text);
  const { readings, matched } = iso
    ? { readings: new Set([`${iso[1]}T${iso[2]}${iso[3] ?? ':00'}`]), matched: true }
    : readUnder(context.mapping.datetimeFormats, text, (reading) =>
        isIsoDatetime(`${reading}Z`) ? reading : undefined,
      );
  if (readings.size > 1) return ambiguous(context, text, readings, 'datetime');
  const local = [...readings][0];
  if (local === undefined || !isIsoDatetime(`${local}Z`)) {
    if (matched)
      return issue(text, ExportCode.invalidDatetime, `${context.field}: "${text}" is not a datetime that exists.`);
    const declared = ['YYYY-MM-DDTHH:mm:ss', ...context.mapping.datetimeFormats.map((format) => format.source)];
    return issue(
      text,
      ExportCode.invalidDatetime,
      `${context.field}: "${text}" is not a datetime in the format ${declared.join(', ')} (a local time in ` +
        `${zone}) or ISO 8601 with a UTC offset.`,
    );
  }
  const zoned = zonedDatetime(local, zone, context.mapping.dst);
  if ('value' in zoned) return { value: zoned.value };
  if (zoned.problem === 'gap')
    return issue(
      text,
      ExportCode.invalidDatetime,
      `${context.field}: "${text}" is a local time that does not exist in ${zone} (the clocks went forward past ` +
        'it); correct it, or give it with its UTC offset.',
    );
  return issue(
    text,
    ExportCode.ambiguousDate,
    `${context.field}: "${text}" occurs twice in ${zone} (the clocks went back through it): ` +
      `${zoned.readings.join(' or ')}; declare which with "dst": "earlier" or "later" in the mapping file, or give ` +
      'it with its UTC offset. It is never guessed.',
  );
}

/**
 * With a default country (the mapping file's phone_default_country), a number without `+` is read as a national number
 * of that country: one that is not valid there is named as such ("not a valid GB number"), not as a malformed
 * international one. A number with `+` is left for the schema to judge.
 */
function coercePhone(value: string, context: CoerceContext): Coerced {
  const country = context.phoneCountry;
  const normalised = normalisePhone(value, country);
  if (country === undefined || normalised.startsWith('+')) return { value: normalised };
  return issue(
    value,
    Code.invalidPhoneNumber,
    `${context.field}: "${value}" is not a valid ${country} number (a number without + is read as a ${country} ` +
      `number, the mapping file's phone_default_country); correct it, or give it in international format with +.`,
  );
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
