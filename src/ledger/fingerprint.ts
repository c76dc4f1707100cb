import { createHash } from 'node:crypto';

/**
 * JSON with object keys sorted at every level, so that two payloads equal in content have the
 * same text whatever order their source files gave the fields in. Arrays keep their order:
 * the order of customers, notes and transactions is meaningful.
 */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === 'object') {
    const sorted: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort()) {
      const inner = (value as Record<string, unknown>)[key];
      if (inner === undefined) continue;
      // An own property, as the payload has it: an assignment to "__proto__" would set the prototype and drop it.
      if (key === '__proto__')
        Object.defineProperty(sorted, key, { value: sortKeys(inner), enumerable: true, writable: true });
      else sorted[key] = sortKeys(inner);
    }
    return sorted;
  }
  // JSON.stringify would write Infinity or NaN as null ("no data"): a value changed on the way. The mapping sends
  // only numbers a JSON number carries, so this is a defect, never the data's fault.
  if (typeof value === 'number' && !Number.isFinite(value))
    throw new Error(`internal: ${value} reached the ledger; JSON cannot carry it (it would be stored as null)`);
  return value;
}

/** sha256 (hex) of the canonical JSON: how a data change between two exports is detected. */
export function fingerprintOf(value: unknown): string {
  return createHash('sha256').update(canonicalJson(value)).digest('hex');
}
