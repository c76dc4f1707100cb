import { setTimeout as delay } from 'node:timers/promises';
import { RUN_DEFAULTS } from '../defaults.js';
import { UsageError } from '../errors.js';
import { shownUrl } from '../shown-url.js';
import { isDialect, NO_TENANT_FIELDS, type Dialect, type TenantFields } from '../schema/index.js';
import type { ClientEvent } from './events.js';
import type { Clock, Sleep } from './rate-limiter.js';
import { DEFAULT_RETRY_POLICY, type RetryPolicy } from './retry-policy.js';
import { isLoopbackHost, proxyFor, type ProxySettings } from './proxy.js';
import type { Credentials } from './token-manager.js';
import { monotonicNow } from '../clock.js';

/** The token mutation's root field is put into the query text, so it must be a plain GraphQL name. */
const GRAPHQL_NAME = /^[_A-Za-z][_0-9A-Za-z]*$/;

// Options of the client: optional outside, complete inside (resolveClientOptions), validated once
// with messages that give the option, what it expects and what it got (never a secret's value).

/**
 * The Authorization header's forms (docs/api-client.md): the token itself (the spec's text), `Token <token>` (its
 * sample) and `JWT <token>` (the platform owner's own example code).
 */
export const HEADER_FORMS = {
  bare: (token: string) => token,
  token: (token: string) => `Token ${token}`,
  jwt: (token: string) => `JWT ${token}`,
} as const satisfies Record<string, (token: string) => string>;

export type HeaderForm = keyof typeof HEADER_FORMS;

/** Whether `value` names a header form. */
export function isHeaderForm(value: string): value is HeaderForm {
  return Object.hasOwn(HEADER_FORMS, value);
}

export interface ClientTimeouts {
  connectMs?: number;
  /** Until the response head arrives. */
  headersMs?: number;
  /** Idle time between response body chunks. */
  bodyMs?: number;
  /**
   * The deadline of a whole request, from its start to the last byte of its answer: the idle time-outs above reset at
   * every chunk, so an answer trickling a byte at a time would never end without it.
   */
  requestMs?: number;
  /** The same for the list endpoints, whose one answer holds every import process of the supplier. */
  listMs?: number;
  /** Until the service has answered a request of the run whole, the deadline of every request; meeting it is fatal. */
  firstAnswerMs?: number;
}

export interface ClientOptions {
  /** The service's {base_url}: https, or http on a loopback address only. */
  baseUrl: string;
  /** The API key (obtains tokens), a pre-obtained token, or both (the key renews the token). */
  credentials: Credentials;
  /** Requests in flight at most (and the connection pool's size). Default 8. */
  concurrency?: number;
  /** Request starts per second at most; default none. */
  maxRequestsPerSecond?: number | undefined;
  timeouts?: ClientTimeouts;
  /** Resends after the first attempt; default 5. */
  maxRetries?: number;
  /** Backoff settings (maxRetries above wins over retry.maxRetries). */
  retry?: Partial<RetryPolicy>;
  /** Root field of the token mutation; default `obtainKrakenToken` (the real platform's). */
  tokenField?: string;
  /** Path of the GraphQL endpoint under the base URL; default `/v1/graphql/`. */
  tokenPath?: string;
  /** Authorization header: the bare token (the spec's text) or `Token <token>` (its sample). Default 'bare'. */
  headerForm?: HeaderForm;
  /** Renew the token this long before it expires (at most a quarter of its lifetime). Default 60 s. */
  renewMarginMs?: number;
  /** After a 429, one recovery step (+1 concurrency) per this interval. Default 2 s. */
  recoveryIntervalMs?: number;
  /** Whole-client pause after a 429 without a usable Retry-After. Default 1 s. */
  rateLimitPauseMs?: number;
  /** Refuse to send a body with undocumented fields (checked with the request schemas). Default true. */
  checkRequests?: boolean;
  /** Wire format: the spec's (default) or the real platform's (docs/real-platform.md). */
  dialect?: Dialect;
  /** Proxies to reach the service through; default none (direct connections). */
  proxy?: ProxySettings | undefined;
  /** `kraken`: the v2 create's task_params. Default `{}` (every parameter optional). */
  taskParams?: Record<string, unknown>;
  /** Payload fields the mapping file declares beyond the spec's: sent, and let through the documented-fields guard. */
  tenantFields?: TenantFields;
  /** Retries, rate limiting, limit changes and token renewals; never carries a secret. */
  onEvent?: (event: ClientEvent) => void;
  /**
   * The run's stop (SIGINT/SIGTERM): every wait ends at once (a slot, a pause the service asked for, a resend's
   * backoff) and so do reads in flight; calls then reject with an AbortedError. Writes in flight are awaited (their
   * answers are recorded) until close().
   */
  signal?: AbortSignal | undefined;
  clock?: Clock;
  /** The wall clock (Date.now by default), for the dates a service writes: an HTTP-date Retry-After. */
  wallClock?: Clock;
  sleep?: Sleep;
  random?: () => number;
}

export interface ResolvedClientOptions {
  baseUrl: URL;
  credentials: Credentials;
  concurrency: number;
  maxRequestsPerSecond: number | undefined;
  timeouts: Required<ClientTimeouts>;
  retry: RetryPolicy;
  tokenField: string;
  tokenPath: string;
  headerForm: HeaderForm;
  renewMarginMs: number;
  recoveryIntervalMs: number;
  rateLimitPauseMs: number;
  checkRequests: boolean;
  dialect: Dialect;
  proxy: ProxySettings | undefined;
  taskParams: Record<string, unknown>;
  tenantFields: TenantFields;
  onEvent: (event: ClientEvent) => void;
  signal: AbortSignal | undefined;
  clock: Clock;
  wallClock: Clock;
  sleep: Sleep;
  random: () => number;
}

const DEFAULTS = {
  concurrency: RUN_DEFAULTS.concurrency,
  // docs/api-client.md "Time-outs": a whole request within 2 minutes, a whole list (up to 1,000,000 entries) within 10.
  timeouts: {
    connectMs: 10_000,
    headersMs: 120_000,
    bodyMs: 60_000,
    requestMs: 120_000,
    listMs: 600_000,
    firstAnswerMs: RUN_DEFAULTS.firstAnswerSeconds * 1000,
  },
  tokenField: 'obtainKrakenToken',
  tokenPath: '/v1/graphql/',
  headerForm: 'bare',
  renewMarginMs: 60_000,
  recoveryIntervalMs: 2_000,
  rateLimitPauseMs: 1_000,
} as const;

/** The default Sleep: a timer that an aborted signal clears (it resolves then, at once). */
function sleepUnlessAborted(ms: number, signal?: AbortSignal): Promise<void> {
  return delay(ms, undefined, { signal }).catch(() => undefined);
}

/** `label` names what the user set: a client option, or a flag/variable when called from src/config. */
function failAt(label: string, expected: string, actual: unknown): never {
  throw new UsageError(
    `${label}: expected ${expected}, got ${JSON.stringify(actual) ?? String(actual)}`,
    'invalid_client_option',
  );
}

function fail(option: string, expected: string, actual: unknown): never {
  return failAt(`client option ${option}`, expected, actual);
}

function positiveInteger(option: string, value: number): number {
  if (!Number.isInteger(value) || value < 1) fail(option, 'an integer >= 1', value);
  return value;
}

function nonNegative(option: string, value: number): number {
  if (!Number.isFinite(value) || value < 0) fail(option, 'a number >= 0', value);
  return value;
}

/** The base URL rule: https, or plain http to this machine only (the sandbox). */
export function checkBaseUrl(text: string, label = 'client option baseUrl'): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return failAt(label, 'an absolute URL such as https://api.example.energy', shownUrl(text));
  }
  if (url.username || url.password) failAt(label, 'a URL without user name or password', shownUrl(text));
  if (url.search || url.hash) failAt(label, 'a URL without query or fragment', shownUrl(text));
  if (url.protocol === 'https:') return url;
  if (url.protocol === 'http:' && isLoopbackHost(url.hostname)) return url;
  return failAt(label, 'an https URL (plain http only on a loopback address such as 127.0.0.1)', shownUrl(text));
}

function checkCredentials(credentials: Credentials): Credentials {
  const apiKey = (credentials as { apiKey?: unknown }).apiKey;
  const token = (credentials as { token?: unknown }).token;
  if (apiKey !== undefined && (typeof apiKey !== 'string' || apiKey.trim() === ''))
    fail('credentials.apiKey', 'a non-empty string', '(hidden)');
  if (token !== undefined && (typeof token !== 'string' || token.trim() === ''))
    fail('credentials.token', 'a non-empty string', '(hidden)');
  if (apiKey === undefined && token === undefined) fail('credentials', 'an API key or a token', 'neither');
  return credentials;
}

function checkTaskParams(value: unknown): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) fail('taskParams', 'a JSON object', value);
  return value as Record<string, unknown>;
}

export function resolveClientOptions(options: ClientOptions): ResolvedClientOptions {
  const timeouts = { ...DEFAULTS.timeouts, ...options.timeouts };
  for (const [name, value] of Object.entries(timeouts)) positiveInteger(`timeouts.${name}`, value);
  const retry = {
    ...DEFAULT_RETRY_POLICY,
    ...options.retry,
    ...(options.maxRetries === undefined ? {} : { maxRetries: options.maxRetries }),
  };
  if (!Number.isInteger(retry.maxRetries) || retry.maxRetries < 0)
    fail('maxRetries', 'an integer >= 0', retry.maxRetries);
  (['baseDelayMs', 'maxDelayMs', 'maxRetryAfterMs'] as const).forEach((name) =>
    nonNegative(`retry.${name}`, retry[name]),
  );
  const rate = options.maxRequestsPerSecond;
  if (rate !== undefined && (!Number.isFinite(rate) || rate <= 0)) fail('maxRequestsPerSecond', 'a number > 0', rate);
  const tokenField = options.tokenField ?? DEFAULTS.tokenField;
  if (!GRAPHQL_NAME.test(tokenField)) fail('tokenField', 'a GraphQL field name such as obtainKrakenToken', tokenField);
  const tokenPath = options.tokenPath ?? DEFAULTS.tokenPath;
  if (!tokenPath.startsWith('/')) fail('tokenPath', 'a path starting with /', tokenPath);
  const headerForm = options.headerForm ?? DEFAULTS.headerForm;
  if (!isHeaderForm(headerForm)) fail('headerForm', '"bare", "token" or "jwt"', headerForm);
  const baseUrl = checkBaseUrl(options.baseUrl);
  return {
    baseUrl,
    credentials: checkCredentials(options.credentials),
    concurrency: positiveInteger('concurrency', options.concurrency ?? DEFAULTS.concurrency),
    maxRequestsPerSecond: rate,
    timeouts,
    retry,
    tokenField,
    tokenPath,
    headerForm,
    renewMarginMs: nonNegative('renewMarginMs', options.renewMarginMs ?? DEFAULTS.renewMarginMs),
    recoveryIntervalMs: nonNegative('recoveryIntervalMs', options.recoveryIntervalMs ?? DEFAULTS.recoveryIntervalMs),
    rateLimitPauseMs: nonNegative('rateLimitPauseMs', options.rateLimitPauseMs ?? DEFAULTS.rateLimitPauseMs),
    checkRequests: options.checkRequests ?? true,
    dialect: isDialect(options.dialect ?? 'spec')
      ? (options.dialect ?? 'spec')
      : fail('dialect', '"spec" or "kraken"', options.dialect),
    proxy: proxyFor(baseUrl, options.proxy),
    taskParams: checkTaskParams(options.taskParams ?? {}),
    tenantFields: options.tenantFields ?? NO_TENANT_FIELDS,
    onEvent: options.onEvent ?? (() => undefined),
    signal: options.signal,
    clock: options.clock ?? { now: monotonicNow },
    wallClock: options.wallClock ?? { now: Date.now },
    sleep: options.sleep ?? sleepUnlessAborted,
    random: options.random ?? Math.random,
  };
}

/** The URL a request goes to: the base URL's path, then the endpoint's (as the transport joins them). */
export function urlOf(baseUrl: URL, path: string): string {
  return `${baseUrl.origin}${baseUrl.pathname.replace(/\/+$/, '')}${path}`;
}
