import { moneyFromStrings, type Dialect, type ValidationIssue } from '../schema/index.js';
import { asList, asObject, attrOf } from '../schema/read.js';

// The `kraken` dialect of the sandbox (docs/real-platform.md): what the real platform's published
// schema requires of a request, and the names its responses use. The spec's rules still run on
// what is left once these are checked, so both dialects judge the same payload the same way.

/** The supply-address fields a tenant of the real platform adds (meter points, a structured address). */
const SUPPLY_ADDRESS_TENANT_FIELDS = ['meter_points', 'supply_address'] as const;

export const NO_SUPPLY_POINT_ON_SUPPLY = 'no_supply_point_on_supply';

export interface DecodedAccountRequest {
  /** The account payload with money as numbers and tenant fields kept: what is stored. */
  payload: unknown;
  /** `{payload}` without the tenant fields: what the spec's validator judges. */
  checked: unknown;
  issues: ValidationIssue[];
}

function supplyAddressIssues(payload: Record<string, unknown>): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  asList(payload['supply_addresses']).forEach((item, index) => {
    const address = asObject(item);
    if (!address) return;
    const points = address['meter_points'];
    const attr = attrOf('supply_addresses', index, 'meter_points');
    if (points !== undefined && !Array.isArray(points))
      issues.push({ attr, code: 'invalid', detail: 'Expected a list of items.' });
    else if (!Array.isArray(points) || points.length === 0)
      issues.push({
        attr,
        code: NO_SUPPLY_POINT_ON_SUPPLY,
        detail: 'A supply address needs at least one billable meter point.',
      });
    else if (points.some((point) => asObject(point) === undefined))
      issues.push({ attr, code: 'invalid', detail: 'Each meter point must be an object.' });
    const structured = address['supply_address'];
    if (structured !== undefined && asObject(structured) === undefined)
      issues.push({
        attr: attrOf('supply_addresses', index, 'supply_address'),
        code: 'invalid',
        detail: 'Expected an object.',
      });
  });
  return issues;
}

function withoutTenantFields(payload: Record<string, unknown>): Record<string, unknown> {
  const addresses = payload['supply_addresses'];
  if (!Array.isArray(addresses)) return payload;
  return {
    ...payload,
    supply_addresses: addresses.map((item: unknown) => {
      const address = asObject(item);
      if (!address) return item;
      const copy = { ...address };
      for (const field of SUPPLY_ADDRESS_TENANT_FIELDS) delete copy[field];
      return copy;
    }),
  };
}

/**
 * A v2 validate or create body in the real platform's form: create needs `task_params` (an
 * object) beside `payload`, money comes as decimal strings, and every supply address needs at
 * least one meter point (`no_supply_point_on_supply`).
 */
export function decodeAccountRequest(body: unknown, create: boolean): DecodedAccountRequest {
  const raw = asObject(body) ?? {};
  const issues: ValidationIssue[] = [];
  const { task_params: taskParams, ...rest } = raw;
  if (create && asObject(taskParams) === undefined)
    issues.push({
      attr: 'task_params',
      code: taskParams === undefined ? 'required' : 'invalid',
      detail: taskParams === undefined ? 'This field is required.' : 'Expected an object.',
    });
  if (!create && taskParams !== undefined)
    issues.push({ attr: 'task_params', code: 'unknown_field', detail: 'Validate takes the payload only.' });
  const money = moneyFromStrings('account', rest);
  issues.push(...money.issues);
  const payload = asObject(asObject(money.value)?.['payload']);
  if (!payload) return { payload: undefined, checked: money.value, issues };
  issues.push(...supplyAddressIssues(payload));
  return { payload, checked: { ...asObject(money.value), payload: withoutTenantFields(payload) }, issues };
}

/** A transactions body in the real platform's form (money as decimal strings), read into numbers. */
export function decodeTransactionsRequest(body: unknown): { body: unknown; issues: ValidationIssue[] } {
  const money = moneyFromStrings('transactions', body);
  return { body: money.value, issues: money.issues };
}

const REAL_NAMES: Readonly<Record<string, string>> = {
  platform_identifier: 'kraken_identifier',
  platform_account_number: 'kraken_account_number',
};

/**
 * A response body under the real platform's names. `withDeprecatedCopy`: the v1 status also
 * carries `account_number`, a deprecated copy of the account number.
 */
export function responseNames(dialect: Dialect, body: Record<string, unknown>, withDeprecatedCopy = false) {
  if (dialect === 'spec') return body;
  const renamed: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(body)) renamed[REAL_NAMES[key] ?? key] = value;
  if (withDeprecatedCopy && 'platform_account_number' in body)
    renamed['account_number'] = body['platform_account_number'];
  return renamed;
}
