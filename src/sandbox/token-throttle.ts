import type { Reply } from './http-io.js';
import type { SandboxOptions } from './options.js';
import { tooManyRequests } from './graphql.js';

// Token throttling as the real platform does it (docs/sandbox.md "Answering as a tenant does"): its token mutation
// answers `KT-CT-1199` "Too many requests" in an HTTP 200 when called too often, and a gateway in front may answer 429
// or 503 with Retry-After. The first N token requests, or those within a period of the sandbox's clock, are refused.

export class TokenThrottle {
  readonly #options: SandboxOptions;
  readonly #startedAt: number;
  #seen = 0;

  constructor(options: SandboxOptions, startedAt: number) {
    this.#options = options;
    this.#startedAt = startedAt;
  }

  /** The refusal of this token request (it is counted), or undefined when it goes through. */
  refusal(body: unknown, now: number): Reply | undefined {
    this.#seen += 1;
    const { throttleTokenRequests, throttleTokenMs, throttleTokenStatus, retryAfterSeconds } = this.#options;
    if (this.#seen > throttleTokenRequests && now - this.#startedAt >= throttleTokenMs) return undefined;
    if (throttleTokenStatus === 200) return tooManyRequests(body);
    return {
      status: throttleTokenStatus,
      body: { detail: 'Too many requests.' },
      headers: { 'retry-after': String(retryAfterSeconds) },
    };
  }
}
