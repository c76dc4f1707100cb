import { afterEach, describe, expect, it } from 'vitest';
import type { SandboxHooks, SandboxOptions } from '../../src/sandbox/index.js';
import { account, manualClock, openSession, type Session } from './helpers.js';

// Issue 2 "Fault injection": every mode, seeded and reproducible; the real rate limit; the log.

const sessions: Session[] = [];
afterEach(async () => {
  await Promise.all(sessions.splice(0).map((item) => item.sandbox.close()));
});
const open = async (options: Partial<SandboxOptions>, hooks: SandboxHooks = {}) => {
  const session = await openSession(options, hooks);
  sessions.push(session);
  return session;
};
const create = (s: Session, ext: string) => s.post('/v2/data-import/accounts/', { payload: account(ext) });
/** The status, or 'reset' when the connection was destroyed without a response. */
const outcome = async (request: Promise<{ status: number }>) => {
  try {
    return (await request).status;
  } catch {
    return 'reset';
  }
};

describe('injected faults', () => {
  it('holds every answer for the latency', async () => {
    // The sandbox's delay is replaced: each one asked for is seen, and this test decides when the last one ends.
    const delays: number[] = [];
    let hold = false;
    let asked: () => void = () => undefined;
    const heldAsked = new Promise<void>((resolve) => (asked = resolve));
    let release: () => void = () => undefined;
    const delay = (ms: number): Promise<void> => {
      delays.push(ms);
      if (!hold) return Promise.resolve();
      asked();
      return new Promise((resolve) => (release = resolve));
    };
    const s = await open({ latencyMs: 120 }, { delay });
    hold = true;
    let answered = false;
    const answer = create(s, 'L-1').then((result) => {
      answered = true;
      return result;
    });
    await heldAsked;
    await new Promise((resolve) => setImmediate(resolve));
    expect(answered).toBe(false);
    release();
    expect((await answer).status).toBe(201);
    expect(delays).toEqual(delays.map(() => 120));
    expect(delays.length).toBeGreaterThanOrEqual(1);
  });

  it('adds a random jitter of 0..jitterMs on top of the latency, the same for the same seed', async () => {
    const delaysOf = async (seed: number): Promise<number[]> => {
      const delays: number[] = [];
      const s = await open(
        { latencyMs: 20, jitterMs: 150, seed },
        { delay: (ms) => (delays.push(ms), Promise.resolve()) },
      );
      for (let i = 0; i < 6; i++) await s.get('/v2/data-import/accounts/ACME/J/');
      return delays;
    };
    const delays = await delaysOf(5);
    for (const ms of delays) expect(ms).toBeGreaterThanOrEqual(20);
    for (const ms of delays) expect(ms).toBeLessThan(170);
    expect(Math.max(...delays) - Math.min(...delays)).toBeGreaterThan(10);
    expect(await delaysOf(5)).toEqual(delays);
  });

  it('fails a seeded share with 500 before anything is applied; the same requests for the same seed', async () => {
    const statuses = async (seed: number) => {
      const s = await open({ failRate: 0.3, seed });
      const found: number[] = [];
      for (let i = 0; i < 40; i++) found.push((await create(s, `F-${i}`)).status);
      const failed = found.filter((status) => status === 500).length;
      expect(s.sandbox.inspect.accountCount()).toBe(40 - failed);
      expect(s.sandbox.inspect.requests().filter((entry) => entry.fault === 'server_error')).toHaveLength(failed);
      return found;
    };
    const first = await statuses(3);
    expect(first.filter((status) => status === 500).length).toBeGreaterThan(4);
    expect(first.filter((status) => status === 500).length).toBeLessThan(24);
    expect(await statuses(3)).toEqual(first);
    expect(await statuses(4)).not.toEqual(first);
  });

  it('answers 429 with Retry-After (retryAfterSeconds) for the rate-limit share', async () => {
    const s = await open({ rateLimitRate: 1, retryAfterSeconds: 7 });
    const answer = await create(s, 'R-1');
    expect(answer.status).toBe(429);
    expect(answer.headers.get('retry-after')).toBe('7');
    expect(answer.body.detail).toEqual(expect.any(String));
    expect(s.sandbox.inspect.accountCount()).toBe(0);
  });

  it('drops the connection before the change is applied', async () => {
    const s = await open({ dropRate: 1 });
    expect(await outcome(create(s, 'D-1'))).toBe('reset');
    expect(s.sandbox.inspect.account('ACME', 'D-1')).toBeUndefined();
    expect(s.sandbox.inspect.requests().at(-1)).toMatchObject({ status: null, fault: 'drop' });
  });

  it('ambiguous: applies the change, then drops the connection without a response', async () => {
    const s = await open({ ambiguousRate: 1 });
    expect(await outcome(create(s, 'A-1'))).toBe('reset');
    expect(s.sandbox.inspect.account('ACME', 'A-1')).toMatchObject({ status: 'PROCESSED', createRequestsAccepted: 1 });
    expect(s.sandbox.inspect.requests().at(-1)).toMatchObject({ status: null, fault: 'ambiguous' });
  });

  it('mixes the modes by their shares, reproducibly', async () => {
    const run = async () => {
      const s = await open({ dropRate: 0.2, ambiguousRate: 0.2, failRate: 0.2, rateLimitRate: 0.2, seed: 11 });
      const found: Array<number | string> = [];
      for (let i = 0; i < 30; i++) found.push(await outcome(create(s, `M-${i}`)));
      return { found, faults: s.sandbox.inspect.requests().map((entry) => entry.fault) };
    };
    const first = await run();
    expect(new Set(first.faults)).toEqual(new Set(['drop', 'ambiguous', 'server_error', 'rate_limit', null]));
    expect(await run()).toEqual(first);
  });

  it('leaves the token mutation alone unless faultTokenIssue is set', async () => {
    const s = await open({ failRate: 1 }); // openSession obtained its token through the mutation
    expect(s.token.split('.')).toHaveLength(3);
    expect((await create(s, 'T-1')).status).toBe(500);
    await expect(openSession({ failRate: 1, faultTokenIssue: true })).rejects.toThrow(/no token/);
  });

  it('changes faults at run time (control.setFaults)', async () => {
    const s = await open({ failRate: 1 });
    expect((await create(s, 'C-1')).status).toBe(500);
    s.sandbox.control.setFaults({ failRate: 0 });
    expect((await create(s, 'C-1')).status).toBe(201);
  });
});

describe('the real rate limit (maxRps)', () => {
  it('answers 429 + Retry-After beyond maxRps requests in a second, then recovers', async () => {
    const clock = manualClock();
    const s = await open({ maxRps: 5 }, { clock: clock.now });
    const statuses = await Promise.all(Array.from({ length: 12 }, (_, i) => create(s, `Q-${i}`)));
    const limited = statuses.filter((answer) => answer.status === 429);
    expect(statuses.filter((answer) => answer.status === 201)).toHaveLength(5);
    expect(limited).toHaveLength(7);
    expect(Number(limited[0]!.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(s.sandbox.inspect.requests().filter((entry) => entry.fault === 'max_rps')).toHaveLength(7);
    clock.advance(1000);
    expect((await create(s, 'Q-0')).status).toBe(400); // already imported: the request got through
  });
});

describe('the request log and in-flight count', () => {
  it('records method, path, query, status and times, never the Authorization header', async () => {
    const s = await open({});
    await s.post('/v1/data-import/transactions/create/?check_previously_added=false', {});
    const entry = s.sandbox.inspect.requests().at(-1);
    expect(entry).toEqual({
      seq: expect.any(Number),
      method: 'POST',
      path: '/v1/data-import/transactions/create/',
      query: 'check_previously_added=false',
      status: 400,
      fault: null,
      startedAt: expect.any(Number),
      endedAt: expect.any(Number),
    });
    expect(JSON.stringify(s.sandbox.inspect.requests())).not.toContain(s.token.slice(-20));
  });

  it('reports the most requests in flight at once, and resets', async () => {
    const s = await open({ latencyMs: 150 });
    await Promise.all(Array.from({ length: 9 }, (_, i) => s.get(`/v2/data-import/accounts/ACME/X-${i}/`)));
    expect(s.sandbox.inspect.maxInFlight()).toBe(9);
    s.sandbox.inspect.resetLog();
    expect(s.sandbox.inspect.requests()).toEqual([]);
    expect(s.sandbox.inspect.maxInFlight()).toBe(0);
    await s.get('/v2/data-import/accounts/ACME/X/');
    expect(s.sandbox.inspect.maxInFlight()).toBe(1);
    expect(s.sandbox.inspect.requestCount()).toBe(1);
  });

  it('logs one line per request when asked (verbose), without the API key or token', async () => {
    const lines: string[] = [];
    const s = await open({ log: (line) => lines.push(line), apiKey: 'very-secret-key' });
    await create(s, 'V-1');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/^POST \/v1\/graphql\/ 200 \d+ms$/);
    expect(lines[1]).toMatch(/^POST \/v2\/data-import\/accounts\/ 201 \d+ms$/);
    expect(lines.join('\n')).not.toContain('very-secret-key');
    expect(lines.join('\n')).not.toContain(s.token.slice(-20));
  });
});
