// Secrets (the API key, access and refresh tokens, a proxy's password) never appear in any output, log, event, error
// or file (docs/api-client.md). Messages are built without them; this is the safety net for text the client did not
// write itself (a service's error body, a socket error's message). A secret is found in every encoding a service or
// the tool may give it (secret-forms.ts): as it is, JSON-escaped (at any depth, and with \uXXXX escapes), URL-encoded
// (either case of hex, `+` for a space), HTML-escaped, and base64 or base64url at any alignment (a Basic header).

import { secretPattern } from './secret-forms.js';

const REDACTED = '[REDACTED]';
/** Shorter values would match ordinary text; no real key or token is this short. */
const MIN_SECRET_LENGTH = 6;

export class Redactor {
  readonly #secrets = new Set<string>();
  #pattern: RegExp | undefined;

  /** Registers a value to be scrubbed from now on. */
  add(secret: string | null | undefined): void {
    if (!secret || secret.length < MIN_SECRET_LENGTH || this.#secrets.has(secret)) return;
    this.#secrets.add(secret);
    // Longest first: a secret that contains another is replaced whole.
    const sources = [...this.#secrets].sort((a, b) => b.length - a.length).map(secretPattern);
    this.#pattern = new RegExp(sources.join('|'), 'g');
  }

  /** Registers the user name and password of a URL (a proxy's), decoded as they travel in a Basic header. */
  addUserInfo(url: string | undefined): void {
    if (url === undefined) return;
    const { username, password } = new URL(url);
    this.add(decodeURIComponent(username));
    this.add(decodeURIComponent(password));
  }

  /** Whether the text holds a secret in any of its forms. */
  holds(text: string): boolean {
    if (this.#pattern === undefined) return false;
    this.#pattern.lastIndex = 0;
    return this.#pattern.test(text);
  }

  redact(text: string): string {
    if (this.#pattern === undefined) return text;
    this.#pattern.lastIndex = 0;
    return text.replace(this.#pattern, REDACTED);
  }

  /**
   * A parsed JSON value with every string redacted; the value itself when no string holds a secret (answers are
   * checked on every request: a copy is made only when there is something to scrub).
   */
  redactDeep(value: unknown): unknown {
    if (this.#pattern === undefined || !this.#holdsDeep(value, 0)) return value;
    return this.#copyRedacted(value);
  }

  /** Scrubs an error's message and its whole `cause` chain in place; returns it. */
  scrubError<T>(error: T): T {
    let current: unknown = error;
    for (let depth = 0; current instanceof Error && depth < 10; depth += 1) {
      if (this.#pattern !== undefined) {
        current.message = this.redact(current.message);
        if (current.stack) current.stack = this.redact(current.stack);
      }
      current = current.cause;
    }
    return error;
  }

  #holdsDeep(value: unknown, depth: number): boolean {
    if (typeof value === 'string') return this.holds(value);
    if (depth > 64 || typeof value !== 'object' || value === null) return false;
    if (Array.isArray(value)) return value.some((item) => this.#holdsDeep(item, depth + 1));
    for (const [key, item] of Object.entries(value))
      if (this.holds(key) || this.#holdsDeep(item, depth + 1)) return true;
    return false;
  }

  #copyRedacted(value: unknown): unknown {
    if (typeof value === 'string') return this.redact(value);
    if (Array.isArray(value)) return value.map((item) => this.#copyRedacted(item));
    if (typeof value === 'object' && value !== null) {
      return Object.fromEntries(
        Object.entries(value).map(([key, item]) => [this.redact(key), this.#copyRedacted(item)]),
      );
    }
    return value;
  }
}

/**
 * A plain copy of a low-level error (undici, DNS): name, code and scrubbed message only, so no
 * socket, request options or headers are reachable through an ApiError's `cause`.
 */
export function safeCause(error: unknown, redactor: Redactor): Error {
  const source = error instanceof Error ? error : new Error(String(error));
  const copy = new Error(redactor.redact(source.message));
  copy.name = source.name;
  const code = (source as { code?: unknown }).code;
  if (typeof code === 'string') Object.defineProperty(copy, 'code', { value: code, enumerable: true });
  copy.stack = `${copy.name}: ${copy.message}`;
  return copy;
}
