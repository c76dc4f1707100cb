import type { z } from 'zod';
import { Code } from './codes.js';

/**
 * One validation problem, in the shape of an item of the service's validation error body
 * (spec "Validation error body"): `attr` is a dot-delimited path into the payload with
 * zero-based numeric indexes, `code` is stable and machine-readable, `detail` is for people.
 */
export interface ValidationIssue {
  attr: string;
  code: string;
  detail: string;
}

/**
 * Turns a zod error into the service's issue items, mapping zod's codes to the platform's.
 * `input` is what was parsed: a type error's value is read from it (not with zod's
 * reportInput, which slows every parse, also the successful ones), so that a missing field
 * ("required") differs from a wrong one.
 */
export function toValidationIssues(error: z.core.$ZodError, input: unknown): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  for (const issue of error.issues) {
    const attr = issue.path.map(String).join('.');
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) {
        issues.push({
          attr: attr ? `${attr}.${key}` : key,
          code: 'unknown_field',
          detail: `${key} is not a documented field; only documented fields may be sent.`,
        });
      }
      continue;
    }
    const code = platformCode(issue, input);
    issues.push({ attr, code, detail: code === 'invalid_choice' ? refusedChoice(issue, input) : issue.message });
  }
  return issues;
}

/** Longest value quoted in a message. */
const QUOTED_LIMIT = 60;

/** A value not among a field's choices: the words say which value was refused (`Invalid option "HOUSEHOLD": ...`). */
function refusedChoice(issue: z.core.$ZodIssue, input: unknown): string {
  const value = valueAt(input, issue.path);
  if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') return issue.message;
  const text = String(value);
  const quoted = JSON.stringify(text.length > QUOTED_LIMIT ? `${text.slice(0, QUOTED_LIMIT)}...` : text);
  return issue.message.replace(/^Invalid option(?=:)/, `Invalid option ${quoted}`);
}

/** Fields whose absence the platform reports with a code of its own instead of `required`. */
const MISSING_CODES: Partial<Record<string, string>> = { transaction_id: Code.missingTransactionId };

function valueAt(input: unknown, path: PropertyKey[]): unknown {
  let node = input;
  for (const key of path) {
    if (typeof node !== 'object' || node === null) return undefined;
    node = (node as Record<PropertyKey, unknown>)[key];
  }
  return node;
}

function platformCode(issue: z.core.$ZodIssue, input: unknown): string {
  switch (issue.code) {
    case 'custom': {
      const code = (issue.params as { code?: unknown } | undefined)?.code;
      return typeof code === 'string' ? code : 'invalid';
    }
    case 'invalid_type': {
      const value = valueAt(input, issue.path);
      if (value === undefined) return MISSING_CODES[String(issue.path.at(-1))] ?? 'required';
      return value === null ? 'null' : 'invalid';
    }
    case 'invalid_value':
      return 'invalid_choice';
    case 'too_big':
      return issue.origin === 'string' || issue.origin === 'array' ? 'max_length' : 'max_value';
    case 'too_small':
      return issue.origin === 'string' || issue.origin === 'array' ? 'min_length' : 'min_value';
    case 'invalid_format':
      return issue.format === 'email' ? 'invalid_email' : 'invalid';
    default:
      return 'invalid';
  }
}
