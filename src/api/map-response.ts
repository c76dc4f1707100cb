import { CODE_LIMIT, limitDetail } from '../errors.js';
import { Code, alreadyImportedSchema, type ValidationIssue } from '../schema/index.js';
import type { ApiError } from './errors.js';
import {
  AlreadyImportedError,
  AuthenticationError,
  NetworkError,
  NotFoundError,
  NotTheServiceError,
  RateLimitedError,
  RequestRejectedError,
  RetryAfterTooLongError,
  ServerError,
  SupplierNotOngoingError,
  SupplierUnknownError,
  UnexpectedResponseError,
  ValidationFailedError,
} from './errors.js';
import { retryAfterOf, type FailureKind } from './retry-policy.js';

// One function maps a non-success answer to its error class (docs/api-client.md, Errors); the endpoint
// methods then turn the expected ones (validation, already imported, not found) into outcome
// values. 400 bodies come in several shapes (docs/service.md "Errors"): all are read into the
// service's issue items so callers see one form.

export interface ServiceResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** Parsed JSON, or undefined when the body was empty or not JSON. */
  body: unknown;
  /** Why the body was not read (an error body beyond the bound): said in the error instead of the service's detail. */
  unread?: string | undefined;
}

/** The sandbox's whole answer for a supplier code it does not know (sandbox README); the real platform's enum check. */
const SUPPLIER_UNKNOWN_CODE = 'invalid_import_supplier';

function record(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

/**
 * The top-level `detail` (or `error_detail`) of an error body, or '': cut to the detail limit, so that no error
 * message, outcome or ledger row holds more of it (the body was scrubbed of secrets before, whole).
 */
export function detailOf(body: unknown): string {
  const object = record(body);
  return limitDetail(text(object?.['detail']) ?? text(object?.['error_detail']) ?? '');
}

/** The top-level `code` of an error body (cut to the code limit). */
export function codeOf(body: unknown): string | undefined {
  const code = text(record(body)?.['code']);
  return code === undefined ? undefined : limitDetail(code, CODE_LIMIT);
}

/**
 * Reads a 400 body into issue items: the standardized body's `errors`, the legacy nested map
 * (`{"customers": {"0": {"landline": ["..."]}}}`), `non_field_errors`, or a bare `{code, detail}`.
 */
export function issuesFromBody(body: unknown): ValidationIssue[] {
  const object = record(body);
  if (!object) return [];
  const errors = object['errors'];
  if (Array.isArray(errors) && errors.length > 0) {
    return errors.map((item) => {
      const entry = record(item) ?? {};
      return {
        attr: limitDetail(text(entry['attr']) ?? '', CODE_LIMIT),
        code: limitDetail(text(entry['code']) ?? 'invalid', CODE_LIMIT),
        detail: limitDetail(text(entry['detail']) ?? ''),
      };
    });
  }
  const code = text(object['code']);
  // A bare {code, detail}, a domain error, or the payment-instruction body {error_detail, ...}.
  if (code !== undefined || detailOf(object) !== '')
    return [{ attr: '', code: code ?? 'invalid', detail: detailOf(object) }];
  const issues: ValidationIssue[] = [];
  flattenLegacy(object, [], issues);
  return issues;
}

function flattenLegacy(value: unknown, path: string[], out: ValidationIssue[]): void {
  if (typeof value === 'string') {
    out.push({ attr: limitDetail(path.join('.'), CODE_LIMIT), code: 'invalid', detail: limitDetail(value) });
    return;
  }
  if (Array.isArray(value)) {
    value.forEach((item, index) =>
      flattenLegacy(item, typeof item === 'string' ? path : [...path, String(index)], out),
    );
    return;
  }
  const object = record(value);
  if (!object) return;
  for (const [key, item] of Object.entries(object)) {
    flattenLegacy(item, key === 'non_field_errors' ? path : [...path, key], out);
  }
}

export interface MapContext {
  endpoint: string;
  /** Whether the request writes: a 5xx after a write may have applied part of it. */
  write: boolean;
  /** The spec's payment-instruction rule: its 500 means nothing was applied ("retry as is"). */
  serverErrorMeansNotApplied: boolean;
  /** The wall clock now: an HTTP-date Retry-After is read against it when the answer has no Date of its own. */
  wallNow: number;
  /** The ceiling on any pause the service asks for (RetryPolicy.maxRetryAfterMs): a longer Retry-After is fatal. */
  maxRetryAfterMs: number;
  /** The URL asked, when the endpoint always exists (the spec gives it no 404): a 404 means the base URL is wrong. */
  alwaysThere?: string | undefined;
}

/**
 * Maps any non-2xx answer to its error class. The error stands for the service's answer, not for
 * a place in this code, so no stack trace is captured: that cost 20+ µs per answer (measured),
 * paid on every expected 404 and validation answer the endpoints turn into values.
 */
export function errorFromResponse(response: ServiceResponse, context: MapContext): ApiError {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    return classify(response, context);
  } finally {
    Error.stackTraceLimit = limit;
  }
}

function classify(response: ServiceResponse, context: MapContext): ApiError {
  const { status, body } = response;
  const { endpoint } = context;
  const detail = detailOf(body) || (response.unread ?? '');
  const serviceCode = codeOf(body);
  if (serviceCode === Code.migrationNotOngoing)
    return new SupplierNotOngoingError(endpoint, detail, serviceCode, status);
  if (serviceCode === SUPPLIER_UNKNOWN_CODE) return new SupplierUnknownError(endpoint, detail, serviceCode, status);
  // The real platform checks "migration is ongoing" while validating the body (docs/service.md
  // "Errors"), so the code may come as an item of a validation body: the same for every account.
  const notOngoing =
    status === 400 ? issuesFromBody(body).find((issue) => issue.code === Code.migrationNotOngoing) : undefined;
  if (notOngoing) return new SupplierNotOngoingError(endpoint, notOngoing.detail || detail, notOngoing.code, status);
  if (status === 429) return rateLimited(response, context);
  // A 503 (a gateway's) asking for a pause beyond the ceiling stops the run, as a 429 does, unless it answered a write
  // that may have been applied: that one is reconciled as any 5xx after a write (a stop would count it unsent).
  const appliedMaybe = context.write && !context.serverErrorMeansNotApplied;
  const tooLong = status === 503 && !appliedMaybe ? retryAfterTooLong(response, context) : undefined;
  if (tooLong) return tooLong;
  if (status === 401 || status === 403)
    return new AuthenticationError(endpoint, detail || `HTTP ${status}`, {
      status,
      ...(serviceCode ? { serviceCode } : {}),
    });
  if (status === 404 && context.alwaysThere !== undefined)
    return new NotTheServiceError(endpoint, context.alwaysThere, detail);
  if (status === 404) return new NotFoundError(endpoint, detail || 'HTTP 404', serviceCode);
  if (status >= 500)
    return new ServerError(endpoint, status, detail, context.write && !context.serverErrorMeansNotApplied);
  if (status === 400) return badRequest(body, endpoint, detail, serviceCode);
  if (status >= 400)
    return new RequestRejectedError(endpoint, status, detail || `HTTP ${status}`, issuesFromBody(body), serviceCode);
  return new UnexpectedResponseError(endpoint, status, `HTTP ${status} is not an answer the spec gives`);
}

/** A 429: resent after its Retry-After, or, when the service asks for more than the ceiling, the run stops. */
function rateLimited(response: ServiceResponse, context: MapContext): ApiError {
  return (
    retryAfterTooLong(response, context) ??
    new RateLimitedError(context.endpoint, retryAfterOf(response.headers, context.wallNow))
  );
}

/**
 * The stop for an answer (a 429, or a 503 such as a gateway's) whose Retry-After asks for more than the ceiling on any
 * pause: waiting it out would hang the run, so it is fatal and names the header; undefined within the ceiling.
 */
export function retryAfterTooLong(response: ServiceResponse, context: MapContext): ApiError | undefined {
  const retryAfterMs = retryAfterOf(response.headers, context.wallNow);
  if (retryAfterMs === undefined || retryAfterMs <= context.maxRetryAfterMs) return undefined;
  // The header as the service wrote it (an HTTP date or seconds), cut short: it is the service's text.
  const header = response.headers['retry-after'];
  const written = (Array.isArray(header) ? header[0] : header)?.trim().slice(0, 64) ?? '';
  return new RetryAfterTooLongError(context.endpoint, written, retryAfterMs, context.maxRetryAfterMs, response.status);
}

function badRequest(body: unknown, endpoint: string, detail: string, serviceCode: string | undefined): ApiError {
  const already = alreadyImportedSchema.safeParse(body);
  if (already.success) return new AlreadyImportedError(endpoint, already.data.account_id);
  const issues = issuesFromBody(body);
  if (issues.length === 0) return new RequestRejectedError(endpoint, 400, detail || 'HTTP 400 without a readable body');
  return new ValidationFailedError(endpoint, issues, detail || issues[0]?.detail || '', serviceCode);
}

/** The retry policy's view of an error (src/api/retry-policy.ts). */
export function failureKindOf(error: ApiError): FailureKind {
  // A 401 is renewed once (the retry policy); any other fatal error (a supplier not ongoing, a pause beyond the
  // ceiling, a service that cannot be reached in a way no resend mends) is never resent: the run stops.
  if (error instanceof AuthenticationError && error.status === 401) return 'unauthorized';
  if (error.fatal) return 'final';
  if (error instanceof NetworkError) return error.phase === 'sent' ? 'no_answer' : 'not_sent';
  if (error instanceof RateLimitedError) return 'rate_limited';
  if (error instanceof ServerError) return 'server_error';
  return 'final';
}
