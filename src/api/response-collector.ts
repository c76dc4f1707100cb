import type { Dispatcher } from 'undici';
import type { BodyReader } from './list-body.js';

// The undici handler of one request (transport.ts). A legacy-API handler: undici's core/request.js calls its
// onRequestSent once the whole request is written to the socket (the newer handler API and request() do not pass that
// on), so a failure can be told apart as "never sent" or "sent, no answer". It collects the response body as text,
// which is all the client needs, or hands a 2xx body to its reader; and it can be cancelled at any moment (a deadline,
// the run's stop), also before undici has handed it a socket.

/** Opens a reader for a 2xx body of the given status (one per request, so a resend reads afresh). */
export type ReadBody = (status: number) => BodyReader;

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[]>;
  text: string;
  /** The answer says it is an HTML page (Content-Type): never the service's JSON. */
  html: boolean;
  /** The body was longer than the bound on bodies that are not a success's JSON: `text` is its start only. */
  cut: boolean;
}

/**
 * Bodies that are not a success's JSON (an error's, an HTML page) are read up to this many bytes, never more: a
 * service's error body names a few problems (thousands of them fit), and one of megabytes is not worth reading whole.
 */
export const MAX_ERROR_BODY_BYTES = 1024 * 1024;

/** Content types of a web page: a login page, a proxy's notice, a web server's error page. */
export function isHtmlContentType(value: string | string[] | undefined): boolean {
  const type = (Array.isArray(value) ? value[0] : value)?.split(';')[0]?.trim().toLowerCase() ?? '';
  return type === 'text/html' || type === 'application/xhtml+xml';
}

/** How a request ended without a whole answer: the error, whether it was sent, and why. */
export interface Failed {
  error: Error;
  sent: boolean;
  /** The body's reader refused it: the request ends with the reader's error. */
  refused: boolean;
  /** Ended by cancel(): the error is the one given there. */
  cancelled: boolean;
}

/**
 * The ceiling on a success's JSON answering a request with this body (lists are read as they arrive instead): it is
 * read whole, so it is bounded too (docs/limits.md "Limits on what the service answers"). A status record is a few
 * hundred bytes (with the service's words in a latest_error, which an error body may hold as well: the same 1 MiB),
 * and a post-import answer echoes what was sent; an answer past this is no answer of the spec, refused before it can
 * take the process past its memory.
 */
export function successCeiling(body: string | undefined): number {
  return MAX_ERROR_BODY_BYTES + 4 * (body === undefined ? 0 : Buffer.byteLength(body));
}

export class ResponseTooLargeError extends Error {
  constructor(maxBytes: number, seen: { declared?: number | undefined; read: number }) {
    const size =
      seen.declared === undefined
        ? `more than ${seen.read.toLocaleString('en-GB')} bytes came`
        : `it declares ${seen.declared.toLocaleString('en-GB')} bytes (Content-Length)`;
    super(
      `the answer is longer than the ${maxBytes.toLocaleString('en-GB')} bytes the tool reads of an answer to ` +
        `this request (${size}); it was not read further`,
    );
  }
}

/** How far a request got: what a request that met its deadline says did not answer. */
export interface Progress {
  /** A socket took the request (undici began to write it). */
  connected: boolean;
  sent: boolean;
  /** The answer's status, once its head came. */
  status: number | undefined;
  /** Bytes of the answer's body that came. */
  bytes: number;
}

export class ResponseCollector implements Dispatcher.DispatchHandler {
  sent = false;
  #connected = false;
  #received = 0;
  #status = 0;
  #headers: Record<string, string | string[]> = {};
  readonly #chunks: Buffer[] = [];
  #bytes = 0;
  #abort: ((error?: Error) => void) | undefined;
  #reader: BodyReader | undefined;
  /** What the reader threw: the request ends with it, not with a network error. */
  #refused: unknown;
  /** Given to cancel(): the request ends with it. */
  #cancelled: Error | undefined;
  #settled = false;
  #html = false;
  readonly #resolve: (response: RawResponse) => void;
  readonly #reject: (failed: Failed) => void;
  readonly #maxBytes: number;
  readonly #readBody: ReadBody | undefined;
  readonly #onAnswer: () => void;

  constructor(options: {
    maxBytes: number;
    readBody: ReadBody | undefined;
    resolve: (response: RawResponse) => void;
    reject: (failed: Failed) => void;
    /** The response head arrived (the service, or something in its place, answered). */
    onAnswer: () => void;
  }) {
    this.#maxBytes = options.maxBytes;
    this.#readBody = options.readBody;
    this.#resolve = options.resolve;
    this.#reject = options.reject;
    this.#onAnswer = options.onAnswer;
  }

  /**
   * Ends the request with `error`: at once when undici has started it, else as soon as it does (before anything is
   * written), so a cancelled request is never sent later.
   */
  cancel(error: Error): void {
    if (this.#settled || this.#cancelled) return;
    this.#cancelled = error;
    if (this.#abort) this.#abort(error);
    // Not on a socket yet: it ends now (undici aborts it before writing anything once it would start).
    else this.#fail(error, false);
  }

  progress(): Progress {
    const status = this.#status === 0 ? undefined : this.#status;
    return { connected: this.#connected, sent: this.sent, status, bytes: this.#received };
  }

  onConnect(abort: (error?: Error) => void): void {
    // Invoked again if undici re-dispatches the request on another socket: nothing sent there yet.
    this.sent = false;
    this.#connected = true;
    this.#abort = abort;
    if (this.#cancelled) abort(this.#cancelled);
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
    this.#html = isHtmlContentType(this.#headers['content-type']);
    this.#onAnswer();
    if (status < 300 && !this.#html) this.#reader = this.#readBody?.(status);
    const declared = Number(this.#headers['content-length']);
    if (!this.#reader && status < 300 && !this.#html && declared > this.#maxBytes) {
      // Refused on its word, before a byte of it is read.
      this.#abort?.(new ResponseTooLargeError(this.#maxBytes, { declared, read: 0 }));
      return false;
    }
    return true;
  }
  onData(chunk: Buffer): boolean {
    this.#received += chunk.length;
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
    if ((this.#html || this.#status >= 300) && this.#bytes > MAX_ERROR_BODY_BYTES) {
      // Enough to say what it is: answered with the start, the rest is never read.
      this.#chunks.push(chunk.subarray(0, chunk.length - (this.#bytes - MAX_ERROR_BODY_BYTES)));
      this.#finish(true);
      this.#abort?.(new ResponseTooLargeError(MAX_ERROR_BODY_BYTES, { read: this.#bytes }));
      return false;
    }
    if (this.#status < 300 && !this.#html && this.#bytes > this.#maxBytes) {
      this.#abort?.(new ResponseTooLargeError(this.#maxBytes, { read: this.#bytes }));
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
        this.#fail(error as Error, true);
        return;
      }
    }
    this.#finish(false);
  }

  #finish(cut: boolean): void {
    if (this.#settled) return;
    this.#settled = true;
    const text = Buffer.concat(this.#chunks).toString('utf8');
    this.#resolve({ status: this.#status, headers: this.#headers, text, html: this.#html, cut });
  }

  onError(error: Error): void {
    this.#fail(error, this.#refused !== undefined && error === this.#refused);
  }

  #fail(error: Error, refused: boolean): void {
    if (this.#settled) return;
    this.#settled = true;
    const cancelled = this.#cancelled !== undefined && !refused;
    this.#reject({ error: cancelled ? (this.#cancelled as Error) : error, sent: this.sent, refused, cancelled });
  }
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
