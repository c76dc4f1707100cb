import type { ErrorObject } from 'ajv';
import type { ValidationIssue } from './issues.js';
import { asObject, type Raw } from './read.js';
import type { Labels } from './contract-normalize.js';

// The validator's errors -> the service's issue items (spec "Validation error body"), in the tenant document's own
// words: the schema and field it names (`EnergyCharge.reason`), the values it allows, its pattern or limit. Runs
// only for a body that broke the document, never on the path of one that did not.

/** Stable codes of contract violations (docs/real-platform.md "The tenant's contract"). */
export const ContractCode = {
  required: 'contract_required',
  choice: 'contract_choice',
  unknownField: 'contract_unknown_field',
  type: 'contract_type',
  pattern: 'contract_pattern',
  format: 'contract_format',
  length: 'contract_length',
  range: 'contract_range',
  items: 'contract_items',
  variant: 'contract_variant',
  invalid: 'contract_invalid',
} as const;

/** Whether a code is one of a contract's (every one starts with `contract_`). */
export function isContractCode(code: string): boolean {
  return code.startsWith('contract_');
}

/** Allowed values and field lists are cut here in a message; the document holds them all. */
const LISTED = 25;

export interface IssueContext {
  labels: Labels;
  definitions: Record<string, Raw>;
  /** Account bodies: attrs relative to the payload, as the service gives them. */
  stripPayload: boolean;
}

function shown(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

function listed(values: readonly unknown[]): string {
  const items = values
    .slice(0, LISTED)
    .map((value) => (typeof value === 'string' && value !== '' ? value : JSON.stringify(value)));
  if (values.length > LISTED) items.push(`... (${values.length} in all)`);
  return items.join(', ');
}

function attrOfError(error: ErrorObject, stripPayload: boolean): string {
  const parts = error.instancePath === '' ? [] : error.instancePath.slice(1).split('/');
  const decoded = parts.map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'));
  if (stripPayload && decoded[0] === 'payload') decoded.shift();
  const params = error.params as Record<string, unknown>;
  const child = params['missingProperty'] ?? params['additionalProperty'];
  if (typeof child === 'string') decoded.push(child);
  return decoded.join('.');
}

/** The field an attr ends in (`transactions.1.reason` -> `reason`): the report names the rest (file, column). */
function fieldName(attr: string): string {
  const parts = attr.split('.').filter((part) => part !== '' && !/^\d+$/.test(part));
  return parts.at(-1) ?? '(the body)';
}

/** The enum a property schema holds, through references, `allOf` wrappers and null guards. */
function enumOf(schema: unknown, definitions: Record<string, Raw>, depth = 0): unknown[] | undefined {
  const node = asObject(schema);
  if (!node || depth > 8) return undefined;
  if (Array.isArray(node['enum'])) return node['enum'] as unknown[];
  const ref = node['$ref'];
  if (typeof ref === 'string') return enumOf(definitions[ref.replace('#/definitions/', '')], definitions, depth + 1);
  const allOf = node['allOf'];
  if (Array.isArray(allOf) && allOf.length === 1) return enumOf(allOf[0], definitions, depth + 1);
  return enumOf(node['then'], definitions, depth + 1);
}

function where(error: ErrorObject, context: IssueContext): string {
  const label = error.parentSchema ? context.labels.get(error.parentSchema) : undefined;
  return label === undefined ? "the tenant's document" : `the tenant's document (${label})`;
}

/** What a message is made of: the field, its value as sent, the document's place and the keyword's own params. */
interface Said {
  field: string;
  value: string;
  at: string;
  limit: string;
  params: Record<string, unknown>;
  error: ErrorObject;
  context: IssueContext;
}

type Message = (said: Said) => { code: string; detail: string };

function required({ at, params, error, context }: Said): { code: string; detail: string } {
  const name = String(params['missingProperty']);
  const properties = asObject(asObject(error.parentSchema)?.['properties']);
  const values = enumOf(properties?.[name], context.definitions);
  const allowed = values ? `; allowed values: ${listed(values)}` : '';
  return { code: ContractCode.required, detail: `${name} is required by ${at}${allowed}.` };
}

function unknownField({ at, params, error }: Said): { code: string; detail: string } {
  const name = String(params['additionalProperty']);
  const fields = Object.keys(asObject(asObject(error.parentSchema)?.['properties']) ?? {}).sort();
  const known = fields.length > 0 ? `Its fields: ${listed(fields)}.` : 'It defines no fields.';
  return {
    code: ContractCode.unknownField,
    detail: `${name} is not a field of ${at}: the platform would drop it without a word. ${known}`,
  };
}

const said =
  (code: string, text: (said: Said) => string): Message =>
  (input) => ({ code, detail: text(input) });

/** One message per keyword; a keyword not named here says what the validator says. */
const MESSAGES: Readonly<Record<string, Message>> = {
  required,
  additionalProperties: unknownField,
  enum: said(
    ContractCode.choice,
    ({ field, value, at, params }) =>
      `${field}: ${value} is not a value ${at} allows; ` +
      `allowed values: ${listed(params['allowedValues'] as unknown[])}.`,
  ),
  type: said(ContractCode.type, ({ field, value, at, params }) => {
    const type = Array.isArray(params['type']) ? params['type'].join(' or ') : String(params['type']);
    return `${field}: ${value} must be of type ${type} in ${at}.`;
  }),
  pattern: said(
    ContractCode.pattern,
    ({ field, value, at, params }) =>
      `${field}: ${value} does not match the pattern ${String(params['pattern'])} of ${at}.`,
  ),
  format: said(
    ContractCode.format,
    ({ field, value, at, params }) =>
      `${field}: ${value} is not a valid ${String(params['format'])}, the format ${at} gives.`,
  ),
  maxLength: said(
    ContractCode.length,
    ({ field, value, at, limit }) => `${field}: ${value} has more than ${limit} characters, the most ${at} allows.`,
  ),
  minLength: said(
    ContractCode.length,
    ({ field, value, at, limit }) => `${field}: ${value} has fewer than ${limit} characters, the fewest ${at} allows.`,
  ),
  maximum: said(
    ContractCode.range,
    ({ field, value, at, limit }) => `${field}: ${value} is above the largest value ${at} allows (${limit}).`,
  ),
  minimum: said(
    ContractCode.range,
    ({ field, value, at, limit }) => `${field}: ${value} is below the smallest value ${at} allows (${limit}).`,
  ),
  maxItems: said(
    ContractCode.items,
    ({ field, at, limit }) => `${field}: more than ${limit} items, the most ${at} allows.`,
  ),
  minItems: said(
    ContractCode.items,
    ({ field, at, limit }) => `${field}: fewer than ${limit} items, the fewest ${at} allows.`,
  ),
  oneOf: said(ContractCode.variant, ({ field, value, at }) => `${field}: ${value} matches none of the forms of ${at}.`),
};

function describe(error: ErrorObject, field: string, context: IssueContext): { code: string; detail: string } {
  const params = error.params as Record<string, unknown>;
  const limit = typeof params['limit'] === 'number' ? String(params['limit']) : '';
  const input: Said = { field, value: shown(error.data), at: where(error, context), limit, params, error, context };
  const message = MESSAGES[error.keyword] ?? MESSAGES[error.keyword === 'anyOf' ? 'oneOf' : ''];
  if (message) return message(input);
  return { code: ContractCode.invalid, detail: `${field}: ${error.message ?? 'is not valid'}, says ${input.at}.` };
}

/** Every problem once, at its attr; the guards that only select a variant (`if`) say nothing of their own. */
export function contractIssues(errors: readonly ErrorObject[], context: IssueContext): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  const seen = new Set<string>();
  for (const error of errors) {
    if (error.keyword === 'if') continue;
    const attr = attrOfError(error, context.stripPayload);
    const { code, detail } = describe(error, fieldName(attr), context);
    const key = `${attr}|${code}`;
    if (seen.has(key)) continue;
    seen.add(key);
    issues.push({ attr, code, detail });
  }
  return issues;
}
