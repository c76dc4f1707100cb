import { bodyExcerpt } from './body-excerpt.js';
import type { EndpointCall } from './endpoints.js';
import { UnexpectedResponseError } from './errors.js';
import { codeOf, issuesFromBody, type ServiceResponse } from './map-response.js';

// A success status whose body is not the endpoint's (docs/api-client.md "Errors"): named with the request's path and
// the body's start, and, when the body is an error body (a 200 carrying `detail`, `code` or `errors`, as some proxies
// and frameworks answer), with the service's own words instead of only the field that is missing.

/** The call's success value, or the UnexpectedResponseError of its body told in full. */
export function readSuccess<T>(call: EndpointCall<T>, response: ServiceResponse): T {
  try {
    return call.success(response);
  } catch (error) {
    if (!(error instanceof UnexpectedResponseError)) throw error;
    throw unexpectedAnswer(error, call.path, response);
  }
}

/** `error` with the path, an escaped excerpt of the (already scrubbed) body, and the service's words if it gave any. */
export function unexpectedAnswer(
  error: UnexpectedResponseError,
  path: string,
  response: Pick<ServiceResponse, 'status' | 'body'>,
): UnexpectedResponseError {
  const words = serviceWords(response.body);
  const reason =
    words === undefined
      ? error.reason
      : `an error body in a success (HTTP ${response.status}), the service saying ${words}`;
  return new UnexpectedResponseError(error.endpoint, error.status ?? response.status, reason, error.field, {
    path,
    excerpt: bodyExcerpt(response.body),
  });
}

/** An error body's words (its first issue's detail and code), quoted and escaped; undefined when it is not one. */
function serviceWords(body: unknown): string | undefined {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return undefined;
  const object = body as Record<string, unknown>;
  if (!('detail' in object || 'error_detail' in object || 'errors' in object || 'non_field_errors' in object))
    return undefined;
  const issue = issuesFromBody(body)[0];
  if (issue === undefined || (issue.detail === '' && issue.code === 'invalid')) return undefined;
  const code = issue.code === 'invalid' ? codeOf(body) : issue.code;
  return `${bodyExcerpt(issue.detail)}${code === undefined ? '' : ` (${bodyExcerpt(code)})`}`;
}
