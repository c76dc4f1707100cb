import { Pool, type Dispatcher } from 'undici';
import { NetworkError, TimeoutError, UnexpectedResponseError } from './errors.js';
import type { BodyReader } from './list-body.js';
import type { ServiceResponse } from './map-response.js';
import { safeCause, type Redactor } from './redact.js';

// HTTP on undici's Pool (keep-alive, sized to the concurrency; measured 0.90 of the
// latency bound at concurrency 64 where `fetch` reaches 0.61), through its dispatch API with a
// small handler that notes when undici has handed the whole request to the socket, so a failure
// can be told apart as "never sent" (safe to resend anything) or "sent, no answer" (may have
// been applied). A caller may read a 2xx body as it arrives instead (the list endpoints: `readBody`), so a body of any
// size is never held whole.

export interface TransportOptions {
  baseUrl: URL;
  connections: number;
  connectTimeoutMs: number;
  /** Sent until the response head arrives. */
  headersTimeoutMs: number;
  /** Idle time between body chunks. */
  bodyTimeoutMs: number;
  keepAliveTimeoutMs: number;
  redactor: Redactor;
  /** Larger bodies are refused (default 256 MiB: V8 cannot make a string of much more than 512 MiB). */
  maxResponseBytes?: number;
}

export interface TransportRequest {
  endpoint: string;
  method: 'GET' | 'POST';
  /** Path relative to the base URL, with its query string. */
  path: string;
  headers: Record<string, string>;
  body?: string | undefined;
}

/** Opens a reader for a 2xx body of the given status (one per request, so a resend reads afresh). */
export type ReadBody = (status: number) => BodyReader;

/**
 * A legacy-API undici handler (core/request.js calls its onRequestSent once the whole request is
 * written to the socket; the newer handler API and request() do not pass that on). It collects
 * the response body as text, which is all the client needs, or hands a 2xx body to its reader.
 */
class ResponseCollector implements Dispatcher.DispatchHandler {
  sent = false;
  #status = 0;
  #headers: Record<string, string | string[]> = {};
  readonly #chunks: Buffer[] = [];
  #bytes = 0;
  #abort: ((error?: Error) => void) | undefined;
  #reader: BodyReader | undefined;
  /** What the reader threw: the request ends with it, not with a network error. */
  #refused: unknown;
  readonly #resolve: (response: RawResponse) => void;
  readonly #reject: (error: Error, sent: boolean, refused: boolean) => void;
  readonly #maxBytes: number;
  readonly #readBody: ReadBody | undefined;

  constructor(
    maxBytes: number,
    readBody: ReadBody | undefined,
    resolve: (response: RawResponse) => void,
    reject: (error: Error, sent: boolean, refused: boolean) => void,
  ) {
    this.#maxBytes = maxBytes;
    this.#readBody = readBody;
    this.#resolve = resolve;
    this.#reject = reject;
  }

  onConnect(abort: (error?: Error) => void): void {
    // Invoked again if undici re-dispatches the request on another socket: nothing sent there yet.
    this.sent = false;
    this.#abort = abort;
  }
  onRequestSent(): void {
    this.sent = true;
  }
  onBodySent(): void {}
  onResponseStarted(): void {}
  onHeaders(status: number, rawHeaders: Buffer[]): boolean {
    if (status < 200) return true; // 1xx informational: the final head follows
    this.sent = true;
    this.#status = status;
    this.#headers = parseRawHeaders(rawHeaders);
    if (status < 300) this.#reader = this.#readBody?.(status);
    return true;
  }
  onData(chunk: Buffer): boolean {
    if (this.#reader) {
      try {
        this.#reader.write(chunk);
        return true;
      } catch (error) {
        this.#refused = error;
        this.#abort?.(error as Error);
        return false;
      }
    }
    this.#bytes += chunk.length;
    if (this.#bytes > this.#maxBytes) {
      this.#abort?.(new ResponseTooLargeError(this.#maxBytes));
      return false;
    }
    this.#chunks.push(chunk);
    return true;
  }
  onComplete(): void {
    if (this.#reader) {
      try {
        this.#reader.end();
      } catch (error) {
        this.#reject(error as Error, this.sent, true);
        return;
      }
    }
    this.#resolve({ status: this.#status, headers: this.#headers, text: Buffer.concat(this.#chunks).toString('utf8') });
  }

  onError(error: Error): void {
    this.#reject(error, this.sent, this.#refused !== undefined && error === this.#refused);
  }
}

class ResponseTooLargeError extends Error {
  constructor(maxBytes: number) {
    super(`the response is larger than ${maxBytes} bytes`);
  }
}

interface RawResponse {
  status: number;
  headers: Record<string, string | string[]>;
  text: string;
}

function parseRawHeaders(raw: Buffer[]): Record<string, string | string[]> {
  const headers: Record<string, string | string[]> = {};
  for (let index = 0; index + 1 < raw.length; index += 2) {
    const name = String(raw[index]).toLowerCase();
    const value = String(raw[index + 1]);
    const existing = headers[name];
    headers[name] = existing === undefined ? value : Array.isArray(existing) ? [...existing, value] : [existing, value];
  }
  return headers;
}

const TIMEOUT_CODES = new Set([
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'ETIMEDOUT',
]);

export class Transport {
  readonly #pool: Pool;
  readonly #origin: string;
  readonly #prefix: string;
  readonly #redactor: Redactor;
  readonly #maxBytes: number;

  constructor(options: TransportOptions) {
    this.#maxBytes = options.maxResponseBytes ?? 256 * 1024 * 1024;
    this.#pool = new Pool(options.baseUrl.origin, {
      connections: options.connections,
      connectTimeout: options.connectTimeoutMs,
      headersTimeout: options.headersTimeoutMs,
      bodyTimeout: options.bodyTimeoutMs,
      keepAliveTimeout: options.keepAliveTimeoutMs,
    });
    this.#origin = options.baseUrl.origin;
    this.#prefix = options.baseUrl.pathname.replace(/\/+$/, '');
    this.#redactor = options.redactor;
  }

  /**
   * Sends the request and reads the answer: its body parsed as JSON, or, for a 2xx when `readBody` is given, handed to
   * that reader chunk by chunk (the body is then undefined; the size limit does not apply).
   */
  async send(request: TransportRequest, readBody?: ReadBody): Promise<ServiceResponse> {
    const raw = await new Promise<RawResponse>((resolve, reject) => {
      // A body the reader refused ends the request with the reader's error (an UnexpectedResponseError for a body that
      // is not what the endpoint gives; anything else is the caller's, which the client reports as it is).
      const collector = new ResponseCollector(this.#maxBytes, readBody, resolve, (error, sent, refused) =>
        reject(
          refused
            ? error
            : error instanceof ResponseTooLargeError
              ? new UnexpectedResponseError(request.endpoint, undefined, error.message, '')
              : this.#networkError(request.endpoint, error, sent),
        ),
      );
      const options: Dispatcher.DispatchOptions = {
        origin: this.#origin,
        method: request.method,
        path: this.#prefix + request.path,
        headers: request.headers,
        body: request.body,
      };
      this.#pool.dispatch(options, collector);
    });
    const body =
      readBody !== undefined && raw.status < 300 ? undefined : parseBody(request.endpoint, raw.status, raw.text);
    return { status: raw.status, headers: raw.headers, body };
  }

  close(): Promise<void> {
    return this.#pool.close();
  }

  #networkError(endpoint: string, error: unknown, sent: boolean): NetworkError {
    const code = (error as { code?: unknown }).code;
    const cause = safeCause(error, this.#redactor);
    const detail = `${typeof code === 'string' ? `${code}: ` : ''}${cause.message}`;
    const phase = sent ? 'sent' : 'not_sent';
    return typeof code === 'string' && TIMEOUT_CODES.has(code)
      ? new TimeoutError(endpoint, phase, detail, cause)
      : new NetworkError(endpoint, phase, detail, cause);
  }
}

/** JSON, or undefined for an empty body; a 2xx that is not JSON is an unexpected response. */
function parseBody(endpoint: string, status: number, raw: string): unknown {
  if (raw.trim() === '') return undefined;
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    if (status >= 200 && status < 300) throw new UnexpectedResponseError(endpoint, status, 'the body is not JSON', '');
    return undefined;
  }
}
