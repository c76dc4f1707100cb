import { moneyToStrings, withoutTenantFields } from '../schema/index.js';
import { undocumentedFields } from './documented-fields.js';
import { RequestRejectedError } from './errors.js';
import type { EndpointCall } from './endpoints.js';
import type { ResolvedClientOptions } from './options.js';

// A call's request body as it goes on the wire, checked before it is sent: the spec allows documented fields only
// (an undocumented one is refused here, never sent), and the real platform takes money as decimal strings in its
// precision (a value it cannot take exactly is refused rather than rounded).

/** The JSON text of the call's body (undefined: none); throws a RequestRejectedError for a body that may not go. */
export function serialiseCall<T>(
  call: EndpointCall<T>,
  options: Pick<ResolvedClientOptions, 'checkRequests' | 'dialect' | 'tenantFields'>,
): string | undefined {
  if (call.body === undefined) return undefined;
  if (options.checkRequests && call.requestSchema) {
    // Declared tenant fields pass the guard (docs/real-platform.md "Tenant fields"); every other field is judged.
    const checked = call.checked ?? call.body;
    const judged = call.tenant ? withoutTenantFields(call.tenant, checked, options.tenantFields) : checked;
    const undocumented = undocumentedFields(call.requestSchema, judged);
    if (undocumented.length > 0) {
      const fields = undocumented.map((issue) => issue.attr).join(', ');
      throw new RequestRejectedError(
        call.name,
        undefined,
        `undocumented field(s) ${fields}; the spec allows documented fields only`,
        undocumented,
      );
    }
  }
  if (options.dialect === 'kraken' && call.money) {
    // The real platform takes money as decimal strings in its precision; a value it cannot take
    // exactly is refused here rather than rounded.
    const money = moneyToStrings(call.money, call.body);
    if (money.issues.length > 0)
      throw new RequestRejectedError(
        call.name,
        undefined,
        `${money.issues.map((issue) => `${issue.attr}: ${issue.detail}`).join('; ')}`,
        money.issues,
      );
    return JSON.stringify(money.value);
  }
  return JSON.stringify(call.body);
}
