import { CODE_LIMIT, limitDetail } from '../errors.js';
import { obtainTokenResultSchema } from '../schema/index.js';
import {
  AbortedError,
  ApiError,
  AuthenticationError,
  RateLimitedError,
  TokenThrottledError,
  UnexpectedResponseError,
} from './errors.js';
import type { ClientEvent } from './events.js';
import {
  errorFromResponse,
  failureKindOf,
  retryAfterTooLong,
  type MapContext,
  type ServiceResponse,
} from './map-response.js';
import { urlOf, type ResolvedClientOptions } from './options.js';
import { safeCause, type Redactor } from './redact.js';
import { DEFAULT_RETRY_POLICY, decideRetry, retryAfterOf, tokenThrottleDelay } from './retry-policy.js';
import type { ObtainInput, TokenGrant } from './token-manager.js';
import type { Transport } from './transport.js';
import { unexpectedAnswer } from './unexpected-answer.js';

// The ObtainToken GraphQL mutation (spec "Authentication" 1; docs/service.md "Authentication"): its root
// field is configurable (the real platform's `obtainKrakenToken` by default), its input one of
// `APIKey` or `refreshToken`. GraphQL answers HTTP 200 and puts failures in
// `errors[].extensions.errorCode` (KT-CT codes).

export const TOKEN_ENDPOINT = 'obtainToken';

/** `iat` is whole seconds: up to 1 s behind the moment of issue, plus transit. */
const MAX_ROUNDING_MS = 2000;

/** KT-CT-1199: too many requests (docs/service.md "Authentication"). */
const TOO_MANY_REQUESTS = 'KT-CT-1199';

/** The request body; the secret travels in `variables` only, never in the query text. */
export function tokenMutationBody(field: string, input: ObtainInput): string {
  const query =
    `mutation ObtainToken($input: ObtainJSONWebTokenInput!) { ${field}(input: $input) { token payload ` +
    `refreshToken refreshExpiresIn } }`;
  return JSON.stringify({ query, variables: { input } });
}

/**
 * A 503 with a usable Retry-After: the HTTP form of too many token requests (a gateway's), a RateLimitedError like
 * KT-CT-1199 and the 429 (which errorFromResponse reads); past the ceiling on any pause, the stop that names it.
 */
function throttledForm(response: ServiceResponse, context: MapContext): ApiError | undefined {
  if (response.status !== 503) return undefined;
  const tooLong = retryAfterTooLong(response, context);
  if (tooLong) return tooLong;
  const retryAfterMs = retryAfterOf(response.headers, context.wallNow);
  return retryAfterMs === undefined ? undefined : new RateLimitedError(TOKEN_ENDPOINT, retryAfterMs, 503);
}

/** The run's clock (`now`: the grant's times) and the wall clock (`wallNow`: a Retry-After's HTTP date). */
export interface TokenClocks {
  now: number;
  wallNow: number;
}

interface GraphqlError {
  message?: unknown;
  extensions?: { errorCode?: unknown };
}

/** Reads the mutation's answer into a grant, or the error it stands for. */
export function readTokenResponse(
  field: string,
  response: ServiceResponse,
  { now, wallNow }: TokenClocks,
  maxRetryAfterMs: number = DEFAULT_RETRY_POLICY.maxRetryAfterMs,
  /** The mutation's URL: a 404 there means the base URL is not the service's (NotTheServiceError). */
  tokenUrl?: string,
): TokenGrant | ApiError {
  if (response.status === 400) {
    // A query the service does not understand, e.g. a wrong --token-field: no token can be had.
    const message = (response.body as { errors?: GraphqlError[] } | undefined)?.errors?.[0]?.message;
    const said = typeof message === 'string' ? limitDetail(message) : 'HTTP 400';
    return new AuthenticationError(TOKEN_ENDPOINT, said, { status: 400 });
  }
  const context: MapContext = {
    endpoint: TOKEN_ENDPOINT,
    write: false,
    serverErrorMeansNotApplied: true,
    wallNow,
    maxRetryAfterMs,
    alwaysThere: tokenUrl,
  };
  const throttled = throttledForm(response, context);
  if (throttled) return throttled;
  if (response.status !== 200) return errorFromResponse(response, context);
  const body = response.body as { data?: Record<string, unknown> | null; errors?: GraphqlError[] } | undefined;
  const first = Array.isArray(body?.errors) ? body.errors[0] : undefined;
  if (first) {
    const errorCode = first.extensions?.errorCode;
    const code = typeof errorCode === 'string' ? limitDetail(errorCode, CODE_LIMIT) : undefined;
    if (code === TOO_MANY_REQUESTS) return new RateLimitedError(TOKEN_ENDPOINT, undefined, 200);
    const message =
      typeof first.message === 'string' ? limitDetail(first.message) : 'the token mutation returned an error';
    return new AuthenticationError(TOKEN_ENDPOINT, `${message}${code ? ` (${code})` : ''}`, {
      status: 200,
      ...(code ? { serviceCode: code } : {}),
    });
  }
  const parsed = obtainTokenResultSchema.safeParse(body?.data?.[field]);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const path = ['data', field, ...(issue?.path.map(String) ?? [])].join('.');
    return new UnexpectedResponseError(TOKEN_ENDPOINT, 200, issue?.message ?? 'not a token result', path);
  }
  const { token, payload, refreshToken, refreshExpiresIn } = parsed.data;
  // `exp` is on the service's clock. When its `iat` shows that clock off from ours by more than
  // the rounding of whole seconds, shift the expiry onto our clock so renewal still comes first.
  const iat = (payload as { iat?: unknown }).iat;
  const skewMs = typeof iat === 'number' && Math.abs(iat * 1000 - now) > MAX_ROUNDING_MS ? iat * 1000 - now : 0;
  return {
    token,
    expiresAt: payload.exp * 1000 - skewMs,
    issuedAt: now,
    refreshToken: refreshToken ?? undefined,
    refreshExpiresAt: typeof refreshExpiresIn === 'number' ? refreshExpiresIn * 1000 - skewMs : undefined,
  };
}

export interface ObtainDeps {
  transport: Transport;
  options: Pick<
    ResolvedClientOptions,
    'baseUrl' | 'tokenField' | 'tokenPath' | 'clock' | 'wallClock' | 'random' | 'retry' | 'sleep'
  >;
  redactor: Redactor;
  emit: (event: ClientEvent) => void;
  onRequest: () => void;
  /** The client's stop: the mutation's waits end and the request is cut off; it then rejects with an AbortedError. */
  signal?: AbortSignal | undefined;
}

/** One token mutation call, resent by the retry policy like a read (obtaining a token twice is harmless). */
export async function obtainTokenGrant(input: ObtainInput, deps: ObtainDeps): Promise<TokenGrant> {
  const { options, redactor, signal } = deps;
  redactor.add('APIKey' in input ? input.APIKey : input.refreshToken);
  const body = tokenMutationBody(options.tokenField, input);
  const headers = { accept: 'application/json', 'content-type': 'application/json' };
  let last: ApiError | undefined;
  const throttle = { refused: 0, since: 0 };
  for (let attempt = 1; ; attempt += 1) {
    if (signal?.aborted) throw redactor.scrubError(new AbortedError(TOKEN_ENDPOINT, last));
    const outcome = await attemptToken(body, headers, deps);
    if (!(outcome instanceof ApiError)) {
      redactor.add(outcome.token);
      redactor.add(outcome.refreshToken);
      return outcome;
    }
    last = outcome;
    if (outcome instanceof RateLimitedError) {
      await waitOutThrottle(outcome, throttle, deps);
      continue;
    }
    const failure = failureKindOf(outcome);
    const decision = decideRetry(
      {
        failure,
        safety: 'idempotent',
        mode: 'auto',
        attempt,
        renewedAfterUnauthorized: true,
        random: options.random(),
      },
      options.retry,
    );
    if (!decision.retry) throw redactor.scrubError(outcome);
    deps.emit({
      type: 'retry',
      endpoint: TOKEN_ENDPOINT,
      attempt,
      delayMs: decision.delayMs,
      code: outcome.code,
      status: outcome.status,
      ambiguous: false,
    });
    await options.sleep(decision.delayMs, signal);
  }
}

/**
 * Too many token requests: the next waits longer each time (retry-policy.ts tokenThrottleDelay; the token manager
 * sends one token request at a time for the whole process, so every caller waits on this one); past the ceiling the
 * run stops (TokenThrottledError, fatal: the token manager sends no more).
 */
async function waitOutThrottle(
  refusal: RateLimitedError,
  throttle: { refused: number; since: number },
  deps: ObtainDeps,
): Promise<void> {
  const { options, redactor, signal } = deps;
  const now = options.clock.now();
  if (throttle.refused === 0) throttle.since = now;
  throttle.refused += 1;
  const delayMs = tokenThrottleDelay(throttle.refused, refusal.retryAfterMs);
  if (delayMs === undefined) {
    const status = refusal.status ?? 429;
    throw redactor.scrubError(new TokenThrottledError(TOKEN_ENDPOINT, throttle.refused, now - throttle.since, status));
  }
  deps.emit({
    type: 'retry',
    endpoint: TOKEN_ENDPOINT,
    attempt: throttle.refused,
    delayMs,
    code: refusal.code,
    status: refusal.status,
    ambiguous: false,
  });
  await options.sleep(delayMs, signal);
}

/** The body with the mutation's result fields `token` and `refreshToken` shown as [REDACTED], whatever they hold. */
function withoutTokens(body: unknown, field: string): unknown {
  const result = (body as { data?: Record<string, unknown> | null } | undefined)?.data?.[field];
  if (typeof result !== 'object' || result === null || Array.isArray(result)) return body;
  const hidden = Object.fromEntries(
    Object.entries(result).map(([key, value]) => [
      key,
      key === 'token' || key === 'refreshToken' ? '[REDACTED]' : value,
    ]),
  );
  const data = (body as { data: Record<string, unknown> }).data;
  return { ...(body as object), data: { ...data, [field]: hidden } };
}

/** One request of the mutation: the grant, or the error it stands for. */
async function attemptToken(
  body: string,
  headers: Record<string, string>,
  deps: ObtainDeps,
): Promise<TokenGrant | ApiError> {
  const { transport, options, redactor, signal } = deps;
  try {
    deps.onRequest();
    const response = await transport.send({
      endpoint: TOKEN_ENDPOINT,
      method: 'POST',
      path: options.tokenPath,
      headers,
      body,
      signal,
    });
    // An answer that is not a grant may echo the key: scrubbed whole before any of it is read into a message (and cut).
    const grant = response.status === 200 && !(response.body as { errors?: unknown } | undefined)?.errors;
    const scrubbed = grant ? response : { ...response, body: redactor.redactDeep(response.body) };
    const read = readTokenResponse(
      options.tokenField,
      scrubbed,
      { now: options.clock.now(), wallNow: options.wallClock.now() },
      options.retry.maxRetryAfterMs,
      urlOf(options.baseUrl, options.tokenPath),
    );
    if (!(read instanceof UnexpectedResponseError)) return read;
    // Quoted without the tokens it may hold: they were never registered with the redactor (no grant was read).
    const shown = {
      status: response.status,
      body: withoutTokens(redactor.redactDeep(response.body), options.tokenField),
    };
    return unexpectedAnswer(read, options.tokenPath, shown);
  } catch (error) {
    return error instanceof ApiError
      ? error
      : new UnexpectedResponseError(TOKEN_ENDPOINT, undefined, safeCause(error, redactor).message);
  }
}
