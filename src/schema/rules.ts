import { Code } from './codes.js';
import type { ValidationIssue } from './issues.js';
import { isCalendarDate, isIsoDatetime } from './primitives.js';
import { asList, asNumber, asObject, asString, attrOf, type Raw } from './read.js';

// Cross-field rules: the spec's ("at least one of body or document_paths") and the real
// platform's where the spec is silent (docs/service.md "Validation rules the platform applies"). Each takes raw input
// and
// the attr prefix where it sits, and returns issues; none throws on malformed input.

const PAYMENT_LIKE = new Set(['PAYMENT', 'REPAYMENT']);
const TAXABLE = new Set(['CHARGE', 'SUPPLY_CHARGE']);
const SUPPLY_CHARGE_ONLY = new Set(['SUPPLY_CHARGE']);
/** Fields that only some transaction types may carry. */
const ALLOWED_ON: ReadonlyArray<[string, ReadonlySet<string>]> = [
  ['reference', PAYMENT_LIKE],
  ['payment_type', PAYMENT_LIKE],
  ['product_code', SUPPLY_CHARGE_ONLY],
  ['line_items', SUPPLY_CHARGE_ONLY],
  ['tax_items', TAXABLE],
];
const AMOUNT_TOLERANCE = 0.005;

function issue(attr: string, code: string, detail: string): ValidationIssue {
  return { attr, code, detail };
}

function validDate(value: unknown): string | undefined {
  const text = asString(value);
  return text !== undefined && isCalendarDate(text) ? text : undefined;
}

export function noteRules(note: unknown, prefix: string): ValidationIssue[] {
  const raw = asObject(note);
  if (!raw) return [];
  const issues: ValidationIssue[] = [];
  if (asString(raw['body']) === undefined && asList(raw['document_paths']).length === 0) {
    issues.push(
      issue(prefix, Code.noteBodyOrDocumentPathNotFound, 'A note needs a body or at least one document path.'),
    );
  }
  const createdAt = asString(raw['created_at']);
  const unpinAt = asString(raw['unpin_at']);
  if (
    createdAt &&
    unpinAt &&
    isIsoDatetime(createdAt) &&
    isIsoDatetime(unpinAt) &&
    Date.parse(unpinAt) < Date.parse(createdAt)
  ) {
    issues.push(
      issue(
        attrOf(prefix, 'unpin_at'),
        Code.noteUnpinAtEarlierThanCreationDate,
        `unpin_at ${unpinAt} is before created_at ${createdAt}.`,
      ),
    );
  }
  return issues;
}

export function transactionRules(transaction: unknown, prefix: string, today: string): ValidationIssue[] {
  const raw = asObject(transaction);
  if (!raw) return [];
  const issues: ValidationIssue[] = [];
  const type = asString(raw['type']) ?? '';
  const amount = asNumber(raw['amount']);
  if (PAYMENT_LIKE.has(type) && amount !== undefined && amount < 0) {
    issues.push(
      issue(
        attrOf(prefix, 'amount'),
        Code.negativePaymentAmount,
        `A ${type} may not have a negative amount (${amount}).`,
      ),
    );
  }
  const date = validDate(raw['transaction_date']);
  if (date && date > today) {
    issues.push(
      issue(attrOf(prefix, 'transaction_date'), Code.transactionInFuture, `transaction_date ${date} is in the future.`),
    );
  }
  for (const [field, types] of ALLOWED_ON) {
    if (raw[field] !== undefined && type && !types.has(type)) {
      issues.push(
        issue(
          attrOf(prefix, field),
          Code.fieldNotAllowedForTransactionType,
          `${field} is not allowed on a ${type} transaction.`,
        ),
      );
    }
  }
  if (type === 'SUPPLY_CHARGE') issues.push(...supplyChargeRules(raw, prefix, amount));
  return issues;
}

function supplyChargeRules(raw: Raw, prefix: string, amount: number | undefined): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  for (const field of ['product_code', 'line_items'] as const) {
    if (raw[field] === undefined)
      issues.push(issue(attrOf(prefix, field), Code.required, `A SUPPLY_CHARGE needs ${field}.`));
  }
  const lineItems = asList(raw['line_items']);
  let net = 0;
  lineItems.forEach((item, index) => {
    const line = asObject(item) ?? {};
    const at = attrOf(prefix, 'line_items', index);
    const start = validDate(line['start_date']);
    const end = validDate(line['end_date']);
    if (start && end && end < start)
      issues.push(
        issue(attrOf(at, 'end_date'), Code.startDateLaterThanEndDate, `end_date ${end} is before start_date ${start}.`),
      );
    if (line['units'] !== undefined && asList(line['units']).length !== 2) {
      issues.push(issue(attrOf(at, 'units'), Code.lineItemUnitsMustBeTwoValues, 'units must hold exactly two values.'));
    }
    const units = asNumber(line['number_of_units']);
    const price = asNumber(line['price_per_unit']);
    const lineNet = asNumber(line['net_amount']);
    if (
      units !== undefined &&
      price !== undefined &&
      lineNet !== undefined &&
      Math.abs(units * price - lineNet) > AMOUNT_TOLERANCE
    ) {
      issues.push(
        issue(
          attrOf(at, 'net_amount'),
          Code.incorrectLineItemNetAmount,
          `net_amount ${lineNet} is not price_per_unit x number_of_units (${price} x ${units}).`,
        ),
      );
    }
    net += lineNet ?? 0;
  });
  const tax = asList(raw['tax_items']).reduce<number>(
    (sum, item) => sum + (asNumber(asObject(item)?.['amount']) ?? 0),
    0,
  );
  if (amount !== undefined && lineItems.length > 0 && Math.abs(net + tax - amount) > AMOUNT_TOLERANCE) {
    issues.push(
      issue(
        attrOf(prefix, 'amount'),
        Code.amountDoesNotMatchLineItems,
        `amount ${amount} is not the line items' net amount plus tax (${(net + tax).toFixed(2)}).`,
      ),
    );
  }
  return issues;
}

/** Unique values of `field` across `items`; a repeat is reported where it repeats. */
export function duplicateRule(
  items: Array<{ item: unknown; attr: string }>,
  field: string,
  code: string,
  what: string,
): ValidationIssue[] {
  const seen = new Set<string>();
  const issues: ValidationIssue[] = [];
  for (const { item, attr } of items) {
    const value = asString(asObject(item)?.[field]);
    if (value === undefined) continue;
    if (seen.has(value)) issues.push(issue(attrOf(attr, field), code, `${what} ${value} appears more than once.`));
    seen.add(value);
  }
  return issues;
}

export function transactionListRules(items: Array<{ item: unknown; attr: string }>, today: string): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  for (const { item, attr } of items) for (const found of transactionRules(item, attr, today)) issues.push(found);
  for (const found of duplicateRule(items, 'transaction_id', Code.duplicateTransactionIds, 'transaction_id'))
    issues.push(found);
  return issues;
}

export function statementRules(statements: unknown, prefix: string): ValidationIssue[] {
  const items = asList(statements).map((item, index) => ({ item, attr: attrOf(prefix, index) }));
  const issues = duplicateRule(items, 'statement_id', Code.duplicateStatementIds, 'statement_id');
  for (const { item, attr } of items) {
    const raw = asObject(item) ?? {};
    const from = validDate(raw['bill_period_from_date']);
    const to = validDate(raw['bill_period_to_date']);
    if (from && to && to < from) {
      issues.push(
        issue(
          attrOf(attr, 'bill_period_to_date'),
          Code.startDateLaterThanEndDate,
          `bill_period_to_date ${to} is before bill_period_from_date ${from}.`,
        ),
      );
    }
  }
  return issues;
}
