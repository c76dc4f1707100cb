import { ExitCode, MigrateError } from '../errors.js';
import type { ValidationIssue } from '../schema/index.js';

// The client's error taxonomy (docs/api-client.md, Errors; shaped after stripe-node's Error.ts). Every class
// has a stable `code`, the HTTP `status` when the service answered, the `endpoint` (the client
// method's name, never a URL with credentials), whether the retry policy may resend it
// (`retryable`), whether the request may have been applied although no success was seen
// (`ambiguous`), and whether the run cannot go on (`fatal`). ApiError extends MigrateError: an
// ApiError that reaches src/cli/main.ts exits 3 (ExitCode.fatal, "service unreachable after
// retries"); the engine reads `fatal` to stop taking work and reports the rest per account.
// Messages are built from endpoint names, statuses and the service's `detail` text after the
// client has scrubbed every known secret out of it (src/api/redact.ts).

export interface ApiErrorOptions {
  endpoint: string;
  status?: number | undefined;
  /** The service's own machine code (`code` of its error body), when it gave one. */
  serviceCode?: string | undefined;
  retryable?: boolean;
  ambiguous?: boolean;
  cause?: unknown;
  /** A mistake in the command's settings rather than a state of the service: exit 2 (ExitCode.usage). */
  usage?: boolean;
}

/** Base class: any failure of a call to the import service. */
export class ApiError extends MigrateError {
  readonly status: number | undefined;
  readonly endpoint: string;
  readonly serviceCode: string | undefined;
  readonly retryable: boolean;
  readonly ambiguous: boolean;
  /** How many requests were sent for this call before it gave up (set by the client). */
  attempts = 1;

  constructor(message: string, code: string, options: ApiErrorOptions) {
    super(message, { code, exitCode: options.usage === true ? ExitCode.usage : ExitCode.fatal, cause: options.cause });
    this.status = options.status;
    this.endpoint = options.endpoint;
    this.serviceCode = options.serviceCode;
    this.retryable = options.retryable ?? false;
    this.ambiguous = options.ambiguous ?? false;
  }

  /** True when no account can make progress: stop taking work, finish in-flight, exit 3. */
  get fatal(): boolean {
    return false;
  }
}

/** 400 with field errors (spec "Validation error body"); `issues` are the service's items. */
export class ValidationFailedError extends ApiError {
  readonly issues: ValidationIssue[];

  constructor(endpoint: string, issues: ValidationIssue[], detail: string, serviceCode?: string, status = 400) {
    super(`${endpoint}: the service rejected the data (${issues.length} problem(s)): ${detail}`, 'validation_failed', {
      endpoint,
      status,
      serviceCode,
    });
    this.issues = issues;
  }
}

/** 400 on create account: the account exists already (spec "Already-imported body"). */
export class AlreadyImportedError extends ApiError {
  readonly platformAccountNumber: string;

  constructor(endpoint: string, platformAccountNumber: string) {
    super(`${endpoint}: the account was imported before as ${platformAccountNumber}`, 'already_imported', {
      endpoint,
      status: 400,
      serviceCode: 'account_import_process_already_imported',
    });
    this.platformAccountNumber = platformAccountNumber;
  }
}

/** 404: the account or import process does not exist (or is staged, not imported: spec "Create notes"). */
export class NotFoundError extends ApiError {
  constructor(endpoint: string, detail: string, serviceCode?: string) {
    super(`${endpoint}: not found: ${detail}`, 'not_found', { endpoint, status: 404, serviceCode });
  }
}

/**
 * The import supplier does not accept migrations: Paused or Complete (spec "States", docs/service.md "Errors":
 * `import_supplier_migration_not_ongoing`). A state of the service that its operators change: every account would fail
 * alike until then.
 */
export class SupplierNotOngoingError extends ApiError {
  /** The service's own words. */
  readonly serviceDetail: string;

  constructor(endpoint: string, detail: string, serviceCode: string, status: number) {
    super(
      `${endpoint}: the import supplier is not accepting migrations: it is Paused or Complete on the service ` +
        `(${serviceCode}: ${detail}). Ask the platform operators to set it Ongoing, then run the command again.`,
      'supplier_not_ongoing',
      { endpoint, status, serviceCode },
    );
    this.serviceDetail = detail;
  }

  override get fatal(): boolean {
    return true;
  }
}

/**
 * A supplier code the service does not know (`invalid_import_supplier` as a whole answer: the sandbox's lists; the
 * real platform's field is an enum of the tenant's codes): a typo, the wrong service, or a supplier not set up yet. A
 * mistake in the settings (exit 2, as status's code the ledger holds no account of; push, which has staged the export
 * by then, stops with exit 3 as for any refusal of its configuration). Every account would fail alike.
 */
export class SupplierUnknownError extends ApiError {
  /** The service's own words. */
  readonly serviceDetail: string;

  constructor(endpoint: string, detail: string, serviceCode: string, status: number) {
    super(
      `${endpoint}: the service does not know the import supplier (${serviceCode}: ${detail}). Check the supplier ` +
        "code (codes are case-sensitive): status's <supplier>; push's --supplier, MIGRATE_SUPPLIER, the mapping " +
        "file's import_supplier or the export's import_supplier column; and the service's base URL (--base-url, " +
        'MIGRATE_BASE_URL). If both are right, ask the platform operators to set the supplier up.',
      'supplier_unknown',
      { endpoint, status, serviceCode, usage: true },
    );
    this.serviceDetail = detail;
  }

  override get fatal(): boolean {
    return true;
  }
}

/** 429 (or the token mutation's KT-CT-1199): slow down; `retryAfterMs` is the service's hint, if any. */
export class RateLimitedError extends ApiError {
  readonly retryAfterMs: number | undefined;

  constructor(endpoint: string, retryAfterMs: number | undefined, status = 429) {
    const hint = retryAfterMs === undefined ? 'no Retry-After' : `Retry-After ${Math.ceil(retryAfterMs / 1000)} s`;
    super(`${endpoint}: rate limited by the service (${hint})`, 'rate_limited', { endpoint, status, retryable: true });
    this.retryAfterMs = retryAfterMs;
  }
}

/** Seconds as people read them: `86,400 s`. */
function seconds(ms: number): string {
  return `${Math.ceil(ms / 1000).toLocaleString('en-GB')} s`;
}

/**
 * 429 with a Retry-After beyond the ceiling on any pause the service asks for (docs/api-client.md "What is retried"):
 * waiting it out would hang the run (a cron run for a day), so the run stops (exit 3) naming the header and the wait.
 */
export class RetryAfterTooLongError extends ApiError {
  readonly retryAfterMs: number;

  constructor(endpoint: string, header: string, retryAfterMs: number, ceilingMs: number, status = 429) {
    super(
      `${endpoint}: the service asked to wait ${seconds(retryAfterMs)} before the next request (HTTP ${status}, ` +
        `Retry-After: ${header}), longer than the ${seconds(ceilingMs)} the tool waits for any pause a service asks ` +
        `for; the run stopped. Nothing is lost: run the same command again once the service takes requests again.`,
      'retry_after_too_long',
      { endpoint, status },
    );
    this.retryAfterMs = retryAfterMs;
  }

  override get fatal(): boolean {
    return true;
  }
}

/**
 * The token mutation refused as too many requests past the throttle ceiling (docs/api-client.md "The token"): the
 * platform's limits tighten on repeated breaches and an administrator restores them, so hammering on could lock the
 * key out; the run stops (exit 3) naming what the service answered and when to rerun.
 */
export class TokenThrottledError extends ApiError {
  /** `status`: the last refusal's, 200 for KT-CT-1199 in the GraphQL errors, else 429 or 503. */
  constructor(endpoint: string, requests: number, overMs: number, status: number) {
    const answered = status === 200 ? 'KT-CT-1199, too many requests' : `HTTP ${status}`;
    super(
      `${endpoint}: the service refused ${requests} token requests as too many (${answered}) over ` +
        `${seconds(overMs)}; no more are sent, as the platform tightens its limits on repeated breaches and they do ` +
        `not reset by themselves. Run the same command again in an hour at the earliest, or once the platform ` +
        `operators have restored the organisation's limits. Nothing is lost.`,
      'token_throttled',
      { endpoint, status, ...(status === 200 ? { serviceCode: 'KT-CT-1199' } : {}) },
    );
  }

  override get fatal(): boolean {
    return true;
  }
}

/** 401/403, or the token mutation refused the credentials: the run cannot authenticate. */
export class AuthenticationError extends ApiError {
  constructor(endpoint: string, detail: string, options: { status?: number; serviceCode?: string } = {}) {
    super(`${endpoint}: authentication failed: ${detail}`, 'authentication_failed', { endpoint, ...options });
  }

  override get fatal(): boolean {
    return true;
  }
}

/** 5xx: the service failed; `ambiguous` when a write may have been applied before it failed. */
export class ServerError extends ApiError {
  constructor(endpoint: string, status: number, detail: string, ambiguous: boolean) {
    super(`${endpoint}: the service failed with HTTP ${status}${detail ? `: ${detail}` : ''}`, 'server_error', {
      endpoint,
      status,
      retryable: true,
      ambiguous,
    });
  }
}

/** Where a network failure happened: before the request was handed to the socket, or after. */
export type NetworkPhase = 'not_sent' | 'sent';

/**
 * No answer: connection refused, DNS, reset, time-out. `phase` 'not_sent' means the service
 * never saw the request (safe to resend anything); 'sent' means it may have been applied.
 */
export class NetworkError extends ApiError {
  readonly phase: NetworkPhase;

  constructor(endpoint: string, phase: NetworkPhase, detail: string, cause?: unknown, code = 'network_error') {
    const where =
      phase === 'sent' ? 'after the request was sent (it may have been applied)' : 'before the request was sent';
    super(`${endpoint}: network failure ${where}: ${detail}`, code, {
      endpoint,
      retryable: true,
      ambiguous: phase === 'sent',
      cause,
    });
    this.phase = phase;
  }
}

/** A connect, header or body time-out: a NetworkError with code 'timeout'. */
export class TimeoutError extends NetworkError {
  constructor(endpoint: string, phase: NetworkPhase, detail: string, cause?: unknown) {
    super(endpoint, phase, detail, cause, 'timeout');
  }
}

/**
 * The service cannot be reached in a way no resend mends (docs/api-client.md "Errors no retry can mend"): an untrusted
 * TLS certificate, a host name that does not exist, or, before the service has answered any request of the run, a
 * refused or unroutable connection. Never sent; the run stops (exit 3) with a message saying what to check.
 */
export class ConnectionFailedError extends ApiError {
  readonly phase = 'not_sent';

  constructor(endpoint: string, code: ConnectionFailure, message: string, cause?: unknown) {
    super(`${endpoint}: ${message}`, code, { endpoint, cause });
  }

  override get fatal(): boolean {
    return true;
  }
}

export type ConnectionFailure =
  | 'tls_certificate_untrusted'
  | 'tls_handshake_failed'
  | 'host_not_found'
  | 'connection_refused'
  | 'host_unreachable'
  | 'proxy_refused';

/**
 * A 404 from an endpoint the service always has (the token mutation, account validate and create: the spec gives them
 * no 404): the base URL is not the import service's, most often a wrong path (`--base-url https://host/api`). Not an
 * account's outcome: the run stops (exit 3) before anything is recorded as this ledger's service.
 */
export class NotTheServiceError extends ApiError {
  constructor(endpoint: string, url: string, detail: string) {
    super(
      `${endpoint}: ${url} answered HTTP 404 (${detail || 'not found'}): the import service always has this ` +
        "endpoint, so the base URL is not the service's, or its path is wrong (--base-url, MIGRATE_BASE_URL: the " +
        "URL the service's paths such as /v2/data-import/accounts/ are under). The run stopped; nothing was recorded " +
        "as an account's outcome or as this ledger's service.",
      'not_the_service',
      { endpoint, status: 404 },
    );
  }

  override get fatal(): boolean {
    return true;
  }
}

/**
 * Before the service had answered any request of the run, a request got no whole answer within the first answer's
 * bound (docs/api-client.md "Time-outs"): a service, or something in its place, that takes requests and never answers
 * them. Resending would only wait as long again: the run stops (exit 3), naming the URL and what did not answer.
 */
export class NoAnswerError extends ApiError {
  constructor(endpoint: string, url: string, withinMs: number, missing: string, sent: boolean) {
    const seconds = (withinMs / 1000).toLocaleString('en-GB');
    const reconciled = sent
      ? ' (a request sent may have landed: the next run finds out, as after any lost answer)'
      : '';
    super(
      `${endpoint}: ${url} gave no whole answer within ${seconds} s, before the service had answered any request ` +
        `of this run (${missing}): the service, or something in its place (a proxy, a load balancer), takes ` +
        `requests and does not answer them. Check that the service is up and answers at the base URL (--base-url, ` +
        `MIGRATE_BASE_URL) and the proxy variables; a service that takes longer over its first answer is given ` +
        `longer with --first-answer-timeout. The run stopped: run push again once the service answers${reconciled}.`,
      'no_answer',
      { endpoint, ambiguous: sent },
    );
  }

  override get fatal(): boolean {
    return true;
  }
}

/**
 * The token cannot be the value of an HTTP header (a line break, a character outside visible ASCII): no request can
 * leave with it, so the run stops at once (exit 3), naming what is wrong and where, never the token itself.
 */
export class UnusableTokenError extends ApiError {
  constructor(endpoint: string, problem: string, given: boolean) {
    const whose = given
      ? 'the token given (--token-file, MIGRATE_TOKEN) cannot be sent in an HTTP header'
      : "the token the service gave for the API key (the token mutation's answer) cannot be sent in an HTTP header";
    const fix = given
      ? 'give the token itself, as the service issued it'
      : 'the service (or something in its place) answers the token mutation wrongly: ask its operators';
    super(
      `${endpoint}: ${whose}: ${problem} (the token is not shown). A header carries visible ASCII only, so no ` +
        `request can leave with it: ${fix}. The run stopped; nothing was sent with this token.`,
      'token_unusable',
      { endpoint },
    );
  }

  override get fatal(): boolean {
    return true;
  }
}

/**
 * An answer that is a web page, not the service's JSON (any status, a 200 included): a wrong base URL, or a proxy or
 * single-sign-on login page answering in the service's place. Whatever it says, it is not the service's answer about
 * an account: the run stops (exit 3), and nothing is recorded as an account's outcome.
 */
export class HtmlAnswerError extends ApiError {
  constructor(endpoint: string, status: number, url: string, contentType: string, title: string | undefined) {
    super(
      `${endpoint}: ${url} answered HTTP ${status} with an HTML page (Content-Type: ${contentType || 'none'}` +
        `${title ? `; title "${title}"` : ''}), not the import service's JSON: the base URL is wrong (--base-url, ` +
        `MIGRATE_BASE_URL), or a proxy or single-sign-on login page answers in the service's place (check ` +
        `HTTPS_PROXY, HTTP_PROXY and NO_PROXY). The run stopped; the page was not taken as any account's answer.`,
      'html_answer',
      { endpoint, status },
    );
  }

  override get fatal(): boolean {
    return true;
  }
}

/**
 * An answer that does not match the spec (wrong shape, not JSON, unexpected status); names the field, and, where the
 * client has them, the request's path and an escaped excerpt of the body (body-excerpt.ts).
 */
export class UnexpectedResponseError extends ApiError {
  readonly field: string | undefined;
  /** What does not match, without the endpoint, path or excerpt. */
  readonly reason: string;

  constructor(
    endpoint: string,
    status: number | undefined,
    detail: string,
    field?: string,
    answer?: { path: string; excerpt?: string },
  ) {
    const at = field === undefined ? '' : ` at "${field || '(body)'}"`;
    const from = answer === undefined ? '' : ` from ${answer.path}`;
    const said = answer?.excerpt === undefined ? '' : `; the body: ${answer.excerpt}`;
    super(
      `${endpoint}: unexpected answer${status === undefined ? '' : ` (HTTP ${status})`}${from}${at}: ${detail}${said}`,
      'unexpected_answer',
      {
        endpoint,
        status,
      },
    );
    this.field = field;
    this.reason = detail;
  }
}

/** Another 4xx (413, 405, ...), or a request the client refused to send because it breaks the request schema. */
export class RequestRejectedError extends ApiError {
  readonly issues: ValidationIssue[];

  constructor(
    endpoint: string,
    status: number | undefined,
    detail: string,
    issues: ValidationIssue[] = [],
    serviceCode?: string,
  ) {
    const code = status === undefined ? 'invalid_request' : 'request_rejected';
    super(`${endpoint}: ${status === undefined ? 'request not sent' : `HTTP ${status}`}: ${detail}`, code, {
      endpoint,
      status,
      serviceCode,
    });
    this.issues = issues;
  }
}

/** The caller's AbortSignal fired before the call could finish (while waiting to resend). */
export class AbortedError extends ApiError {
  constructor(endpoint: string, last: ApiError | undefined) {
    const after = last ? ` after ${last.code}${last.ambiguous ? ' (the last attempt may have been applied)' : ''}` : '';
    super(`${endpoint}: aborted by the caller${after}`, 'aborted', {
      endpoint,
      status: last?.status,
      ambiguous: last?.ambiguous ?? false,
      cause: last,
    });
  }
}
