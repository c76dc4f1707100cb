// Secrets (the API key, access and refresh tokens) never appear in any output, log, event or
// error (docs/api-client.md). Messages are built without them; this is the safety net for
// text the client did not write itself (the service's `detail`, a socket error's message).

const REDACTED = '[REDACTED]';
/** Shorter values would match ordinary text; no real key or token is this short. */
const MIN_SECRET_LENGTH = 6;

export class Redactor {
  readonly #secrets = new Set<string>();

  /** Registers a value to be scrubbed from now on. */
  add(secret: string | null | undefined): void {
    if (secret && secret.length >= MIN_SECRET_LENGTH) this.#secrets.add(secret);
  }

  /** Registers the user name and password of a URL (a proxy's), decoded as they travel in a Basic header. */
  addUserInfo(url: string | undefined): void {
    if (url === undefined) return;
    const { username, password } = new URL(url);
    this.add(decodeURIComponent(username));
    this.add(decodeURIComponent(password));
  }

  redact(text: string): string {
    let result = text;
    for (const secret of this.#secrets) if (result.includes(secret)) result = result.split(secret).join(REDACTED);
    return result;
  }

  /** A copy of a parsed JSON value with every string redacted (for error bodies: small, and read by people). */
  redactDeep(value: unknown): unknown {
    if (this.#secrets.size === 0) return value;
    if (typeof value === 'string') return this.redact(value);
    if (Array.isArray(value)) return value.map((item) => this.redactDeep(item));
    if (typeof value === 'object' && value !== null) {
      return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, this.redactDeep(item)]));
    }
    return value;
  }

  /** Scrubs an error's message and its whole `cause` chain in place; returns it. */
  scrubError<T>(error: T): T {
    let current: unknown = error;
    for (let depth = 0; current instanceof Error && depth < 10; depth += 1) {
      if (this.#secrets.size > 0) {
        current.message = this.redact(current.message);
        if (current.stack) current.stack = this.redact(current.stack);
      }
      current = current.cause;
    }
    return error;
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
