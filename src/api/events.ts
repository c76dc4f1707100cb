// What the client tells the engine's log and progress display (ClientOptions.onEvent). Events
// name endpoints by the client's method names and carry codes, counts and delays only: never a
// key, token, header or request body.

export type ClientEvent =
  /** An attempt failed and the call will be resent after `delayMs`. */
  | {
      type: 'retry';
      endpoint: string;
      /** Attempts made so far (1 after the first failure). */
      attempt: number;
      delayMs: number;
      /** The failed attempt's error code (src/api/errors.ts), e.g. 'server_error'. */
      code: string;
      status: number | undefined;
      /** The failed attempt may have been applied (resent only because the service deduplicates). */
      ambiguous: boolean;
    }
  /**
   * One HTTP attempt ended: the service's status, or undefined when no whole answer came (connection
   * refused or reset, time-out). Every attempt of every call, retries included (metrics count them).
   */
  | { type: 'response'; endpoint: string; status: number | undefined }
  /** The service answered 429. */
  | { type: 'rate_limited'; endpoint: string; retryAfterMs: number | undefined }
  /** The adaptive limiter changed the whole client's pace. */
  | {
      type: 'limit_changed';
      reason: 'rate_limited' | 'recovered';
      concurrencyLimit: number;
      previousConcurrencyLimit: number;
      /** Epoch ms until which no request starts (the Retry-After pause). */
      pausedUntil: number;
    }
  /** A new access token was obtained. */
  | {
      type: 'token_renewed';
      reason: 'initial' | 'expiring' | 'unauthorized';
      via: 'api_key' | 'refresh_token';
      expiresAt: number | undefined;
    }
  /** A call failed for good (after the retry policy gave up, or at once for a final answer). */
  | {
      type: 'failed';
      endpoint: string;
      code: string;
      status: number | undefined;
      attempts: number;
      ambiguous: boolean;
    };
