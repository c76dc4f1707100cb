import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

// Tokens (spec "Authentication"; docs/service.md "Authentication"): a JWT signed with a secret of this
// sandbox instance, so a token from another instance is "unknown"; `exp` follows tokenTtlSeconds.
// Refresh tokens are opaque and kept in memory (the real platform: valid 7 days).

export interface IssuedToken {
  token: string;
  refreshToken: string;
  /** Unix timestamp (seconds) when the refresh token expires. */
  refreshExpiresIn: number;
  payload: { sub: string; iat: number; exp: number; origIat: number };
}

export type TokenCheck = { ok: true } | { ok: false; detail: string };

const base64url = (data: Buffer | string): string => Buffer.from(data).toString('base64url');

export class TokenIssuer {
  readonly #secret = randomBytes(32);
  readonly #refreshTokens = new Map<string, number>();
  /** Tokens already verified, with their expiry (ms): a client sends the same token many times. */
  readonly #verified = new Map<string, number>();
  readonly #ttlMs: number;
  readonly #refreshTtlMs: number;

  constructor(ttlSeconds: number, refreshTtlSeconds: number) {
    this.#ttlMs = ttlSeconds * 1000;
    this.#refreshTtlMs = refreshTtlSeconds * 1000;
  }

  issue(now: number): IssuedToken {
    const iat = Math.floor(now / 1000);
    // Whole seconds as JWTs usually carry them, unless the TTL itself is fractional (short-lived test tokens).
    const exp = this.#ttlMs % 1000 === 0 ? iat + this.#ttlMs / 1000 : (now + this.#ttlMs) / 1000;
    const payload = { sub: 'migrate-sandbox', iat, exp, origIat: iat };
    const head = `${base64url(JSON.stringify({ alg: 'HS256', typ: 'JWT' }))}.${base64url(JSON.stringify(payload))}`;
    const token = `${head}.${this.#sign(head)}`;
    const refreshToken = randomBytes(24).toString('hex');
    const refreshExpiresAt = now + this.#refreshTtlMs;
    this.#refreshTokens.set(refreshToken, refreshExpiresAt);
    return { token, refreshToken, refreshExpiresIn: Math.floor(refreshExpiresAt / 1000), payload };
  }

  /** Redeems a refresh token: 'ok', 'expired' or 'unknown'. A token is used once. */
  redeemRefreshToken(refreshToken: string, now: number): 'ok' | 'expired' | 'unknown' {
    const expiresAt = this.#refreshTokens.get(refreshToken);
    if (expiresAt === undefined) return 'unknown';
    this.#refreshTokens.delete(refreshToken);
    return expiresAt > now ? 'ok' : 'expired';
  }

  /**
   * Checks the Authorization header in any form the service takes: the bare token or `Token <token>` (the spec's), or
   * `JWT <token>` (the platform owner's own example code). The API key itself is not a token and is refused.
   */
  check(header: string | undefined, now: number): TokenCheck {
    if (header === undefined || header.trim() === '')
      return { ok: false, detail: 'Authentication credentials were not provided.' };
    const value = header.trim();
    const token = value.replace(/^(?:Token|JWT)\s+/i, '');
    const known = this.#verified.get(token);
    if (known !== undefined)
      return known > now ? { ok: true } : { ok: false, detail: 'Signature of the token has expired.' };
    const parts = token.split('.');
    if (parts.length !== 3) return { ok: false, detail: 'Invalid token.' };
    const [head = '', body = '', signature = ''] = parts;
    const expected = Buffer.from(this.#sign(`${head}.${body}`));
    const given = Buffer.from(signature);
    if (expected.length !== given.length || !timingSafeEqual(expected, given))
      return { ok: false, detail: 'Invalid token.' };
    let exp: unknown;
    try {
      exp = (JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as { exp?: unknown }).exp;
    } catch {
      return { ok: false, detail: 'Invalid token.' };
    }
    if (typeof exp !== 'number' || exp * 1000 <= now)
      return { ok: false, detail: 'Signature of the token has expired.' };
    if (this.#verified.size >= 1000) this.#verified.clear();
    this.#verified.set(token, exp * 1000);
    return { ok: true };
  }

  #sign(data: string): string {
    return createHmac('sha256', this.#secret).update(data).digest('base64url');
  }
}
