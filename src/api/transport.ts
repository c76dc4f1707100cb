import { EnvHttpProxyAgent, Pool, type Dispatcher } from 'undici';
import { unmendable } from './connection-errors.js';
import {
  AbortedError,
  HtmlAnswerError,
  NetworkError,
  NoAnswerError,
  TimeoutError,
  UnexpectedResponseError,
  type ApiError,
} from './errors.js';
import type { ServiceResponse } from './map-response.js';
import type { ProxySettings } from './proxy.js';
import { safeCause, type Redactor } from './redact.js';
import { bodyExcerpt } from './body-excerpt.js';
import {
  MAX_ERROR_BODY_BYTES,
  ResponseCollector,
  ResponseTooLargeError,
  successCeiling,
  type Failed,
  type Progress,
  type RawResponse,
} from './response-collector.js';
import type { ReadBody } from './response-collector.js';
import { errnoOf } from '../errors.js';

// HTTP on undici's Pool (keep-alive, sized to the concurrency; measured 0.90 of the
// latency bound at concurrency 64 where `fetch` reaches 0.61), through its dispatch API with a
// small handler (response-collector.ts) that notes when undici has handed the whole request to the socket, so a failure
// can be told apart as "never sent" (safe to resend anything) or "sent, no answer" (may have
// been applied). A caller may read a 2xx body as it arrives instead (the list endpoints: `readBody`), so a body of any
// size is never held whole. Every request has a deadline for the whole exchange (undici's time-outs are idle times that
// restart at every chunk) and may be cut off by a signal. Until the service has answered a request of the run whole,
// the deadline is the first answer's (50 s by default), and meeting it stops the run: a service that takes requests
// and never answers them is named at once instead of being waited for and resent for a quarter of an hour.

export type { ReadBody } from './response-collector.js';

export interface TransportOptions {
  baseUrl: URL;
  connections: number;
  connectTimeoutMs: number;
  /** Sent until the response head arrives. */
  headersTimeoutMs: number;
  /** Idle time between body chunks. */
  bodyTimeoutMs: number;
  keepAliveTimeoutMs: number;
  /** The deadline of a whole request, its answer's body included, unless the request gives its own. */
  requestTimeoutMs: number;
  /** Proxies: requests go through undici's EnvHttpProxyAgent with these (never its own reading of the environment). */
  proxy?: ProxySettings | undefined;
  redactor: Redactor;
  /** Larger success bodies are refused (default: successCeiling of the request's body). */
  maxResponseBytes?: number;
  /**
   * Until a request has been answered whole, no request waits longer than this for its whole answer: one that does
   * fails with a NoAnswerError (fatal). Default: no such bound.
   */
  firstAnswerMs?: number | undefined;
  /** Answers to this endpoint do not count as the service's first answer (the token mutation may be served apart). */
  tokenEndpoint?: string | undefined;
  /** A monotonic clock, ms (default performance.now): how long requests in flight have waited. */
  now?: () => number;
}

export interface TransportRequest {
  endpoint: string;
  method: 'GET' | 'POST';
  /** Path relative to the base URL, with its query string. */
  path: string;
  headers: Record<string, string>;
  body?: string | undefined;
  /** This request's deadline for the whole exchange, ms (default TransportOptions.requestTimeoutMs). */
  deadlineMs?: number | undefined;
  /** Cuts the request off when it aborts: it then rejects with an AbortedError. */
  signal?: AbortSignal | undefined;
}

const TIMEOUT_CODES = new Set([
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'ETIMEDOUT',
]);

export class Transport {
  readonly #pool: Dispatcher;
  readonly #origin: string;
  readonly #prefix: string;
  readonly #redactor: Redactor;
  readonly #maxBytes: number | undefined;
  readonly #deadlineMs: number;
  readonly #firstAnswerMs: number | undefined;
  readonly #tokenEndpoint: string | undefined;
  readonly #now: () => number;
  /** Each request in flight: when it started (#now), and how to end it. */
  readonly #inFlight = new Set<{ startedAt: number; cancel?: (error: Error) => void }>();
  /** A request other than the token mutation has been answered whole: the service answers. */
  #served = false;
  /** The first answer's bound was met: every request in flight, and any later one, ends alike (the run stops). */
  #silence: FirstAnswerMissing | undefined;
  readonly #baseUrl: URL;
  readonly #proxy: ProxySettings | undefined;
  /** A response head has arrived for some request: from then on a refused connection is the service restarting. */
  #answered = false;

  constructor(options: TransportOptions) {
    this.#baseUrl = options.baseUrl;
    this.#proxy = options.proxy;
    this.#maxBytes = options.maxResponseBytes;
    this.#deadlineMs = options.requestTimeoutMs;
    this.#firstAnswerMs = options.firstAnswerMs;
    this.#tokenEndpoint = options.tokenEndpoint;
    this.#now = options.now ?? (() => performance.now());
    this.#pool = dispatcherFor(options);
    this.#origin = options.baseUrl.origin;
    this.#prefix = options.baseUrl.pathname.replace(/\/+$/, '');
    this.#redactor = options.redactor;
  }

  /**
   * Sends the request and reads the answer: its body parsed as JSON, or, for a 2xx when `readBody` is given, handed to
   * that reader chunk by chunk (the body is then undefined; the size limit does not apply).
   */
  async send(request: TransportRequest, readBody?: ReadBody): Promise<ServiceResponse> {
    const raw = await this.#exchange(request, readBody);
    if (raw.html || startsLikeHtml(raw.text)) throw this.#htmlAnswer(request, raw);
    if (raw.cut) return { status: raw.status, headers: raw.headers, body: undefined, unread: unreadBody(raw) };
    const body =
      readBody !== undefined && raw.status < 300
        ? undefined
        : parseBody(request, raw.status, raw.text, (text) => this.#redactor.redact(text));
    return { status: raw.status, headers: raw.headers, body };
  }

  /** The service answered none of the requests of the run within the bound: they all end so, and so do later ones. */
  #silent(missing: FirstAnswerMissing): void {
    this.#silence ??= missing;
    for (const request of this.#inFlight) request.cancel?.(this.#silence);
  }

  /** Requests in flight that have waited more than `ms` for their whole answer. */
  waitingLongerThan(ms: number): number {
    const now = this.#now();
    let count = 0;
    for (const request of this.#inFlight) if (now - request.startedAt > ms) count += 1;
    return count;
  }

  /** Waits for requests in flight, then closes the connections. */
  close(): Promise<void> {
    return this.#pool.close();
  }

  /** Cuts off every request in flight (each rejects with a network error) and closes the connections. */
  destroy(): Promise<void> {
    return this.#pool.destroy();
  }

  #exchange(request: TransportRequest, readBody: ReadBody | undefined): Promise<RawResponse> {
    const deadlineMs = request.deadlineMs ?? this.#deadlineMs;
    const { signal } = request;
    const entry: { startedAt: number; cancel?: (error: Error) => void } = { startedAt: this.#now() };
    this.#inFlight.add(entry);
    let timer: NodeJS.Timeout | undefined;
    let onAbort: (() => void) | undefined;
    return new Promise<RawResponse>((resolve, reject) => {
      const collector = new ResponseCollector({
        maxBytes: this.#maxBytes ?? successCeiling(request.body),
        readBody,
        resolve: (raw) => {
          if (request.endpoint !== this.#tokenEndpoint) this.#served = true;
          resolve(raw);
        },
        reject: (failed) => reject(this.#failure(request, failed, collector.progress())),
        onAnswer: () => {
          this.#answered = true;
          // A list's answer is read as it arrives, under its own deadline: its head shows the service answers.
          if (readBody !== undefined && request.endpoint !== this.#tokenEndpoint) this.#served = true;
        },
      });
      entry.cancel = (error) => collector.cancel(error);
      // Until the service has answered once, the first answer's bound; then, the rest of the request's deadline.
      const expire = (): void => {
        const waited = this.#now() - entry.startedAt;
        if (!this.#served && this.#firstAnswerMs !== undefined)
          this.#silent(new FirstAnswerMissing(Math.min(deadlineMs, this.#firstAnswerMs)));
        else if (waited < deadlineMs) timer = setTimeout(expire, deadlineMs - waited);
        else collector.cancel(new DeadlineError(deadlineMs));
      };
      if (this.#silence && !this.#served) return collector.cancel(this.#silence);
      timer = setTimeout(expire, Math.min(deadlineMs, this.#served ? Infinity : (this.#firstAnswerMs ?? Infinity)));
      if (signal) {
        onAbort = () => collector.cancel(new CutOffError());
        if (signal.aborted) onAbort();
        else signal.addEventListener('abort', onAbort, { once: true });
      }
      this.#pool.dispatch(this.#dispatchOptions(request), collector);
    }).finally(() => {
      this.#inFlight.delete(entry);
      clearTimeout(timer);
      if (onAbort) signal?.removeEventListener('abort', onAbort);
    });
  }

  /** The page's title says what answered (a login page, a proxy's notice): scrubbed, and cut short. */
  #htmlAnswer(request: TransportRequest, raw: RawResponse): HtmlAnswerError {
    const contentType = raw.headers['content-type'];
    const title = /<title[^>]*>([^<]*)</i.exec(raw.text)?.[1]?.replace(/\s+/g, ' ').trim();
    const shown = title === undefined ? undefined : this.#redactor.redact(title).slice(0, 100);
    const url = this.#urlOf(request);
    const type = (Array.isArray(contentType) ? contentType[0] : contentType)?.slice(0, 100) ?? '';
    return new HtmlAnswerError(request.endpoint, raw.status, url, type, shown || undefined);
  }

  #urlOf(request: TransportRequest): string {
    return `${this.#origin}${this.#prefix}${request.path}`;
  }

  #dispatchOptions(request: TransportRequest): Dispatcher.DispatchOptions {
    return {
      origin: this.#origin,
      method: request.method,
      path: this.#prefix + request.path,
      headers: request.headers,
      body: request.body,
    };
  }

  /** A reader's refusal stays as it is (an UnexpectedResponseError for a body that is not what the endpoint gives). */
  #failure(request: TransportRequest, failed: Failed, progress: Progress): Error {
    const { endpoint } = request;
    const { error, sent } = failed;
    if (failed.refused) return error;
    if (error instanceof ResponseTooLargeError)
      return new UnexpectedResponseError(endpoint, progress.status, error.message, '');
    if (error instanceof CutOffError) return new AbortedError(endpoint, undefined);
    if (error instanceof FirstAnswerMissing)
      return new NoAnswerError(endpoint, this.#urlOf(request), error.withinMs, notAnswered(progress), sent);
    const phase = sent ? 'sent' : 'not_sent';
    if (error instanceof DeadlineError) return new TimeoutError(endpoint, phase, error.message);
    return this.#networkError(endpoint, error, sent);
  }

  #networkError(endpoint: string, error: unknown, sent: boolean): ApiError {
    const context = { endpoint, baseUrl: this.#baseUrl, proxy: this.#proxy, answered: this.#answered };
    const fatal = sent ? undefined : unmendable(error, context);
    if (fatal) return this.#redactor.scrubError(fatal);
    const code = errnoOf(error);
    const cause = safeCause(error, this.#redactor);
    const detail = `${typeof code === 'string' ? `${code}: ` : ''}${cause.message}`;
    const phase = sent ? 'sent' : 'not_sent';
    return typeof code === 'string' && TIMEOUT_CODES.has(code)
      ? new TimeoutError(endpoint, phase, detail, cause)
      : new NetworkError(endpoint, phase, detail, cause);
  }
}

/**
 * The connection pool, the same with or without a proxy: a Pool of the service's origin, or undici's EnvHttpProxyAgent
 * (an Agent whose pool per origin has these settings) when a proxy is configured. The settings are given explicitly, so
 * that the agent never reads the environment itself (src/config/proxy.ts does).
 */
function dispatcherFor(options: TransportOptions): Dispatcher {
  const pool = {
    connections: options.connections,
    connectTimeout: options.connectTimeoutMs,
    headersTimeout: options.headersTimeoutMs,
    bodyTimeout: options.bodyTimeoutMs,
    keepAliveTimeout: options.keepAliveTimeoutMs,
  };
  const { proxy } = options;
  if (proxy === undefined) return new Pool(options.baseUrl.origin, pool);
  return new EnvHttpProxyAgent({
    ...pool,
    httpProxy: proxy.httpProxy?.url ?? '',
    httpsProxy: proxy.httpsProxy?.url ?? '',
    noProxy: proxy.noProxy?.list ?? '',
  });
}

/** The whole exchange took longer than its deadline. */
class DeadlineError extends Error {
  constructor(deadlineMs: number) {
    super(
      `no whole answer within ${(deadlineMs / 1000).toLocaleString('en-GB')} s, the deadline of a request (its ` +
        `answer's body included)`,
    );
  }
}

/** No whole answer to a request before the service had answered any: the first answer's bound was met. */
class FirstAnswerMissing extends Error {
  readonly withinMs: number;
  constructor(withinMs: number) {
    super('no first answer');
    this.withinMs = withinMs;
  }
}

/** What did not answer, by how far the request got. */
function notAnswered(progress: Progress): string {
  if (!progress.connected) return 'no connection: the request was never written';
  if (!progress.sent) return 'the connection took the request, but not whole';
  if (progress.status === undefined) return "the request was sent; no answer's head came";
  return (
    `HTTP ${progress.status} came, and ${progress.bytes.toLocaleString('en-GB')} bytes of its body, not the ` +
    `whole body`
  );
}

/** The request's signal aborted (the run stops). */
class CutOffError extends Error {
  constructor() {
    super('cut off: the run is stopping');
  }
}

/** An error body beyond the bound, as it is told: its size, as the service declared it, and that it was not read. */
function unreadBody(raw: RawResponse): string {
  const declared = Number(raw.headers['content-length']);
  const size = Number.isFinite(declared) && declared > 0 ? ` (${declared.toLocaleString('en-GB')} bytes in all)` : '';
  return (
    `the error body is longer than the ${MAX_ERROR_BODY_BYTES.toLocaleString('en-GB')} bytes the tool reads of ` +
    `one${size}; it was not read further`
  );
}

/** A page without an HTML Content-Type, as some servers send it (text/plain, or none), by its first tag. */
function startsLikeHtml(text: string): boolean {
  return /^\s*<(!doctype html|html[\s>])/i.test(text.slice(0, 200));
}

/**
 * JSON, or undefined for an empty body; a 2xx that is not JSON (cut off, or another format) is an unexpected answer,
 * quoting the body's start (scrubbed of secrets first, whole).
 */
function parseBody(request: TransportRequest, status: number, raw: string, redact: (text: string) => string): unknown {
  if (raw.trim() === '') return undefined;
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    if (status >= 200 && status < 300) {
      const answer = { path: request.path, excerpt: bodyExcerpt(redact(raw)) };
      throw new UnexpectedResponseError(request.endpoint, status, 'the body is not JSON', '', answer);
    }
    return undefined;
  }
}
