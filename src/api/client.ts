import { moneyToStrings, withoutTenantFields } from '../schema/index.js';
import { undocumentedFields } from './documented-fields.js';
import {
  AbortedError,
  ApiError,
  NetworkError,
  RateLimitedError,
  RequestRejectedError,
  UnexpectedResponseError,
} from './errors.js';
import type { ClientEvent } from './events.js';
import { errorFromResponse, failureKindOf, type ServiceResponse } from './map-response.js';
import { resolveClientOptions, type ClientOptions, type ResolvedClientOptions } from './options.js';
import { AdaptiveLimiter, type LimiterSnapshot, type ReleaseSignal } from './rate-limiter.js';
import { Redactor, safeCause } from './redact.js';
import { decideRetry, type RetryDecision, type RetryMode } from './retry-policy.js';
import { TokenManager } from './token-manager.js';
import { obtainTokenGrant, TOKEN_ENDPOINT } from './token-mutation.js';
import { Transport } from './transport.js';
import type { AccountWire, EndpointCall } from './endpoints.js';
import type { CallOptions } from './types.js';

// The engine of every call: limiter slot -> valid token -> HTTP -> answer mapped to an
// outcome or an error class -> the pure retry policy decides -> sleep and resend, or give up with
// the last error. Endpoint definitions live in endpoints.ts; the public methods in index.ts.

export interface ClientStats extends LimiterSnapshot {
  /** HTTP requests sent (token mutation included). */
  requests: number;
  retries: number;
  rateLimited: number;
  tokenRenewals: number;
}

type AttemptResult<T> =
  { ok: true; value: T } | { ok: false; error: ApiError; token: string | undefined; fromToken: boolean };

/** Resolves with the wait, or as soon as the signal aborts (the caller then gives up). */
function abortable(wait: Promise<void>, signal: AbortSignal | undefined): Promise<void> {
  if (!signal) return wait;
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      signal.removeEventListener('abort', done);
      resolve();
    };
    signal.addEventListener('abort', done, { once: true });
    void wait.then(done);
  });
}

export class CallRunner {
  readonly #options: ResolvedClientOptions;
  readonly #redactor = new Redactor();
  readonly #transport: Transport;
  readonly #limiter: AdaptiveLimiter;
  readonly #tokens: TokenManager;
  readonly #counts = { requests: 0, retries: 0, rateLimited: 0, tokenRenewals: 0 };
  #closed = false;
  #closing: Promise<void> | undefined;

  constructor(input: ClientOptions) {
    const options = resolveClientOptions(input);
    this.#options = options;
    this.#redactor.add(options.credentials.apiKey);
    this.#redactor.add(options.credentials.token);
    this.#redactor.add(options.credentials.refreshToken);
    const { timeouts } = options;
    this.#transport = new Transport({
      baseUrl: options.baseUrl,
      connections: options.concurrency,
      connectTimeoutMs: timeouts.connectMs,
      headersTimeoutMs: timeouts.headersMs,
      bodyTimeoutMs: timeouts.bodyMs,
      // undici's default: below the idle time-out of common servers (5 s), so a socket is not reused as the server
      // closes it.
      keepAliveTimeoutMs: 4_000,
      redactor: this.#redactor,
    });
    this.#limiter = new AdaptiveLimiter({
      concurrency: options.concurrency,
      maxRequestsPerSecond: options.maxRequestsPerSecond,
      recoveryIntervalMs: options.recoveryIntervalMs,
      pauseWithoutHintMs: options.rateLimitPauseMs,
      clock: options.clock,
      sleep: options.sleep,
      onChange: (change) => this.#emit({ type: 'limit_changed', ...change }),
    });
    this.#tokens = new TokenManager({
      credentials: options.credentials,
      // Not gated by the limiter: it is rare, and callers hold slots while they wait for it.
      obtain: (obtainInput) =>
        obtainTokenGrant(obtainInput, {
          transport: this.#transport,
          options,
          redactor: this.#redactor,
          emit: (event) => this.#emit(event),
          onRequest: () => {
            this.#counts.requests += 1;
          },
        }),
      clock: options.clock,
      renewMarginMs: options.renewMarginMs,
      onRenewed: (renewal) => {
        this.#counts.tokenRenewals += 1;
        this.#emit({ type: 'token_renewed', ...renewal });
      },
    });
  }

  /** What the account requests need of the options (dialect, task_params). */
  get wire(): AccountWire {
    const { dialect, taskParams } = this.#options;
    return { dialect, taskParams };
  }

  stats(): ClientStats {
    return { ...this.#limiter.snapshot(), ...this.#counts };
  }

  /** Waits for requests in flight; calls made (or resent) afterwards fail at once. Idempotent. */
  close(): Promise<void> {
    this.#closed = true;
    this.#closing ??= this.#transport.close();
    return this.#closing;
  }

  /** Runs one call to its outcome, resending as the retry policy allows; rejects with the last ApiError. */
  async run<T>(call: EndpointCall<T>, options: CallOptions = {}): Promise<T> {
    const body = this.#serialise(call);
    let renewed = false;
    let sent = 0;
    let last: ApiError | undefined;
    for (let attempt = 1; ;) {
      if (this.#closed) throw new NetworkError(call.name, 'not_sent', 'the client was closed');
      if (options.signal?.aborted) throw this.#giveUp(new AbortedError(call.name, last), sent);
      const result = await this.#attempt(call, body);
      sent += 1;
      if (result.ok) return result.value;
      last = result.error;
      // A token that cannot be had was already retried by the token mutation's own loop.
      const decision = result.fromToken
        ? ({ retry: false } as const)
        : this.#decide(call, result.error, options.retry ?? 'auto', attempt, renewed);
      if (!decision.retry) throw this.#giveUp(result.error, sent);
      if (decision.renewToken) {
        renewed = true;
        await this.#renewAfterUnauthorized(result.token, sent);
        continue;
      }
      this.#counts.retries += 1;
      const { code, status, ambiguous } = result.error;
      this.#emit({ type: 'retry', endpoint: call.name, attempt, delayMs: decision.delayMs, code, status, ambiguous });
      await abortable(this.#options.sleep(decision.delayMs), options.signal);
      attempt += 1;
    }
  }

  #decide<T>(
    call: EndpointCall<T>,
    error: ApiError,
    mode: RetryMode,
    attempt: number,
    renewed: boolean,
  ): RetryDecision {
    const input = {
      failure: failureKindOf(error),
      safety: call.safety,
      mode,
      attempt,
      retryAfterMs: error instanceof RateLimitedError ? error.retryAfterMs : undefined,
      renewedAfterUnauthorized: renewed,
      random: this.#options.random(),
    };
    return decideRetry(input, this.#options.retry);
  }

  #serialise<T>(call: EndpointCall<T>): string | undefined {
    if (call.body === undefined) return undefined;
    if (this.#options.checkRequests && call.requestSchema) {
      const checked = call.checked ?? call.body;
      const judged = call.tenant ? withoutTenantFields(call.tenant, checked, this.#options.tenantFields) : checked;
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
    if (this.#options.dialect === 'kraken' && call.money) {
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

  async #attempt<T>(call: EndpointCall<T>, body: string | undefined): Promise<AttemptResult<T>> {
    const ticket = await this.#limiter.acquire();
    let signal: ReleaseSignal = 'failure';
    let retryAfterMs: number | undefined;
    let token: string | undefined;
    try {
      token = await this.#tokens.current();
      const response = await this.#send(call, body, token).catch((error: unknown) => {
        this.#emit({ type: 'response', endpoint: call.name, status: undefined });
        throw error;
      });
      this.#emit({ type: 'response', endpoint: call.name, status: response.status });
      const result = this.#interpret(call, response);
      if (!result.ok && result.error instanceof RateLimitedError) {
        signal = 'rate_limited';
        retryAfterMs = result.error.retryAfterMs;
        this.#counts.rateLimited += 1;
        this.#emit({ type: 'rate_limited', endpoint: call.name, retryAfterMs });
      } else if (response.status < 500) {
        signal = 'success';
      }
      return result.ok ? result : { ...result, token, fromToken: false };
    } catch (error) {
      return { ok: false, error: this.#asApiError(call.name, error), token, fromToken: token === undefined };
    } finally {
      this.#limiter.release(ticket, signal, retryAfterMs);
    }
  }

  #send<T>(call: EndpointCall<T>, body: string | undefined, token: string): Promise<ServiceResponse> {
    this.#counts.requests += 1;
    const headers: Record<string, string> = {
      accept: 'application/json',
      authorization: this.#options.headerForm === 'token' ? `Token ${token}` : token,
    };
    if (body !== undefined) headers['content-type'] = 'application/json';
    return this.#transport.send(
      { endpoint: call.name, method: call.method, path: call.path, headers, body },
      call.readBody,
    );
  }

  #interpret<T>(
    call: EndpointCall<T>,
    answer: ServiceResponse,
  ): { ok: true; value: T } | { ok: false; error: ApiError } {
    if (answer.status >= 200 && answer.status < 300) return { ok: true, value: call.success(answer) };
    // Error bodies become messages and outcome values that people read: scrub them first.
    const response = { ...answer, body: this.#redactor.redactDeep(answer.body) };
    const error = errorFromResponse(response, {
      endpoint: call.name,
      write: call.method !== 'GET' && call.safety !== 'idempotent',
      serverErrorMeansNotApplied: call.serverErrorMeansNotApplied ?? false,
      now: this.#options.clock.now(),
    });
    if (error.fatal) return { ok: false, error };
    const value = call.expected?.(error, response);
    return value === undefined ? { ok: false, error } : { ok: true, value };
  }

  async #renewAfterUnauthorized(rejected: string | undefined, sent: number): Promise<void> {
    try {
      await this.#tokens.renewAfterUnauthorized(rejected ?? '');
    } catch (error) {
      throw this.#giveUp(this.#asApiError(TOKEN_ENDPOINT, error), sent);
    }
  }

  #asApiError(endpoint: string, error: unknown): ApiError {
    if (error instanceof ApiError) return error;
    // Not an answer of the service: a bug or a broken invariant; kept visible, without secrets.
    const cause = safeCause(error, this.#redactor);
    return new UnexpectedResponseError(endpoint, undefined, `${cause.name}: ${cause.message}`, undefined);
  }

  #giveUp(error: ApiError, sent: number): ApiError {
    error.attempts = sent;
    this.#emit({
      type: 'failed',
      endpoint: error.endpoint,
      code: error.code,
      status: error.status,
      attempts: error.attempts,
      ambiguous: error.ambiguous,
    });
    return this.#redactor.scrubError(error);
  }

  #emit(event: ClientEvent): void {
    try {
      this.#options.onEvent(event);
    } catch {
      // A failing listener must not fail a request that succeeded.
    }
  }
}
