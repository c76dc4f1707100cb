import type { z } from 'zod';
import { accountPayloadSchema } from './account.js';
import { accountPayloadFits, notesRequestFits, transactionsRequestFits } from './quick-check.js';
import { accountRules } from './account-rules.js';
import { toValidationIssues, type ValidationIssue } from './issues.js';
import { asList, asObject, attrOf } from './read.js';
import {
  accountRequestSchema,
  historicalStatementsRequestSchema,
  notesRequestSchema,
  paymentInstructionRequestSchema,
  transactionsRequestSchema,
} from './requests.js';
import { noteRules, statementRules, transactionListRules } from './rules.js';

// One entry point per request body: the schema's field rules plus the cross-field rules, every
// problem reported at once (spec "Validation error body"). Used by `migrate validate`, by the
// engine before any request, and by the sandbox to answer as the service would.

export interface ValidationOptions {
  /** Today's date (`YYYY-MM-DD`) for "not in the future" rules; defaults to the UTC date now. */
  today?: string;
}

function todayOf(options: ValidationOptions): string {
  return options.today ?? new Date().toISOString().slice(0, 10);
}

function run(schema: z.ZodType, input: unknown, rules: ValidationIssue[], fits = false): ValidationIssue[] {
  const parsed = fits ? undefined : schema.safeParse(input);
  const issues = parsed === undefined || parsed.success ? [] : toValidationIssues(parsed.error, input);
  // Most records break no cross-field rule: skip building the dedupe set for them.
  if (rules.length === 0) return issues;
  const seen = new Set(issues.map((item) => `${item.attr}|${item.code}`));
  for (const rule of rules) {
    const key = `${rule.attr}|${rule.code}`;
    if (!seen.has(key)) issues.push(rule);
    seen.add(key);
  }
  return issues;
}

/** The account payload itself (the object under `payload`). */
export function validateAccountPayload(payload: unknown, options: ValidationOptions = {}): ValidationIssue[] {
  // The schema judges what the quick check does not certainly accept (quick-check.ts).
  return run(accountPayloadSchema, payload, accountRules(payload, todayOf(options)), accountPayloadFits(payload));
}

/** `{ payload }` as sent to v2 validate and create; attrs are relative to the payload, as the service gives them. */
export function validateAccountRequest(body: unknown, options: ValidationOptions = {}): ValidationIssue[] {
  const raw = asObject(body);
  if (raw && Object.keys(raw).length === 1 && 'payload' in raw) return validateAccountPayload(raw['payload'], options);
  return run(accountRequestSchema, body, []);
}

export function validateNotesRequest(body: unknown): ValidationIssue[] {
  const notes = asList(asObject(body)?.['notes']);
  return run(
    notesRequestSchema,
    body,
    notes.flatMap((note, index) => noteRules(note, attrOf('notes', index))),
    notesRequestFits(body),
  );
}

export function validateTransactionsRequest(body: unknown, options: ValidationOptions = {}): ValidationIssue[] {
  const items = asList(asObject(body)?.['transactions']).map((item, index) => ({
    item,
    attr: attrOf('transactions', index),
  }));
  return run(
    transactionsRequestSchema,
    body,
    transactionListRules(items, todayOf(options)),
    transactionsRequestFits(body),
  );
}

export function validateHistoricalStatementsRequest(body: unknown): ValidationIssue[] {
  return run(historicalStatementsRequestSchema, body, statementRules(asObject(body)?.['statements'], 'statements'));
}

export function validatePaymentInstructionRequest(body: unknown): ValidationIssue[] {
  return run(paymentInstructionRequestSchema, body, []);
}
