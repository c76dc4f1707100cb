import type { IncomingMessage, ServerResponse } from 'node:http';

// Reading requests and writing JSON replies without ever throwing on what a client sends:
// an oversized body is cut off (413), bad UTF-8 and malformed JSON become 400 values.

export interface Reply {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
  /** The change is applied, but the answer is lost: the connection is destroyed instead (a deterministic trigger). */
  lose?: true;
  /** The answer is sent, but the change was not applied on purpose: named in the request log (a fault's name). */
  lost?: 'lost_create';
}

export type BodyRead = { kind: 'ok'; bytes: Buffer } | { kind: 'too_large' } | { kind: 'aborted' };

/** Reads the whole body, or stops at `limit` bytes. */
export function readBody(request: IncomingMessage, limit: number): Promise<BodyRead> {
  return new Promise((resolve) => {
    const declared = Number(request.headers['content-length'] ?? 0);
    if (declared > limit) {
      resolve({ kind: 'too_large' });
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const finish = (result: BodyRead) => {
      if (done) return;
      done = true;
      resolve(result);
    };
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        request.pause();
        finish({ kind: 'too_large' });
      } else if (!done) chunks.push(chunk);
    });
    request.on('end', () => finish({ kind: 'ok', bytes: Buffer.concat(chunks) }));
    request.on('error', () => finish({ kind: 'aborted' }));
    request.on('close', () => finish({ kind: 'aborted' }));
  });
}

export type JsonParse = { kind: 'ok'; value: unknown } | { kind: 'error'; reply: Reply };

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Real payloads nest a few levels; a deeper body is refused before parsing (no recursion can overflow later). */
export const MAX_BODY_DEPTH = 64;

function nestingDepth(text: string): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (inString) {
      if (code === 92)
        index++; // backslash: skip the escaped character
      else if (code === 34) inString = false;
    } else if (code === 34) inString = true;
    else if (code === 123 || code === 91) deepest = Math.max(deepest, ++depth);
    else if (code === 125 || code === 93) depth--;
  }
  return deepest;
}

/** An empty body reads as `{}` (as the platform's framework does), so validation names the missing fields. */
export function parseJsonBody(bytes: Buffer): JsonParse {
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    return {
      kind: 'error',
      reply: { status: 400, body: { detail: 'JSON parse error - the body is not valid UTF-8.', code: 'parse_error' } },
    };
  }
  if (text.trim() === '') return { kind: 'ok', value: {} };
  if (nestingDepth(text) > MAX_BODY_DEPTH) {
    return {
      kind: 'error',
      reply: {
        status: 400,
        body: { detail: `JSON parse error - nested deeper than ${MAX_BODY_DEPTH} levels.`, code: 'parse_error' },
      },
    };
  }
  try {
    return { kind: 'ok', value: JSON.parse(text) as unknown };
  } catch (error) {
    const reason = error instanceof Error ? error.message : 'invalid JSON';
    return {
      kind: 'error',
      reply: { status: 400, body: { detail: `JSON parse error - ${reason}`, code: 'parse_error' } },
    };
  }
}

/** POST bodies must be JSON (spec: "All requests and responses are JSON"). */
export function isJsonContentType(header: string | undefined): boolean {
  if (header === undefined) return false;
  const type = header.split(';')[0]?.trim().toLowerCase() ?? '';
  return type === 'application/json' || (type.startsWith('application/') && type.endsWith('+json'));
}

export function sendJson(response: ServerResponse, reply: Reply, closeConnection = false): void {
  if (response.headersSent || response.destroyed) return;
  const text = JSON.stringify(reply.body);
  const headers: Record<string, string | number> = {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
    ...reply.headers,
  };
  if (closeConnection) headers['connection'] = 'close';
  response.writeHead(reply.status, headers);
  response.end(text);
}

/**
 * A reply sent one byte every `everyMs` (a service that answers at once, then trickles its body): the head and
 * Content-Length go out first, so a client sees an answer begin that never seems to end. Timers are kept in `timers`
 * (the sandbox clears them on close); the trickle stops when the connection closes.
 */
export function sendTrickling(
  response: ServerResponse,
  reply: Reply,
  everyMs: number,
  timers: Set<NodeJS.Timeout>,
): void {
  if (response.headersSent || response.destroyed) return;
  const bytes = Buffer.from(JSON.stringify(reply.body));
  response.writeHead(reply.status, {
    'content-type': 'application/json',
    'content-length': bytes.length,
    ...reply.headers,
  });
  response.flushHeaders();
  let sent = 0;
  const next = (): void => {
    if (response.destroyed) return;
    if (sent >= bytes.length) {
      response.end();
      return;
    }
    response.write(bytes.subarray(sent, sent + 1));
    sent += 1;
    const timer = setTimeout(() => {
      timers.delete(timer);
      next();
    }, everyMs);
    timers.add(timer);
  };
  next();
}

/** The page an SSO proxy answers in a service's place (--html-rate): 200, text/html, a login form. */
export const LOGIN_PAGE =
  '<!DOCTYPE html>\n<html><head><title>Sign in - Example Corp single sign-on</title></head><body>' +
  '<form method="post" action="/sso/login"><input name="user"><input name="password" type="password">' +
  '<button>Sign in</button></form></body></html>\n';

export function sendHtml(response: ServerResponse, status: number, page: string): void {
  if (response.headersSent || response.destroyed) return;
  response.writeHead(status, { 'content-type': 'text/html; charset=utf-8', 'content-length': Buffer.byteLength(page) });
  response.end(page);
}

/**
 * --error-detail-chars: the reply with the `detail` of an error answer, and the `latest_error.detail` of a status,
 * padded to `chars` characters (a service that sends megabytes in one error). Other replies are left as they are.
 */
export function withPaddedDetails(reply: Reply, chars: number): Reply {
  const body = reply.body as { detail?: unknown; latest_error?: { detail?: unknown } | null } | null;
  if (chars <= 0 || typeof body !== 'object' || body === null || Array.isArray(body)) return reply;
  const pad = (detail: string): string => `${detail} ${'padding '.repeat(Math.ceil(chars / 8))}`.slice(0, chars);
  const padded: Record<string, unknown> = { ...body };
  if (reply.status >= 400 && typeof body.detail === 'string') padded['detail'] = pad(body.detail);
  const latest = body.latest_error;
  if (latest && typeof latest.detail === 'string') padded['latest_error'] = { ...latest, detail: pad(latest.detail) };
  return { ...reply, body: padded };
}

/** What a careless service echoes: the request's credentials, and the key as its own code may have written it. */
export interface Echo {
  authorization: string | undefined;
  body: Buffer;
  apiKey: string;
}

/** The API key sent in a token mutation's body (`variables.input.APIKey`), if any. */
function keySent(body: Buffer): string | undefined {
  try {
    const parsed = JSON.parse(body.toString('utf8')) as { variables?: { input?: { APIKey?: unknown } } };
    const key = parsed.variables?.input?.APIKey;
    return typeof key === 'string' ? key : undefined;
  } catch {
    return undefined;
  }
}

function echoText(echo: Echo): string {
  const key = keySent(echo.body) ?? echo.apiKey;
  const escaped = JSON.stringify(key).slice(1, -1);
  const ascii = escaped.replace(/[\u007f-\uffff]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
  const forms = [
    key,
    escaped,
    ascii,
    encodeURIComponent(key),
    encodeURIComponent(key)
      .replace(/%20/g, '+')
      .replace(/%[0-9A-F]{2}/g, (code) => code.toLowerCase()),
    key.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;'),
    `Basic ${Buffer.from(`${key}:`).toString('base64')}`,
    `Basic ${Buffer.from(`api:${key}`).toString('base64url')}`,
  ];
  return (
    ` [echo: Authorization ${echo.authorization ?? '(none)'}; body ${echo.body.toString('utf8').slice(0, 4096)}; ` +
    `key ${forms.join(' | ')}]`
  );
}

/**
 * --echo-credentials: the reply with every error text it carries (an error answer's `detail` and its `errors[].detail`,
 * a status's `latest_error.detail`, the token mutation's `errors[].message`) followed by the echo.
 */
export function withEchoedCredentials(reply: Reply, echo: Echo): Reply {
  const body = reply.body as Record<string, unknown> | null;
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return reply;
  const said = echoText(echo);
  const echoed: Record<string, unknown> = { ...body };
  if (reply.status >= 400 && typeof body['detail'] === 'string') echoed['detail'] = `${body['detail']}${said}`;
  const latest = body['latest_error'] as { detail?: unknown } | null | undefined;
  if (latest && typeof latest.detail === 'string')
    echoed['latest_error'] = { ...latest, detail: `${latest.detail}${said}` };
  const errors = body['errors'];
  if (Array.isArray(errors))
    echoed['errors'] = errors.map((item: Record<string, unknown>) => ({
      ...item,
      ...(typeof item['detail'] === 'string' ? { detail: `${item['detail']}${said}` } : {}),
      ...(typeof item['message'] === 'string' ? { message: `${item['message']}${said}` } : {}),
    }));
  return { ...reply, body: echoed };
}
