import { createImportProcess, getImportStatus, validateAccount } from './handlers/accounts.js';
import type { Handler } from './handlers/common.js';
import { getTransferStatus, listAllImports, listImportedAccounts, listPendingImports } from './handlers/listing.js';
import { inspectAccounts } from './handlers/inspection.js';
import { createNotes } from './handlers/notes.js';
import { createPaymentInstruction } from './handlers/payment-instructions.js';
import { createHistoricalStatements } from './handlers/statements.js';
import { createTransactions } from './handlers/transactions.js';

// Every endpoint of the spec with its exact path (trailing slash included; spec "Endpoints").
// `:` segments are path parameters, matched as one non-empty segment and URL-decoded.

export interface Route {
  method: 'GET' | 'POST';
  pattern: string;
  /**
   * The token mutation is not a REST endpoint: no token needed, no faults unless asked. The inspection endpoint is
   * the sandbox's own: a token needed, never a fault or a rate limit.
   */
  kind: 'rest' | 'token' | 'inspect';
  handler: Handler | undefined;
}

export const ROUTES: readonly Route[] = [
  { method: 'POST', pattern: '/v1/graphql/', kind: 'token', handler: undefined },
  { method: 'POST', pattern: '/v2/data-import/accounts/validate/', kind: 'rest', handler: validateAccount },
  { method: 'POST', pattern: '/v2/data-import/accounts/', kind: 'rest', handler: createImportProcess },
  { method: 'GET', pattern: '/v2/data-import/accounts/:supplier/:external/', kind: 'rest', handler: getImportStatus },
  {
    method: 'GET',
    pattern: '/v1/data-import/account-transfer-status/:supplier/:external/',
    kind: 'rest',
    handler: getTransferStatus,
  },
  {
    method: 'GET',
    pattern: '/v1/data-import/all-account-import-processes/:supplier/',
    kind: 'rest',
    handler: listAllImports,
  },
  {
    method: 'GET',
    pattern: '/v1/data-import/pending-account-import-processes/:supplier/',
    kind: 'rest',
    handler: listPendingImports,
  },
  {
    method: 'GET',
    pattern: '/v1/data-import/imported-account-import-processes/:supplier/',
    kind: 'rest',
    handler: listImportedAccounts,
  },
  { method: 'POST', pattern: '/v1/data-import/notes/create/', kind: 'rest', handler: createNotes },
  { method: 'POST', pattern: '/v1/data-import/transactions/create/', kind: 'rest', handler: createTransactions },
  {
    method: 'POST',
    pattern: '/v1/data-import/historical-statements/create/',
    kind: 'rest',
    handler: createHistoricalStatements,
  },
  {
    method: 'POST',
    pattern: '/v1/data-import/payment-instruction/create/',
    kind: 'rest',
    handler: createPaymentInstruction,
  },
  { method: 'GET', pattern: '/_sandbox/accounts/:supplier/', kind: 'inspect', handler: inspectAccounts },
];

export type RouteMatch =
  | { kind: 'found'; route: Route; params: string[] }
  | { kind: 'method_not_allowed'; allowed: string[] }
  | { kind: 'not_found' };

const COMPILED = ROUTES.map((route) => ({
  route,
  parts: route.pattern.split('/'),
  literal: !route.pattern.includes(':'),
}));

function matchParts(want: string[], got: string[]): string[] | undefined {
  if (want.length !== got.length) return undefined;
  const params: string[] = [];
  for (let index = 0; index < want.length; index++) {
    const part = want[index] ?? '';
    const value = got[index] ?? '';
    if (part.startsWith(':')) {
      if (value === '') return undefined;
      try {
        params.push(decodeURIComponent(value));
      } catch {
        return undefined;
      }
    } else if (part !== value) return undefined;
  }
  return params;
}

/** Literal routes win over parameter routes (`/accounts/validate/` is not a status path). */
export function matchRoute(method: string, path: string): RouteMatch {
  const got = path.split('/');
  let found: { route: Route; params: string[] } | undefined;
  const allowed = new Set<string>();
  for (const { route, parts, literal } of COMPILED) {
    const params = matchParts(parts, got);
    if (!params) continue;
    allowed.add(route.method);
    if (route.method === method && (!found || literal)) found = { route, params };
  }
  if (found) return { kind: 'found', ...found };
  return allowed.size > 0 ? { kind: 'method_not_allowed', allowed: [...allowed] } : { kind: 'not_found' };
}
