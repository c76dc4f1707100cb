// Type-safe reads of values that have not been validated yet. Cross-field rules run on the raw
// input so that every problem of a payload is reported at once, even when another field is
// malformed (zod skips object-level checks once any inner field fails).

export type Raw = Record<string, unknown>;

export function asObject(value: unknown): Raw | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Raw) : undefined;
}

export function asList(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

export function asString(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

export function asNumber(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

/** Joins path parts into the service's dot-delimited `attr` (empty parts are skipped). */
export function attrOf(...parts: Array<string | number>): string {
  // A loop, not filter/join: rules build an attr per list item of every request (profiled: the hot path of validation).
  let attr = '';
  for (const part of parts) {
    if (part === '') continue;
    attr = attr === '' ? String(part) : `${attr}.${part}`;
  }
  return attr;
}
