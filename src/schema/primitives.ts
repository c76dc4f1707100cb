import { z } from 'zod';
import { Code } from './codes.js';
import { isValidInternationalPhone } from './phone.js';
import { documentPathProblem } from './document-path.js';

/** Raises a custom issue carrying one of the platform's codes (see issues.ts). */
export function fail(ctx: z.core.ParsePayload<unknown>, code: string, message: string, path: PropertyKey[] = []): void {
  ctx.issues.push({ code: 'custom', input: ctx.value, message, params: { code }, path });
}

/** The value of the digits `0`-`9` at `text[start..start+count)`, or -1 if one is not a digit. */
function digits(text: string, start: number, count: number): number {
  let value = 0;
  for (let index = start; index < start + count; index += 1) {
    const digit = text.charCodeAt(index) - 48;
    if (digit < 0 || digit > 9) return -1;
    value = value * 10 + digit;
  }
  return value;
}

/** True when `value` is `YYYY-MM-DD` and names a day that exists (no 2023-02-30). */
export function isCalendarDate(value: string): boolean {
  // Character arithmetic, not a RegExp or Date objects: this runs several times per row of an
  // export (measured: the RegExp version was about 2% of validate's time).
  if (value.length !== 10 || value.charCodeAt(4) !== 45 || value.charCodeAt(7) !== 45) return false;
  const [year, month, day] = [digits(value, 0, 4), digits(value, 5, 2), digits(value, 8, 2)];
  if (year < 0 || month < 1 || month > 12 || day < 1) return false;
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  const days = month === 2 ? (leap ? 29 : 28) : month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
  return day <= days;
}

const DATETIME = /^(\d{4}-\d{2}-\d{2})T([01]\d|2[0-3]):[0-5]\d(:[0-5]\d(\.\d{1,9})?)?(Z|[+-]([01]\d|2[0-3]):?[0-5]\d)$/;

/** True for an ISO 8601 datetime with `Z` or a UTC offset whose date exists. */
export function isIsoDatetime(value: string): boolean {
  const match = DATETIME.exec(value);
  return match !== null && isCalendarDate(match[1] ?? '');
}

/** `YYYY-MM-DD` that exists (spec "General rules"). */
export const date = z.string().check((ctx) => {
  if (!isCalendarDate(ctx.value))
    fail(ctx, Code.invalidDate, `${JSON.stringify(ctx.value)} is not a date in the format YYYY-MM-DD.`);
});

/** ISO 8601 datetime with `Z` or an offset (spec "General rules"). */
export const datetime = z.string().check((ctx) => {
  if (!isIsoDatetime(ctx.value)) {
    fail(
      ctx,
      Code.invalidDatetime,
      `${JSON.stringify(ctx.value)} is not an ISO 8601 datetime with a UTC offset, e.g. 2024-01-31T09:30:00Z.`,
    );
  }
});

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const TEST_EMAIL = /^(test|xxx)@|@test\.com$|@test\.co\.uk$|\.xxx?$/i;

/** An e-mail address the `email` rule below accepts (its length apart). */
export function isPlainEmail(value: string): boolean {
  return EMAIL.test(value) && !TEST_EMAIL.test(value);
}

/**
 * An e-mail address; the platform refuses obvious test addresses (docs/service.md "Validation rules the platform
 * applies").
 */
export const email = z
  .string()
  .max(254)
  .check((ctx) => {
    if (!EMAIL.test(ctx.value))
      fail(ctx, Code.invalidEmail, `${JSON.stringify(ctx.value)} is not a valid e-mail address.`);
    else if (TEST_EMAIL.test(ctx.value))
      fail(ctx, Code.possibleTestEmailAddress, `${ctx.value} looks like a test e-mail address.`);
  });

/** A phone number in international format, `+` and country code first (spec: customer mobile/landline). */
export const phone = z
  .string()
  .max(32)
  .check((ctx) => {
    // Exactly libphonenumber-js's answer, with each country's patterns compiled once (phone.ts).
    if (!isValidInternationalPhone(ctx.value)) {
      fail(
        ctx,
        Code.invalidPhoneNumber,
        `${ctx.value} is not a valid phone number in international format (e.g. +447911123456).`,
      );
    }
  });

/** A path relative to the supplier's document root; it may not reach out of it, in any encoding (document-path.ts). */
export const documentPath = z
  .string()
  .min(1)
  .max(1024)
  .check((ctx) => {
    const problem = documentPathProblem(ctx.value);
    if (problem !== undefined)
      fail(
        ctx,
        Code.invalidDocumentPath,
        `${JSON.stringify(ctx.value)} is not a path below the supplier's document root: ${problem}.`,
      );
  });

/** Money and other amounts: JSON numbers in requests (spec: "number in requests"). */
export const amount = z.number().finite();

/** metadata items: key and a JSON object value; duplicate keys are refused. */
export const metadata = z
  .array(z.strictObject({ key: z.string().min(1).max(1024), value: z.record(z.string(), z.unknown()) }))
  .check((ctx) => {
    const seen = new Set<string>();
    ctx.value.forEach((item, index) => {
      if (seen.has(item.key))
        fail(ctx, Code.metadataHasDuplicateKeys, `metadata key ${item.key} appears more than once.`, [index, 'key']);
      seen.add(item.key);
    });
  });
