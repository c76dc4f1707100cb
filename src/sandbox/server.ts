import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { TokenIssuer } from './auth.js';
import type { TokenThrottle } from './token-throttle.js';
import type { FaultInjector, FaultName } from './faults.js';
import { obtainToken } from './graphql.js';
import type { HandlerContext } from './handlers/common.js';
import {
  isJsonContentType,
  LOGIN_PAGE,
  parseJsonBody,
  readBody,
  sendHtml,
  sendJson,
  sendTrickling,
  withEchoedCredentials,
  withPaddedDetails,
  type Reply,
} from './http-io.js';
import type { SandboxOptions } from './options.js';
import type { RequestLog } from './request-log.js';
import { matchRoute, type Route } from './routes.js';
import type { ProcessStore } from './store.js';

// One request's way through the sandbox: body (413), route (404/405), the real rate limit
// (429), latency (one timer per request), injected faults, token check (401), JSON (415/400),
// then the endpoint. Nothing a client sends can throw out of here.

export interface SandboxRuntime {
  options: SandboxOptions;
  store: ProcessStore;
  issuer: TokenIssuer;
  tokenThrottle: TokenThrottle;
  faults: FaultInjector;
  log: RequestLog;
  flakyCounts: Map<string, number>;
  timers: Set<NodeJS.Timeout>;
  /** Answers trickling now (--trickle-ms). */
  trickling: Set<ServerResponse>;
  /** Epoch milliseconds: processing, token lifetimes and the rate bucket all read this clock. */
  clock: () => number;
  /** Replaces the timer that holds an answer (SandboxHooks.delay). */
  delay?: (ms: number) => Promise<void>;
}

const epochNow = (): number => performance.timeOrigin + performance.now();

type Outcome =
  | { reply: Reply; closeConnection?: boolean }
  | { destroy: true; apply?: () => void }
  | { aborted: true }
  | { page: string };

function sleep(runtime: SandboxRuntime, ms: number): Promise<void> {
  if (ms <= 0) return Promise.resolve();
  if (runtime.delay) return runtime.delay(ms);
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      runtime.timers.delete(timer);
      resolve();
    }, ms);
    runtime.timers.add(timer);
  });
}

function reply(status: number, body: unknown, headers?: Record<string, string>): Outcome {
  return { reply: headers ? { status, body, headers } : { status, body } };
}

function parseBody(request: IncomingMessage, bytes: Buffer): { body: unknown } | { outcome: Outcome } {
  if (!isJsonContentType(request.headers['content-type'])) {
    return {
      outcome: reply(415, {
        detail: `Unsupported media type "${request.headers['content-type'] ?? ''}" in request; send application/json.`,
        code: 'unsupported_media_type',
      }),
    };
  }
  const parsed = parseJsonBody(bytes);
  return parsed.kind === 'ok' ? { body: parsed.value } : { outcome: { reply: parsed.reply } };
}

function runEndpoint(
  runtime: SandboxRuntime,
  request: IncomingMessage,
  route: Route,
  params: string[],
  bytes: Buffer,
  query: URLSearchParams,
): Outcome {
  const now = runtime.clock();
  if (route.kind === 'token') {
    const parsed = parseBody(request, bytes);
    if ('outcome' in parsed) return parsed.outcome;
    const refused = runtime.tokenThrottle.refusal(parsed.body, now);
    if (refused) return { reply: refused };
    return { reply: obtainToken(parsed.body, runtime.issuer, runtime.options.apiKey, now) };
  }
  const auth = runtime.issuer.check(request.headers.authorization, now);
  if (!auth.ok) return reply(401, { detail: auth.detail });
  let body: unknown;
  if (route.method === 'POST') {
    const parsed = parseBody(request, bytes);
    if ('outcome' in parsed) return parsed.outcome;
    body = parsed.body;
  }
  const { options } = runtime;
  const context: HandlerContext = {
    store: runtime.store,
    dialect: options.dialect,
    contract: options.contract,
    now,
    today: options.today ?? new Date(now).toISOString().slice(0, 10),
    openPeriodStart: options.openPeriodStart,
    params,
    query,
    body,
    flakyCounts: runtime.flakyCounts,
    flakyAttempts: options.flakyAttempts,
    multiplePaymentInstructions: options.multiplePaymentInstructions,
    retainPayloads: options.retainPayloads,
    transferStatusWord: options.transferStatusWord,
    processingStatusWord: options.processingStatusWord,
    losesCreate: (supplier, number) => runtime.faults.losesCreate(supplier, number),
  };
  return { reply: route.handler ? route.handler(context) : { status: 500, body: { detail: 'No handler.' } } };
}

async function decide(
  runtime: SandboxRuntime,
  request: IncomingMessage,
  url: URL,
  seen: { fault: FaultName | null; body: Buffer },
): Promise<Outcome> {
  const note = (fault: FaultName): void => {
    seen.fault = fault;
  };
  const read = await readBody(request, runtime.options.maxBodyBytes);
  if (read.kind === 'aborted') return { aborted: true };
  if (read.kind === 'ok') seen.body = read.bytes;
  if (read.kind === 'too_large') {
    return {
      reply: {
        status: 413,
        body: {
          detail: `Request body is larger than ${runtime.options.maxBodyBytes} bytes.`,
          code: 'request_too_large',
        },
      },
      closeConnection: true,
    };
  }
  const match = matchRoute(request.method ?? '', url.pathname);
  if (match.kind === 'not_found') {
    const hint = url.pathname.endsWith('/') ? '' : ' Paths of this service end with a slash.';
    return reply(404, { detail: `Not found: ${url.pathname}.${hint}`, code: 'not_found' });
  }
  if (match.kind === 'method_not_allowed') {
    return reply(
      405,
      { detail: `Method "${request.method ?? ''}" not allowed.`, code: 'method_not_allowed' },
      { allow: match.allowed.join(', ') },
    );
  }
  const faultable = match.route.kind === 'rest' || runtime.faults.options.faultTokenIssue;
  const wait = match.route.kind === 'rest' ? runtime.faults.throttle(runtime.clock()) : undefined;
  await sleep(runtime, runtime.faults.delayMs());
  if (wait !== undefined) {
    note('max_rps');
    return reply(
      429,
      { detail: `Request was throttled. Expected available in ${wait} seconds.`, code: 'throttled' },
      { 'retry-after': String(wait) },
    );
  }
  const fault = faultable ? runtime.faults.draw() : undefined;
  if (fault) note(fault);
  if (fault === 'drop') return { destroy: true };
  if (fault === 'rate_limit') {
    const seconds = runtime.faults.options.retryAfterSeconds;
    return reply(
      429,
      { detail: `Request was throttled. Expected available in ${seconds} seconds.`, code: 'throttled' },
      { 'retry-after': String(seconds) },
    );
  }
  if (fault === 'server_error') return reply(500, { detail: 'A server error occurred.', code: 'error' });
  if (fault === 'html') return { page: LOGIN_PAGE };
  const outcome = runEndpoint(
    runtime,
    request,
    match.route,
    match.params,
    read.kind === 'ok' ? read.bytes : Buffer.alloc(0),
    url.searchParams,
  );
  if (fault === 'ambiguous') return { destroy: true };
  if ('reply' in outcome && outcome.reply.lost) note(outcome.reply.lost);
  if ('reply' in outcome && outcome.reply.lose) {
    note('lost_answer');
    await sleep(runtime, runtime.options.lostAnswerMs);
    return { destroy: true };
  }
  return outcome;
}

/** --error-detail-chars pads every error's detail; --echo-credentials makes it say the credentials too. */
function answerWithFaults(runtime: SandboxRuntime, request: IncomingMessage, body: Buffer, reply: Reply): Reply {
  const { errorDetailChars, echoCredentials } = runtime.faults.options;
  const echoed = echoCredentials
    ? withEchoedCredentials(reply, {
        authorization: request.headers.authorization,
        body,
        apiKey: runtime.options.apiKey,
      })
    : reply;
  return withPaddedDetails(echoed, errorDetailChars);
}

/** --trickle-ms: answers to GET requests (status and lists) trickle. */
function trickles(runtime: SandboxRuntime, request: IncomingMessage, url: URL): boolean {
  return runtime.faults.options.trickleMs > 0 && request.method === 'GET' && !url.pathname.includes('graphql');
}

/** The request listener of the sandbox's HTTP server. */
export function createRequestListener(
  runtime: SandboxRuntime,
): (request: IncomingMessage, response: ServerResponse) => void {
  return (request, response) => {
    const startedAt = epochNow();
    const seq = runtime.log.begin();
    let url: URL;
    try {
      url = new URL(request.url ?? '/', 'http://sandbox.invalid');
    } catch {
      url = new URL('http://sandbox.invalid/');
    }
    const seen: { fault: FaultName | null; body: Buffer } = { fault: null, body: Buffer.alloc(0) };
    response.on('close', () => {
      const endedAt = epochNow();
      const status = response.headersSent ? response.statusCode : null;
      runtime.log.end({
        seq,
        method: request.method ?? '',
        path: url.pathname,
        query: url.search.replace(/^\?/, ''),
        status,
        fault: seen.fault,
        startedAt,
        endedAt,
      });
      runtime.options.log?.(
        `${request.method ?? ''} ${url.pathname} ${status ?? '-'} ` +
          `${Math.round(endedAt - startedAt)}ms${seen.fault ? ` [${seen.fault}]` : ''}`,
      );
    });
    decide(runtime, request, url, seen)
      .then((outcome) => {
        if ('aborted' in outcome) response.destroy();
        else if ('destroy' in outcome) request.socket.destroy();
        else if ('page' in outcome) sendHtml(response, 200, outcome.page);
        else {
          const answer = answerWithFaults(runtime, request, seen.body, outcome.reply);
          if (trickles(runtime, request, url)) {
            seen.fault = 'trickle';
            runtime.trickling.add(response);
            response.on('close', () => runtime.trickling.delete(response));
            sendTrickling(response, answer, runtime.faults.options.trickleMs, runtime.timers);
          } else sendJson(response, answer, outcome.closeConnection);
        }
      })
      .catch((error: unknown) => {
        runtime.options.log?.(`sandbox internal error: ${error instanceof Error ? error.message : String(error)}`);
        sendJson(response, { status: 500, body: { detail: 'Internal sandbox error.', code: 'error' } }, true);
      });
  };
}
