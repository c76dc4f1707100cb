import { isJsonNumber, jsonNumberText } from '../sources/json-value.js';

// JSON values as the sources' parser returns them (numbers marked with their source text: sources/json-value.ts)
// written back as text, every number digit for digit as it was written.

/** A JSON value as the text a cell holds: strings as they are, numbers as written, objects and lists as JSON. */
export function jsonText(value: unknown): string | undefined {
  if (value === null || value === undefined) return undefined;
  if (isJsonNumber(value)) return jsonNumberText(value);
  if (typeof value === 'string') return value;
  if (typeof value === 'object') return toJson(value);
  // true, false, or a plain number (the parser marks its numbers; a caller's own is written as JSON writes it).
  return JSON.stringify(value);
}

/** JSON text of a parsed value, numbers as written. */
export function toJson(value: unknown): string {
  if (isJsonNumber(value)) return jsonNumberText(value);
  if (Array.isArray(value)) return `[${value.map(toJson).join(',')}]`;
  if (typeof value === 'object' && value !== null)
    return `{${Object.entries(value)
      .map(([key, inner]) => `${JSON.stringify(key)}:${toJson(inner)}`)
      .join(',')}}`;
  return JSON.stringify(value);
}
