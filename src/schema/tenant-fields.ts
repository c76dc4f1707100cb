import type { ValidationIssue } from './issues.js';
import { asObject, attrOf } from './read.js';

// Payload fields the spec does not list but a tenant of the real platform defines (meter points on a supply
// address, priority-services registrations on a customer, a prepayment meter on a transaction). The mapping file
// declares them per level of the payload (docs/real-platform.md "Tenant fields"); they are copied into the payload
// as given, checked locally for their JSON kind (and, with the tenant's contract, against its document), and
// passed by the spec's checks, which judge every other field.

export const TENANT_FIELD_KINDS = ['array', 'object', 'string', 'number', 'boolean'] as const;
export type TenantFieldKind = (typeof TENANT_FIELD_KINDS)[number];

/**
 * The levels a tenant field may sit at: a file kind's records (and the same records inside an account: its notes,
 * statements, the transactions of its ledgers), and a transaction's line and tax items.
 */
export const TENANT_SCOPES = [
  'accounts',
  'customers',
  'supply_addresses',
  'notes',
  'transactions',
  'line_items',
  'tax_items',
  'statements',
  'payment_instructions',
] as const;
export type TenantScope = (typeof TENANT_SCOPES)[number];

/** Declared tenant fields per scope: name -> JSON kind (a scope left out declares none). */
export type TenantFields = Readonly<Partial<Record<TenantScope, Readonly<Record<string, TenantFieldKind>>>>>;

export const NO_TENANT_FIELDS: TenantFields = {};

const NONE: Readonly<Record<string, TenantFieldKind>> = {};

/** The fields declared at one scope. */
export function tenantFieldsOf(tenant: TenantFields, scope: TenantScope): Readonly<Record<string, TenantFieldKind>> {
  return tenant[scope] ?? NONE;
}

/** The request bodies whose parts hold tenant fields. `account` is the payload itself (the object under payload). */
export type TenantBody = 'account' | 'notes' | 'transactions' | 'statements' | 'payment_instruction';

/** Where each scope's objects sit in a body; `embedded`: inside a JSON cell, so their kinds are checked here. */
interface ScopeShape {
  scope?: TenantScope;
  embedded?: boolean;
  lists?: Readonly<Record<string, ScopeShape>>;
}

// A transaction's items are JSON cells wherever the transaction comes from.
const TRANSACTION_ITEMS: Record<string, ScopeShape> = {
  line_items: { scope: 'line_items', embedded: true },
  tax_items: { scope: 'tax_items', embedded: true },
};
const TRANSACTION: ScopeShape = { scope: 'transactions', lists: TRANSACTION_ITEMS };
const EMBEDDED_TRANSACTION: ScopeShape = { ...TRANSACTION, embedded: true };

const SHAPES: Readonly<Record<TenantBody, ScopeShape>> = {
  account: {
    scope: 'accounts',
    lists: {
      customers: { scope: 'customers' },
      supply_addresses: { scope: 'supply_addresses' },
      notes: { scope: 'notes', embedded: true },
      statements: { scope: 'statements', embedded: true },
      ledgers: {
        lists: {
          current_statement_transactions: EMBEDDED_TRANSACTION,
          historical_statement_transactions: EMBEDDED_TRANSACTION,
        },
      },
    },
  },
  notes: { lists: { notes: { scope: 'notes' } } },
  transactions: { lists: { transactions: TRANSACTION } },
  statements: { lists: { statements: { scope: 'statements' } } },
  payment_instruction: { scope: 'payment_instructions' },
};

function declares(shape: ScopeShape, tenant: TenantFields, embeddedOnly = false): boolean {
  const own = shape.scope !== undefined && (!embeddedOnly || shape.embedded === true);
  if (own && Object.keys(tenantFieldsOf(tenant, shape.scope as TenantScope)).length > 0) return true;
  return Object.values(shape.lists ?? {}).some((inner) => declares(inner, tenant, embeddedOnly));
}

/**
 * What `declares` answered per body for a run's declaration: the same few questions are asked for every record, and
 * their answer depends on the declaration alone.
 */
const DECLARED = new WeakMap<TenantFields, { any: Map<TenantBody, boolean>; embedded: Map<TenantBody, boolean> }>();

function bodyDeclares(body: TenantBody, tenant: TenantFields, embeddedOnly: boolean): boolean {
  let known = DECLARED.get(tenant);
  if (known === undefined) DECLARED.set(tenant, (known = { any: new Map(), embedded: new Map() }));
  // No key string built per question (profiled: about 1% of validate's main thread).
  const answers = embeddedOnly ? known.embedded : known.any;
  let answer = answers.get(body);
  if (answer === undefined) answers.set(body, (answer = declares(SHAPES[body], tenant, embeddedOnly)));
  return answer;
}

/** Whether any scope of this body has a declared field (most exports declare none: nothing to walk then). */
export function hasTenantFields(tenant: TenantFields, body: TenantBody = 'account'): boolean {
  return bodyDeclares(body, tenant, false);
}

function strip(value: unknown, shape: ScopeShape, tenant: TenantFields): unknown {
  const object = asObject(value);
  if (!object) return value;
  const declared = shape.scope === undefined ? NONE : tenantFieldsOf(tenant, shape.scope);
  const copy: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(object)) {
    if (Object.hasOwn(declared, key)) continue;
    const inner = shape.lists?.[key];
    copy[key] = inner && Array.isArray(item) ? item.map((entry: unknown) => strip(entry, inner, tenant)) : item;
  }
  return copy;
}

/**
 * The body without its declared tenant fields: what the spec's schema (and the client's documented-fields guard)
 * judge. Undeclared extra fields stay, so they are still refused.
 */
export function withoutTenantFields(body: TenantBody, value: unknown, tenant: TenantFields): unknown {
  return hasTenantFields(tenant, body) ? strip(value, SHAPES[body], tenant) : value;
}

function kindOf(value: unknown): TenantFieldKind | 'null' {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value === 'object' ? 'object' : (typeof value as TenantFieldKind);
}

function kindIssues(value: unknown, shape: ScopeShape, tenant: TenantFields, path: string, out: ValidationIssue[]) {
  const object = asObject(value);
  if (!object) return;
  const declared = shape.scope === undefined || !shape.embedded ? NONE : tenantFieldsOf(tenant, shape.scope);
  for (const [key, item] of Object.entries(object)) {
    const inner = shape.lists?.[key];
    if (inner && Array.isArray(item))
      item.forEach((entry: unknown, index) => kindIssues(entry, inner, tenant, attrOf(path, key, index), out));
    const kind = declared[key];
    if (kind === undefined || kindOf(item) === kind) continue;
    out.push({
      attr: attrOf(path, key),
      code: 'invalid_type',
      detail:
        `${key} is declared a tenant field of kind ${kind} (tenant_fields.${shape.scope ?? ''}), ` +
        `not ${kindOf(item)}.`,
    });
  }
}

/**
 * Declared tenant fields inside JSON cells (an account's notes, statements and ledgers, a transaction's line and tax
 * items) of the wrong JSON kind; those read from their own column are checked as the cell is read.
 */
export function tenantKindIssues(body: TenantBody, value: unknown, tenant: TenantFields): ValidationIssue[] {
  // Most exports declare no field inside a JSON cell: nothing to walk then.
  if (!bodyDeclares(body, tenant, true)) return [];
  const issues: ValidationIssue[] = [];
  kindIssues(value, SHAPES[body], tenant, '', issues);
  return issues;
}
