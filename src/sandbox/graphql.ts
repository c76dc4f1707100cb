import type { TokenIssuer } from './auth.js';
import type { Reply } from './http-io.js';
import { asObject } from '../schema/read.js';

// POST /v1/graphql/: only the token mutation (spec "Authentication" 1; docs/service.md "Authentication").
// The field is the real platform's `obtainKrakenToken` or the neutral `obtainToken`; input is
// `{APIKey}` or `{refreshToken}`, inline or through variables. Like GraphQL, errors are HTTP 200
// with `errors[].extensions.errorCode` (the platform's KT-CT codes); only the selected fields
// of the result are returned, so a client that forgets to select `payload` finds out here.

const FIELD = /\b(obtainKrakenToken|obtainToken)\s*\(/;
const RESULT_FIELDS = ['token', 'refreshToken', 'refreshExpiresIn', 'payload'] as const;

function graphqlError(status: number, message: string): Reply {
  return { status, body: { errors: [{ message }] } };
}

function failure(field: string, code: string, message: string): Reply {
  const error = {
    message,
    path: [field],
    extensions: { errorType: 'AUTHORIZATION', errorCode: code, errorDescription: message },
  };
  return { status: 200, body: { data: { [field]: null }, errors: [error] } };
}

/** The value of argument `name`: inline string literal, `$variable`, or a key of `input: $variable`. */
function argument(query: string, variables: Record<string, unknown>, name: string): unknown {
  const inline = new RegExp(`\\b${name}\\s*:\\s*("(?:[^"\\\\]|\\\\.)*"|\\$\\w+)`).exec(query)?.[1];
  if (inline?.startsWith('$')) return variables[inline.slice(1)];
  if (inline !== undefined) {
    try {
      return JSON.parse(inline) as unknown;
    } catch {
      return undefined;
    }
  }
  const inputVariable = /\binput\s*:\s*\$(\w+)/.exec(query)?.[1];
  return inputVariable === undefined ? undefined : asObject(variables[inputVariable])?.[name];
}

/** Names selected directly under the mutation field, e.g. `{ token payload }`. */
function selection(query: string, fieldEnd: number): string[] | undefined {
  let depth = 0;
  let index = fieldEnd;
  for (; index < query.length; index++) {
    const ch = query[index];
    if (ch === '"') index = query.indexOf('"', index + 1);
    else if (ch === '(') depth++;
    else if (ch === ')') depth--;
    else if (ch === '{' && depth === 0) break;
    if (index < 0) return undefined;
  }
  const close = query.indexOf('}', index);
  if (index >= query.length || close < 0) return undefined;
  return query
    .slice(index + 1, close)
    .split(/[\s,]+/)
    .filter(Boolean);
}

/** KT-CT-1199 "Too many requests", in an HTTP 200, under the field the request asked for. */
export function tooManyRequests(body: unknown): Reply {
  const query = asObject(body)?.['query'];
  const field = (typeof query === 'string' ? FIELD.exec(query)?.[1] : undefined) ?? 'obtainKrakenToken';
  return failure(field, 'KT-CT-1199', 'Too many requests.');
}

export function obtainToken(body: unknown, issuer: TokenIssuer, apiKey: string, now: number): Reply {
  const request = asObject(body);
  const query = request?.['query'];
  if (typeof query !== 'string' || query.trim() === '') return graphqlError(400, 'Must provide query string.');
  const variables = asObject(request?.['variables']) ?? {};
  const match = FIELD.exec(query);
  if (!match || !/^\s*mutation\b/.test(query))
    return graphqlError(400, 'This sandbox answers only the mutation obtainKrakenToken (or obtainToken).');
  const field = match[1] ?? 'obtainKrakenToken';
  const selected = selection(query, match.index + match[0].length - 1);
  const unknown = selected?.filter((name) => !(RESULT_FIELDS as readonly string[]).includes(name)) ?? [];
  if (!selected || selected.length === 0 || unknown.length > 0) {
    return graphqlError(
      400,
      `Select the result fields of ${field} among ` +
        `${RESULT_FIELDS.join(', ')}${unknown.length ? `; unknown: ${unknown.join(', ')}` : ''}.`,
    );
  }
  const key = argument(query, variables, 'APIKey');
  const refreshToken = argument(query, variables, 'refreshToken');
  if (key !== undefined && refreshToken !== undefined)
    return failure(field, 'KT-CT-1139', 'Use one of APIKey or refreshToken, not both.');
  if (typeof refreshToken === 'string') {
    const state = issuer.redeemRefreshToken(refreshToken, now);
    if (state === 'expired') return failure(field, 'KT-CT-1134', 'Refresh token has expired.');
    if (state === 'unknown') return failure(field, 'KT-CT-1135', 'Invalid refresh token.');
  } else if (typeof key !== 'string' || key !== apiKey) {
    return failure(field, 'KT-CT-1139', 'Authentication failed.');
  }
  const issued = issuer.issue(now);
  return {
    status: 200,
    body: {
      data: { [field]: Object.fromEntries(selected.map((name) => [name, issued[name as keyof typeof issued]])) },
    },
  };
}
