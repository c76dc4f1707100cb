// The retry decision, pure and table-driven (docs/api-client.md; after got's
// calculate-retry-delay.ts and stripe-node's _shouldRetry). It sees plain data only: what kind of
// failure happened, how safe the endpoint is to resend, the caller's retry mode and the attempt
// count. No clock, no network: src/api/client.ts feeds it and sleeps what it says.

/** What went wrong with one attempt, as far as resending is concerned. */
export type FailureKind =
  /** Connection refused, DNS, connect time-out: the service never saw the request. */
  | 'not_sent'
  /** Sent, then reset or timed out without an answer: it may have been applied. */
  | 'no_answer'
  /** 429: refused before processing (the sandbox and the real platform answer it before applying anything). */
  | 'rate_limited'
  /** 5xx: the service failed. */
  | 'server_error'
  /** 401: the token was refused; renew it once and resend. */
  | 'unauthorized'
  /** Any other answer that is final: 400, 403, 404, unexpected shapes. */
  | 'final';

/**
 * How safe an endpoint is to send twice.
 * - idempotent: reads and validate; nothing is changed.
 * - deduplicated: creates whose repeat the service recognises and answers as "already there":
 *   already imported (create account), NOTE_ALREADY_EXISTS, TRANSACTION_ALREADY_EXISTS with
 * check_previously_added=true, historical_statement_already_exists (docs/service.md "Notes" to "Payment instructions").
 * - vendor_call: payment instruction; no dedup, but the spec says its 500 is to be retried as is.
 * - unsafe: a write the service does not deduplicate (transactions with check_previously_added=false).
 */
export type EndpointSafety = 'idempotent' | 'deduplicated' | 'vendor_call' | 'unsafe';

/**
 * The caller's choice per call: 'auto' follows the table; 'safe' resends only what the service
 * certainly did not apply (for callers that reconcile ambiguous outcomes themselves); 'never'
 * resends nothing, except once after a 401 (an unauthorised request is not processed).
 */
export type RetryMode = 'auto' | 'safe' | 'never';

/** May this failure be resent, per endpoint safety (mode 'auto'). */
export const RESEND_TABLE = {
  not_sent: { idempotent: true, deduplicated: true, vendor_call: true, unsafe: true },
  rate_limited: { idempotent: true, deduplicated: true, vendor_call: true, unsafe: true },
  // A resend of a deduplicated write is answered "already there", which the client counts as success.
  no_answer: { idempotent: true, deduplicated: true, vendor_call: false, unsafe: false },
  // Spec "Create payment instruction": 500 = intermittent vendor failure, "to be retried as it is".
  server_error: { idempotent: true, deduplicated: true, vendor_call: true, unsafe: false },
  unauthorized: { idempotent: false, deduplicated: false, vendor_call: false, unsafe: false },
  final: { idempotent: false, deduplicated: false, vendor_call: false, unsafe: false },
} as const satisfies Record<FailureKind, Record<EndpointSafety, boolean>>;

/** Failures that cannot have changed anything at the service: resendable in mode 'safe'. */
const CERTAINLY_NOT_APPLIED: ReadonlySet<FailureKind> = new Set(['not_sent', 'rate_limited']);

export interface RetryPolicy {
  /** Resends after the first attempt (so at most maxRetries + 1 requests). */
  maxRetries: number;
  /** Backoff base: the cap of the first delay, doubled per attempt. */
  baseDelayMs: number;
  /** Cap of any computed delay. */
  maxDelayMs: number;
  /** A Retry-After longer than this is not waited out: the error is reported instead. */
  maxRetryAfterMs: number;
}

export const DEFAULT_RETRY_POLICY = {
  maxRetries: 5,
  baseDelayMs: 500,
  maxDelayMs: 30_000,
  maxRetryAfterMs: 120_000,
} as const satisfies RetryPolicy;

/**
 * Token requests refused as too many (KT-CT-1199 in a 200, or a 429 or 503 with Retry-After; docs/api-client.md "The
 * token"): one token request at a time for the whole process, each wait longer than the last, and a ceiling.
 */
export interface TokenThrottlePolicy {
  /** Token requests refused as too many in a row after which the run stops (token_throttled, exit 3). */
  maxRequests: number;
  /** The wait after the first refusal, doubled after each (a longer Retry-After wins). */
  firstDelayMs: number;
  /** Cap of the doubled wait (a Retry-After is bounded by RetryPolicy.maxRetryAfterMs instead). */
  maxDelayMs: number;
}

export const DEFAULT_TOKEN_THROTTLE = {
  maxRequests: 5,
  firstDelayMs: 5_000,
  maxDelayMs: 60_000,
} as const satisfies TokenThrottlePolicy;

/**
 * The wait before the next token request after `refused` refusals in a row (1 after the first), or undefined when the
 * ceiling is reached: 5, 10, 20, 40 s by default (75 s in all), or the service's Retry-After when it is longer.
 */
export function tokenThrottleDelay(
  refused: number,
  retryAfterMs: number | undefined,
  policy: TokenThrottlePolicy = DEFAULT_TOKEN_THROTTLE,
): number | undefined {
  if (refused >= policy.maxRequests) return undefined;
  const doubled = Math.min(policy.maxDelayMs, policy.firstDelayMs * 2 ** Math.max(0, refused - 1));
  return Math.max(doubled, retryAfterMs ?? 0);
}

export interface RetryInput {
  failure: FailureKind;
  safety: EndpointSafety;
  mode: RetryMode;
  /** Attempts made so far, including the one that just failed (1 after the first failure). */
  attempt: number;
  /** The service's Retry-After in ms (already parsed; undefined = no usable hint). */
  retryAfterMs?: number | undefined;
  /** Whether the token was renewed after a 401 already in this call. */
  renewedAfterUnauthorized: boolean;
  /** A number in [0, 1) for the jitter. */
  random: number;
}

export type RetryDecision =
  | { retry: true; delayMs: number; renewToken: boolean }
  | { retry: false; reason: 'not_retryable' | 'retries_exhausted' | 'retry_after_too_long' | 'renewal_refused' };

/** Full jitter: uniform in [0, min(maxDelay, base * 2^(attempt-1))) (AWS "Exponential Backoff and Jitter"). */
export function backoffDelay(attempt: number, policy: RetryPolicy, random: number): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.max(0, attempt - 1));
  return Math.floor(random * ceiling);
}

export function decideRetry(input: RetryInput, policy: RetryPolicy = DEFAULT_RETRY_POLICY): RetryDecision {
  if (input.failure === 'unauthorized') {
    // Renew once per call; a second 401 with a fresh token means the credentials are refused.
    return input.renewedAfterUnauthorized
      ? { retry: false, reason: 'renewal_refused' }
      : { retry: true, delayMs: 0, renewToken: true };
  }
  if (!resendable(input)) return { retry: false, reason: 'not_retryable' };
  if (input.attempt > policy.maxRetries) return { retry: false, reason: 'retries_exhausted' };
  if (input.retryAfterMs !== undefined) {
    if (input.retryAfterMs > policy.maxRetryAfterMs) return { retry: false, reason: 'retry_after_too_long' };
    return { retry: true, delayMs: input.retryAfterMs, renewToken: false };
  }
  return { retry: true, delayMs: backoffDelay(input.attempt, policy, input.random), renewToken: false };
}

function resendable(input: RetryInput): boolean {
  switch (input.mode) {
    case 'never':
      return false;
    case 'safe':
      return CERTAINLY_NOT_APPLIED.has(input.failure);
    case 'auto':
      return RESEND_TABLE[input.failure][input.safety];
  }
}

/**
 * Retry-After as seconds or an HTTP date (RFC 9110 §10.2.3), in ms from `now`. 0, a past date,
 * or anything unparseable is no hint (undefined): the normal backoff applies. A negative number of seconds (`-5`, not
 * a form RFC 9110 allows) is treated as absent too, never as "now" nor as a date.
 */
export function parseRetryAfter(value: string | string[] | undefined, now: number): number | undefined {
  const text = (Array.isArray(value) ? value[0] : value)?.trim();
  if (!text) return undefined;
  if (/^\d+(\.\d+)?$/.test(text)) {
    const ms = Math.round(Number(text) * 1000);
    return ms > 0 ? ms : undefined;
  }
  const at = Date.parse(text);
  if (Number.isNaN(at) || !/[a-z]/i.test(text)) return undefined;
  const ms = at - now;
  return ms > 0 ? ms : undefined;
}

/**
 * The Retry-After of an answer in ms (parseRetryAfter). An HTTP date is read against the answer's own Date header when
 * it has one (the service's clock against itself, whatever the skew between the two machines), else against the wall
 * clock `wallNow`; never against the run's clock, which does not follow a step of the wall clock (docs/limits.md
 * "Clocks"): after a one-hour step a 30 s pause would read as 3,630 s.
 */
export function retryAfterOf(
  headers: Record<string, string | string[] | undefined>,
  wallNow: number,
): number | undefined {
  const date = headers['date'];
  const sent = Date.parse((Array.isArray(date) ? date[0] : date) ?? '');
  return parseRetryAfter(headers['retry-after'], Number.isNaN(sent) ? wallNow : sent);
}
