import type { z } from 'zod';

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

/** Turns a zod error into the service's issue items, mapping zod's codes to the platform's. */
export function toValidationIssues(error: z.core.$ZodError): ValidationIssue[] {
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
    issues.push({ attr, code: platformCode(issue), detail: issue.message });
  }
  return issues;
}

function platformCode(issue: z.core.$ZodIssue): string {
  switch (issue.code) {
    case 'custom': {
      const code = (issue.params as { code?: unknown } | undefined)?.code;
      return typeof code === 'string' ? code : 'invalid';
    }
    case 'invalid_type':
      return issue.input === undefined ? 'required' : issue.input === null ? 'null' : 'invalid';
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
