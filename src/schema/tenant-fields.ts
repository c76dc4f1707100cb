import { asObject } from './read.js';

// Payload fields the spec does not list but a tenant of the real platform requires (for example
// meter_points on every supply address). The mapping file declares them; they are copied into the
// payload as given, checked locally only for their JSON kind, and judged by the platform.

export const TENANT_FIELD_KINDS = ['array', 'object', 'string', 'number', 'boolean'] as const;
export type TenantFieldKind = (typeof TENANT_FIELD_KINDS)[number];

/** Declared tenant fields: on the account itself and on each supply address. */
export interface TenantFields {
  accounts: Readonly<Record<string, TenantFieldKind>>;
  supply_addresses: Readonly<Record<string, TenantFieldKind>>;
}

export const NO_TENANT_FIELDS: TenantFields = { accounts: {}, supply_addresses: {} };

export function hasTenantFields(tenant: TenantFields): boolean {
  return Object.keys(tenant.accounts).length > 0 || Object.keys(tenant.supply_addresses).length > 0;
}

function without(value: Record<string, unknown>, names: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const copy: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) if (!Object.hasOwn(names, key)) copy[key] = item;
  return copy;
}

/**
 * The payload without its declared tenant fields: what the spec's schema (and the client's
 * documented-fields guard) judge. Undeclared extra fields stay, so they are still refused.
 */
export function withoutTenantFields(payload: unknown, tenant: TenantFields): unknown {
  const object = asObject(payload);
  if (!object || !hasTenantFields(tenant)) return payload;
  const copy = without(object, tenant.accounts);
  const addresses = copy['supply_addresses'];
  if (Array.isArray(addresses) && Object.keys(tenant.supply_addresses).length > 0) {
    copy['supply_addresses'] = addresses.map((address: unknown) => {
      const item = asObject(address);
      return item ? without(item, tenant.supply_addresses) : address;
    });
  }
  return copy;
}
