import { ApiError, AuthenticationError } from './errors.js';
import type { Clock } from './rate-limiter.js';

// The access token (spec "Authentication"; docs/service.md "Authentication"): obtained with the API key
// through the ObtainToken mutation, cached, renewed before its JWT `exp` (with the refresh
// token while that is valid, else with the key), and renewed once when a request gets a 401.
// One renewal at a time: concurrent callers share it. A token is never handed out past its
// renewal point, so no request leaves with a token known to be expired. A renewal that fails in a way no retry can
// mend (a refused key, an untrusted certificate: the error's `fatal`) is not tried again: every later caller gets the
// same error while the run stops, and the service sees one attempt.

/**
 * The API key (from MIGRATE_API_KEY or --api-key-file), a token obtained beforehand, or both:
 * then the token is used first and the key renews it.
 */
export type Credentials =
  | { apiKey: string; token?: string | undefined; refreshToken?: string | undefined }
  | { apiKey?: undefined; token: string; refreshToken?: string | undefined };

/** Input of the token mutation: one of the real platform's mutually exclusive fields. */
export type ObtainInput = { APIKey: string } | { refreshToken: string };

export interface TokenGrant {
  token: string;
  /** Epoch ms of the token's `exp`; undefined when unknown (an opaque pre-obtained token). */
  expiresAt: number | undefined;
  /** Epoch ms when it was obtained (or its `iat`). */
  issuedAt: number;
  refreshToken?: string | undefined;
  /** Epoch ms of the refresh token's expiry, when the service gave it. */
  refreshExpiresAt?: number | undefined;
}

export type RenewReason = 'initial' | 'expiring' | 'unauthorized';

export interface TokenRenewal {
  reason: RenewReason;
  via: 'api_key' | 'refresh_token';
  expiresAt: number | undefined;
}

export interface TokenManagerOptions {
  credentials: Credentials;
  obtain: (input: ObtainInput) => Promise<TokenGrant>;
  clock: Clock;
  /** Renew this long before `exp` (capped at a quarter of the token's lifetime). */
  renewMarginMs?: number;
  onRenewed?: (renewal: TokenRenewal) => void;
}

/** Reads `exp` and `iat` of a JWT without verifying it (only the service can). */
export function decodeJwtTimes(token: string): { expiresAt: number | undefined; issuedAt: number | undefined } {
  const body = token.split('.')[1];
  if (token.split('.').length !== 3 || !body) return { expiresAt: undefined, issuedAt: undefined };
  try {
    const claims = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as { exp?: unknown; iat?: unknown };
    return {
      expiresAt: typeof claims.exp === 'number' ? claims.exp * 1000 : undefined,
      issuedAt: typeof claims.iat === 'number' ? claims.iat * 1000 : undefined,
    };
  } catch {
    return { expiresAt: undefined, issuedAt: undefined };
  }
}

export class TokenManager {
  readonly #apiKey: string | undefined;
  readonly #obtain: (input: ObtainInput) => Promise<TokenGrant>;
  readonly #clock: Clock;
  readonly #marginMs: number;
  readonly #onRenewed: ((renewal: TokenRenewal) => void) | undefined;
  #grant: TokenGrant | undefined;
  #renewing: Promise<string> | undefined;
  #fatal: ApiError | undefined;

  constructor(options: TokenManagerOptions) {
    this.#obtain = options.obtain;
    this.#clock = options.clock;
    this.#marginMs = options.renewMarginMs ?? 60_000;
    this.#onRenewed = options.onRenewed;
    const { apiKey, token, refreshToken } = options.credentials;
    this.#apiKey = apiKey;
    if (token !== undefined) {
      const times = decodeJwtTimes(token);
      this.#grant = { token, expiresAt: times.expiresAt, issuedAt: times.issuedAt ?? this.#clock.now(), refreshToken };
    }
  }

  /** A token valid now (renewed first when it is within the margin of its expiry). */
  async current(): Promise<string> {
    if (this.#fatal) throw this.#fatal;
    const grant = this.#grant;
    if (grant && !this.#due(grant)) return grant.token;
    return this.#renew(grant ? 'expiring' : 'initial');
  }

  /** After a 401 for `rejected`: renew, unless another call has already replaced that token. */
  async renewAfterUnauthorized(rejected: string): Promise<string> {
    if (this.#fatal) throw this.#fatal;
    if (this.#renewing) return this.#renewing;
    if (this.#grant && this.#grant.token !== rejected && !this.#due(this.#grant)) return this.#grant.token;
    return this.#renew('unauthorized');
  }

  /** Epoch ms of the current token's expiry, for display; undefined when unknown or none yet. */
  get expiresAt(): number | undefined {
    return this.#grant?.expiresAt;
  }

  #due(grant: TokenGrant): boolean {
    if (grant.expiresAt === undefined) return false;
    const lifetime = Math.max(0, grant.expiresAt - grant.issuedAt);
    return this.#clock.now() >= grant.expiresAt - Math.min(this.#marginMs, lifetime / 4);
  }

  #renew(reason: RenewReason): Promise<string> {
    this.#renewing ??= this.#obtainGrant(reason)
      .catch((error: unknown) => {
        if (error instanceof ApiError && error.fatal) this.#fatal = error;
        throw error;
      })
      .finally(() => {
        this.#renewing = undefined;
      });
    return this.#renewing;
  }

  async #obtainGrant(reason: RenewReason): Promise<string> {
    const previous = this.#grant;
    this.#grant = undefined;
    const refreshToken = previous?.refreshToken;
    const refreshUsable =
      refreshToken &&
      (previous?.refreshExpiresAt === undefined || previous.refreshExpiresAt > this.#clock.now() + 1000);
    if (refreshUsable) {
      try {
        return this.#accept(await this.#obtain({ refreshToken }), reason, 'refresh_token');
      } catch (error) {
        // An expired or unknown refresh token (KT-CT-1134/1135): start over with the key, if there is one.
        if (!(error instanceof AuthenticationError) || this.#apiKey === undefined) throw error;
      }
    }
    if (this.#apiKey === undefined) {
      throw new AuthenticationError(
        'obtainToken',
        'the token given was refused or has expired, and no API key was given to obtain a new one (set ' +
          'MIGRATE_API_KEY or --api-key-file)',
      );
    }
    return this.#accept(await this.#obtain({ APIKey: this.#apiKey }), reason, 'api_key');
  }

  #accept(grant: TokenGrant, reason: RenewReason, via: TokenRenewal['via']): string {
    // Keep a refresh token that the renewal did not replace.
    this.#grant = { ...grant, refreshToken: grant.refreshToken ?? undefined };
    this.#onRenewed?.({ reason, via, expiresAt: grant.expiresAt });
    return grant.token;
  }
}
