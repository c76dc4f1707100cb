import { z } from 'zod';
import type { ValidationIssue } from '../schema/index.js';

// Spec "What the service does": only documented fields may be sent; undocumented ones may gain
// meaning later. The client refuses a body with an undocumented key. It walks the request
// schema's shape instead of running the schema: the field rules (phone numbers, dates) are the
// service's to judge, and a full parse of an account costs ~5x the rest of the request's CPU.

function unwrap(schema: z.ZodType): z.ZodType {
  let current = schema;
  for (let depth = 0; depth < 10; depth += 1) {
    if (current instanceof z.ZodOptional || current instanceof z.ZodNullable) current = current.unwrap() as z.ZodType;
    else if (current instanceof z.ZodDefault) current = current.unwrap() as z.ZodType;
    else return current;
  }
  return current;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** What the walk needs of a schema, computed once per schema (zod builds `shape` on each access). */
type Node =
  { kind: 'object'; fields: Map<string, z.ZodType> } | { kind: 'array'; element: z.ZodType } | { kind: 'other' };
const nodes = new WeakMap<z.ZodType, Node>();

function nodeOf(schema: z.ZodType): Node {
  let node = nodes.get(schema);
  if (node) return node;
  const inner = unwrap(schema);
  if (inner instanceof z.ZodObject) {
    // A loose object (e.g. a metadata value) documents nothing about its keys.
    const loose = inner.def.catchall !== undefined && !(inner.def.catchall instanceof z.ZodNever);
    node = loose
      ? { kind: 'other' }
      : { kind: 'object', fields: new Map<string, z.ZodType>(Object.entries(inner.shape)) };
  } else if (inner instanceof z.ZodArray) {
    node = { kind: 'array', element: inner.element as z.ZodType };
  } else {
    node = { kind: 'other' };
  }
  nodes.set(schema, node);
  return node;
}

/** Keys of `value` that its schema does not document, as issue items (attr = dotted path). */
export function undocumentedFields(schema: z.ZodType, value: unknown, path = ''): ValidationIssue[] {
  const node = nodeOf(schema);
  if (node.kind === 'object' && isRecord(value)) {
    const issues: ValidationIssue[] = [];
    for (const key of Object.keys(value)) {
      const field = node.fields.get(key);
      const item = value[key];
      if (field !== undefined && (typeof item !== 'object' || item === null)) continue;
      const attr = path ? `${path}.${key}` : key;
      if (field === undefined)
        issues.push({
          attr,
          code: 'unknown_field',
          detail: `${key} is not a documented field; only documented fields may be sent.`,
        });
      else issues.push(...undocumentedFields(field, item, attr));
    }
    return issues;
  }
  if (node.kind === 'array' && Array.isArray(value)) {
    return value.flatMap((item, index) =>
      undocumentedFields(node.element, item, path ? `${path}.${index}` : String(index)),
    );
  }
  return [];
}
