import type { CountryCode } from 'libphonenumber-js';
import { isJsonNumber, jsonNumberText } from '../sources/json-value.js';
import type { FileMapping } from './mapping-rules.js';

// What coercing one cell gives (coerce.ts and the number and JSON coercions beside it). Pure.

export type Coerced =
  { value: unknown; issue?: undefined } | { value: unknown; issue: { code: string; message: string } };

export interface CoerceContext {
  mapping: FileMapping;
  field: string;
  phoneCountry: CountryCode | undefined;
}

export function issue(value: unknown, code: string, message: string): Coerced {
  return { value: isJsonNumber(value) ? jsonNumberText(value) : value, issue: { code, message } };
}

/** A value as its text: a JSON number as written in the export (`1.10`, never `1.1`). */
export function textOf(value: unknown): string {
  return isJsonNumber(value) ? jsonNumberText(value) : String(value);
}
