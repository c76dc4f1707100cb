import { describe, expect, it } from 'vitest';
import {
  DEFAULT_RETRY_POLICY,
  backoffDelay,
  decideRetry,
  parseRetryAfter,
  type EndpointSafety,
  type FailureKind,
  type RetryInput,
  type RetryMode,
} from '../../src/api/retry-policy.js';

const base: RetryInput = {
  failure: 'server_error',
  safety: 'idempotent',
  mode: 'auto',
  attempt: 1,
  renewedAfterUnauthorized: false,
  random: 0.5,
};

describe('decideRetry: whether to resend', () => {
  // [failure, safety, mode, resend?]
  const table: Array<[FailureKind, EndpointSafety, RetryMode, boolean]> = [
    ['not_sent', 'idempotent', 'auto', true],
    ['not_sent', 'deduplicated', 'auto', true],
    ['not_sent', 'vendor_call', 'auto', true],
    ['not_sent', 'unsafe', 'auto', true],
    ['rate_limited', 'unsafe', 'auto', true],
    ['rate_limited', 'vendor_call', 'auto', true],
    ['no_answer', 'idempotent', 'auto', true],
    // resent only because the service deduplicates creates and post-import items
    ['no_answer', 'deduplicated', 'auto', true],
    ['no_answer', 'vendor_call', 'auto', false],
    ['no_answer', 'unsafe', 'auto', false],
    ['server_error', 'idempotent', 'auto', true],
    ['server_error', 'deduplicated', 'auto', true],
    // spec: payment instruction 500 = retry as is
    ['server_error', 'vendor_call', 'auto', true],
    ['server_error', 'unsafe', 'auto', false],
    ['final', 'idempotent', 'auto', false],
    ['final', 'deduplicated', 'auto', false],
    // mode 'safe': only what certainly was not applied
    ['not_sent', 'deduplicated', 'safe', true],
    ['rate_limited', 'deduplicated', 'safe', true],
    ['no_answer', 'deduplicated', 'safe', false],
    ['server_error', 'deduplicated', 'safe', false],
    ['server_error', 'idempotent', 'safe', false],
    // mode 'never'
    ['not_sent', 'idempotent', 'never', false],
    ['rate_limited', 'idempotent', 'never', false],
    ['server_error', 'vendor_call', 'never', false],
  ];
  it.each(table)('%s on %s endpoint, mode %s -> resend %s', (failure, safety, mode, resend) => {
    expect(decideRetry({ ...base, failure, safety, mode }).retry).toBe(resend);
  });

  it('a 401 renews the token once, in every mode, then gives up', () => {
    for (const mode of ['auto', 'safe', 'never'] as const) {
      expect(decideRetry({ ...base, failure: 'unauthorized', mode })).toEqual({
        retry: true,
        delayMs: 0,
        renewToken: true,
      });
      expect(decideRetry({ ...base, failure: 'unauthorized', mode, renewedAfterUnauthorized: true })).toEqual({
        retry: false,
        reason: 'renewal_refused',
      });
    }
  });

  it('stops after maxRetries resends', () => {
    const policy = { ...DEFAULT_RETRY_POLICY, maxRetries: 3 };
    expect(decideRetry({ ...base, attempt: 3 }, policy).retry).toBe(true);
    expect(decideRetry({ ...base, attempt: 4 }, policy)).toEqual({ retry: false, reason: 'retries_exhausted' });
    expect(decideRetry({ ...base, attempt: 1 }, { ...policy, maxRetries: 0 })).toEqual({
      retry: false,
      reason: 'retries_exhausted',
    });
  });

  it('a Retry-After overrides the backoff; one longer than the cap is not waited out', () => {
    expect(decideRetry({ ...base, failure: 'rate_limited', retryAfterMs: 7000 })).toEqual({
      retry: true,
      delayMs: 7000,
      renewToken: false,
    });
    const policy = { ...DEFAULT_RETRY_POLICY, maxRetryAfterMs: 5000 };
    expect(decideRetry({ ...base, failure: 'rate_limited', retryAfterMs: 7000 }, policy)).toEqual({
      retry: false,
      reason: 'retry_after_too_long',
    });
  });

  it('without a hint, waits a full-jitter backoff', () => {
    const decision = decideRetry({ ...base, attempt: 3, random: 0.5 });
    expect(decision).toEqual({ retry: true, delayMs: 1000, renewToken: false });
  });
});

describe('backoffDelay: capped exponential with full jitter', () => {
  const policy = { ...DEFAULT_RETRY_POLICY, baseDelayMs: 100, maxDelayMs: 1000 };
  // [attempt, random, delay]
  const table: Array<[number, number, number]> = [
    [1, 0, 0],
    [1, 0.999, 99],
    [2, 0.5, 100],
    [3, 0.5, 200],
    [4, 0.5, 400],
    [5, 0.5, 500], // 1600 capped at 1000
    [30, 0.999, 999],
  ];
  it.each(table)('attempt %i, random %f -> %i ms', (attempt, random, delay) => {
    expect(backoffDelay(attempt, policy, random)).toBe(delay);
  });
});

describe('parseRetryAfter', () => {
  const now = Date.parse('2026-11-22T08:00:00Z');
  // [header, ms]
  const table: Array<[string | string[] | undefined, number | undefined]> = [
    [undefined, undefined],
    ['', undefined],
    ['3', 3000],
    ['1.5', 1500],
    [' 2 ', 2000],
    ['0', undefined],
    [['4', '9'], 4000],
    ['Sun, 22 Nov 2026 08:00:30 GMT', 30_000],
    ['Sun, 22 Nov 2026 07:59:00 GMT', undefined], // a past date is no hint
    ['Sun, 22 Nov 2026 08:00:00 GMT', undefined],
    ['-5', undefined],
    ['soon', undefined],
    ['12abc', undefined],
  ];
  it.each(table)('%j -> %j', (header, ms) => {
    expect(parseRetryAfter(header, now)).toBe(ms);
  });
});
