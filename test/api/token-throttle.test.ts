import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_TOKEN_THROTTLE, tokenThrottleDelay } from '../../src/api/index.js';
import type { RunningSandbox } from '../../src/sandbox/index.js';
import { account, startHarness, virtualTime, type Harness } from './helpers/sandbox-client.js';

// The token mutation refused as too many requests (KT-CT-1199 in a 200, or a 429/503 with Retry-After), against the
// sandbox throttling it, on one virtual clock for both: one token request at a time, each wait longer, a ceiling.

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

function tokenRequests(sandbox: RunningSandbox) {
  return sandbox.inspect.requests().filter((entry) => entry.path === '/v1/graphql/');
}

/** Whether any two token requests were in flight at once. */
function overlapping(sandbox: RunningSandbox): boolean {
  const spans = tokenRequests(sandbox).map((entry) => [entry.startedAt, entry.endedAt] as const);
  return spans.some(([start, end], index) =>
    spans.some(([otherStart], other) => other !== index && otherStart > start && otherStart < end),
  );
}

describe('token throttling', () => {
  it('the wait doubles from 5 s, a longer Retry-After wins, and the fifth refusal is the last', () => {
    expect([1, 2, 3, 4].map((refused) => tokenThrottleDelay(refused, undefined))).toEqual([5000, 10000, 20000, 40000]);
    expect(tokenThrottleDelay(1, 30_000)).toBe(30_000);
    expect(tokenThrottleDelay(2, 1000)).toBe(10_000);
    expect(tokenThrottleDelay(DEFAULT_TOKEN_THROTTLE.maxRequests, undefined)).toBeUndefined();
  });

  it('KT-CT-1199 for 30 s: 16 concurrent calls share one token request at a time, 4 in all, and all succeed', async () => {
    const time = virtualTime();
    harness = await startHarness(
      { throttleTokenMs: 30_000, throttleTokenStatus: 200 },
      { ...time.client, concurrency: 16 },
      time.sandbox,
    );
    const { client, sandbox } = harness;
    const created = await Promise.all(Array.from({ length: 16 }, (_, n) => client.createAccount(account(`T-${n}`))));
    expect(created.every((outcome) => outcome.kind === 'scheduled')).toBe(true);
    // Refused at 0, 5 and 15 s of the sandbox's clock; the fourth, at 35 s, is past the throttled period.
    expect(tokenRequests(sandbox).map((entry) => entry.status)).toEqual([200, 200, 200, 200]);
    expect(time.sleeps.slice(0, 3)).toEqual([5000, 10000, 20000]);
    expect(overlapping(sandbox)).toBe(false);
    expect(sandbox.inspect.accountCount()).toBe(16);
  });

  it('a 503 with Retry-After is the same refusal; its Retry-After is waited when longer', async () => {
    const time = virtualTime();
    harness = await startHarness(
      { throttleTokenRequests: 2, throttleTokenStatus: 503, retryAfterSeconds: 8 },
      time.client,
      time.sandbox,
    );
    expect(await harness.client.getImportStatus('ACME', 'R-1')).toBeNull();
    expect(tokenRequests(harness.sandbox).map((entry) => entry.status)).toEqual([503, 503, 200]);
    expect(time.sleeps).toEqual([8000, 10000]);
  });

  it('a 503 with a Retry-After beyond the ceiling stops at once, naming the header; no second token request', async () => {
    const time = virtualTime();
    harness = await startHarness(
      { throttleTokenRequests: 1000, throttleTokenStatus: 503, retryAfterSeconds: 86_400 },
      time.client,
      time.sandbox,
    );
    const error = await harness.client.getImportStatus('ACME', 'R-1').catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: 'retry_after_too_long', endpoint: 'obtainToken', fatal: true, status: 503 });
    expect((error as Error).message).toContain('(HTTP 503, Retry-After: 86400)');
    expect(time.sleeps).toEqual([]);
    expect(tokenRequests(harness.sandbox)).toHaveLength(1);
  });

  it('past the ceiling the run stops: token_throttled (fatal) naming KT-CT-1199 and when to rerun; no more token requests', async () => {
    const time = virtualTime();
    harness = await startHarness({ throttleTokenRequests: 1000 }, { ...time.client, concurrency: 4 }, time.sandbox);
    const { client, sandbox } = harness;
    const first = await client.createAccount(account('C-1')).catch((caught: unknown) => caught);
    expect(first).toMatchObject({ code: 'token_throttled', fatal: true, serviceCode: 'KT-CT-1199' });
    expect((first as Error).message).toBe(
      'obtainToken: the service refused 5 token requests as too many (KT-CT-1199, too many requests) over 75 s; no ' +
        'more are sent, as the platform tightens its limits on repeated breaches and they do not reset by ' +
        'themselves. Run the same command again in an hour at the earliest, or once the platform operators have ' +
        "restored the organisation's limits. Nothing is lost.",
    );
    const later = await client.getImportStatus('ACME', 'C-2').catch((caught: unknown) => caught);
    expect(later).toMatchObject({ code: 'token_throttled' });
    expect(tokenRequests(sandbox)).toHaveLength(DEFAULT_TOKEN_THROTTLE.maxRequests);
    expect(sandbox.inspect.requests().filter((entry) => entry.path !== '/v1/graphql/')).toEqual([]);
  });
});
