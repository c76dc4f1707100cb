import { setMaxListeners } from 'node:events';
import {
  AbortedError,
  ApiError,
  NetworkError,
  RateLimitedError,
  UnexpectedResponseError,
  UnusableTokenError,
} from './errors.js';
import type { ClientEvent } from './events.js';
import { tokenHeaderProblem } from './header-token.js';
import { errorFromResponse, failureKindOf, type ServiceResponse } from './map-response.js';
import {
  HEADER_FORMS,
  resolveClientOptions,
  urlOf,
  type ClientOptions,
  type ResolvedClientOptions,
} from './options.js';
import { AdaptiveLimiter, type LimiterSnapshot, type ReleaseSignal, type Ticket } from './rate-limiter.js';
import { Redactor, safeCause } from './redact.js';
import { serialiseCall } from './request-body.js';
import { decideRetry, type RetryDecision, type RetryMode } from './retry-policy.js';
import { TokenManager } from './token-manager.js';
import { obtainTokenGrant, TOKEN_ENDPOINT } from './token-mutation.js';
import { Transport } from './transport.js';
import { readSuccess } from './unexpected-answer.js';
import type { AccountWire, EndpointCall } from './endpoints.js';
import type { CallOptions } from './types.js';

// The engine of every call: limiter slot -> valid token -> HTTP -> answer mapped to an
// outcome or an error class -> the pure retry policy decides -> sleep and resend, or give up with
// the last error. Endpoint definitions live in endpoints.ts; the public methods in index.ts.

/** A request in flight longer than this is counted as unanswered (the progress line shows them). */
const UNANSWERED_AFTER_MS = 60_000;

export interface ClientStats extends LimiterSnapshot {
  /** Requests in flight that have waited more than a minute for their whole answer. */
  unanswered: number;
  /** HTTP requests sent (token mutation included). */
  requests: number;
  retries: number;
  rateLimited: number;
  tokenRenewals: number;
}

type AttemptResult<T> =
  | { ok: true; value: T }
  | { ok: false; error: ApiError; token: string | undefined; fromToken: boolean }
  /** The client stopped before the request could start (its slot or a pause was waited for). */
  | { ok: false; stopped: true };

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
  /** Aborted by the run's signal or by close(): every wait ends, reads in flight are cut off. */
  readonly #halt = new AbortController();

  constructor(input: ClientOptions) {
    const options = resolveClientOptions(input);
    this.#options = options;
    // One listener per request in flight or waiting (its cut-off, its backoff): as many as the concurrency allows.
    setMaxListeners(0, this.#halt.signal);
    if (options.signal?.aborted) this.#halt.abort();
    else options.signal?.addEventListener('abort', () => this.#halt.abort(), { once: true });
    this.#redactor.add(options.credentials.apiKey);
    this.#redactor.add(options.credentials.token);
    this.#redactor.add(options.credentials.refreshToken);
    for (const proxy of [options.proxy?.httpProxy, options.proxy?.httpsProxy]) this.#redactor.addUserInfo(proxy?.url);
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
      requestTimeoutMs: timeouts.requestMs,
      firstAnswerMs: timeouts.firstAnswerMs,
      tokenEndpoint: TOKEN_ENDPOINT,
      proxy: options.proxy,
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
      signal: this.#halt.signal,
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
          signal: this.#halt.signal,
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
    return {
      ...this.#limiter.snapshot(),
      ...this.#counts,
      unanswered: this.#transport.waitingLongerThan(UNANSWERED_AFTER_MS),
    };
  }

  /**
   * Ends every wait, cuts off requests still in flight (the engine has given them their grace) and closes the
   * connections; calls made (or resent) afterwards fail at once. Idempotent.
   */
  close(): Promise<void> {
    this.#closed = true;
    this.#halt.abort();
    this.#closing ??= this.#transport.destroy();
    return this.#closing;
  }

  /**
   * Obtains the access token (the token mutation, with its own retries) where the credentials need one; a pre-obtained
   * token is taken as it is. Rejects with the token request's ApiError: a refused key is known before any other call.
   */
  async authenticate(): Promise<void> {
    await this.#tokens.current();
  }

  /** Runs one call to its outcome, resending as the retry policy allows; rejects with the last ApiError. */
  async run<T>(call: EndpointCall<T>, options: CallOptions = {}): Promise<T> {
    const body = serialiseCall(call, this.#options);
    const stop =
      options.signal === undefined ? this.#halt.signal : AbortSignal.any([this.#halt.signal, options.signal]);
    let renewed = false;
    let sent = 0;
    let last: ApiError | undefined;
    for (let attempt = 1; ;) {
      // A closed client sends nothing more; a call cut off by close() ends with what its last attempt met.
      if (this.#closed)
        throw this.#giveUp(last ?? new NetworkError(call.name, 'not_sent', 'the client was closed'), sent);
      if (stop.aborted) throw this.#giveUp(new AbortedError(call.name, last), sent);
      const result = await this.#attempt(call, body);
      if ('stopped' in result) throw this.#giveUp(new AbortedError(call.name, last), sent);
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
      await abortable(this.#options.sleep(decision.delayMs, stop), stop);
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

  async #attempt<T>(call: EndpointCall<T>, body: string | undefined): Promise<AttemptResult<T>> {
    let ticket: Ticket;
    try {
      ticket = await this.#limiter.acquire();
    } catch {
      return { ok: false, stopped: true };
    }
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
      } else if (response.status < 500 && response.status !== 429) {
        // A 429 beyond the ceiling stops the run (RetryAfterTooLongError): no pause, and no news of a good pace.
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
    const problem = tokenHeaderProblem(token);
    if (problem !== undefined)
      throw new UnusableTokenError(call.name, problem, token === this.#options.credentials.token);
    this.#counts.requests += 1;
    const headers: Record<string, string> = {
      accept: 'application/json',
      authorization: HEADER_FORMS[this.#options.headerForm](token),
    };
    if (body !== undefined) headers['content-type'] = 'application/json';
    const request = {
      endpoint: call.name,
      method: call.method,
      path: call.path,
      headers,
      body,
      ...(call.readBody === undefined ? {} : { deadlineMs: this.#options.timeouts.listMs }),
      // A read in flight is cut off when the run stops (its answer changes nothing the next run cannot ask again); a
      // write is awaited, so that its answer is recorded.
      ...(call.safety === 'idempotent' ? { signal: this.#halt.signal } : {}),
    };
    return this.#transport.send(request, call.readBody);
  }

  #interpret<T>(
    call: EndpointCall<T>,
    answer: ServiceResponse,
  ): { ok: true; value: T } | { ok: false; error: ApiError } {
    // Bodies become messages, outcome values and ledger rows that people read (a status's latest_error, an error's
    // detail): scrubbed first, whole, before any of it is cut or kept. A body without a secret is passed as it is.
    const response = { ...answer, body: this.#redactor.redactDeep(answer.body) };
    if (answer.status >= 200 && answer.status < 300) return { ok: true, value: readSuccess(call, response) };
    const error = errorFromResponse(response, {
      endpoint: call.name,
      write: call.method !== 'GET' && call.safety !== 'idempotent',
      serverErrorMeansNotApplied: call.serverErrorMeansNotApplied ?? false,
      now: this.#options.clock.now(),
      maxRetryAfterMs: this.#options.retry.maxRetryAfterMs,
      alwaysThere: call.alwaysThere === true ? urlOf(this.#options.baseUrl, call.path) : undefined,
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
