import { afterEach, describe, expect, it } from 'vitest';
import { ApiError, type ServiceClient } from '../../src/api/index.js';
import { account, startHarness, today, virtualTime, type Harness } from './helpers/sandbox-client.js';

// The client against the sandbox with its fault modes on: every account ends exactly once at the
// service, concurrency stays within the limit, 429s slow the whole client, tokens are renewed
// before they expire and after a 401.

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

type Settled<T> = { ok: true; value: T } | { ok: false; error: ApiError };
async function settle<T>(promise: Promise<T>): Promise<Settled<T>> {
  try {
    return { ok: true, value: await promise };
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    return { ok: false, error };
  }
}

async function migrateOne(client: ServiceClient, id: string, settleAll: () => void) {
  const created = await client.createAccount(account(id));
  expect(['scheduled', 'already_imported', 'in_progress']).toContain(created.kind);
  settleAll();
  const base = { import_supplier: 'ACME', external_account_number: id };
  const notes = await client.createNotes({ ...base, notes: [{ body: `Note of ${id}` }] });
  const transactions = await client.createTransactions({
    ...base,
    transactions: [
      { transaction_id: `${id}-t1`, transaction_date: today(), amount: 10, type: 'CHARGE', reason: 'IMPORTED_CHARGE' },
    ],
  });
  const statements = await client.createHistoricalStatements({
    ...base,
    statements: [{ statement_id: `${id}-s1`, bill_period_from_date: '2026-01-01', bill_period_to_date: '2026-01-31' }],
  });
  const instruction = await settle(
    client.createPaymentInstruction({ ...base, vendor: 'STRIPE', reference: `${id}-pi`, type: 'CARD' }),
  );
  return { notes, transactions, statements, instruction };
}

describe('every fault mode on', () => {
  it('each account is created once and each post-import item exists once; only a payment instruction may stay ambiguous', async () => {
    harness = await startHarness(
      {
        seed: 7,
        latencyMs: 2,
        jitterMs: 3,
        failRate: 0.1,
        rateLimitRate: 0.05,
        retryAfterSeconds: 0,
        dropRate: 0.05,
        ambiguousRate: 0.05,
      },
      { concurrency: 4, maxRetries: 10, rateLimitPauseMs: 20, recoveryIntervalMs: 50 },
    );
    const { sandbox, client, events } = harness;
    const ids = Array.from({ length: 24 }, (_, index) => `F-${index}`);
    const results = await Promise.all(ids.map((id) => migrateOne(client, id, () => sandbox.control.settleAll())));

    const faults = new Set(sandbox.inspect.requests().map((entry) => entry.fault));
    expect([...faults].sort()).toEqual(expect.arrayContaining(['ambiguous', 'drop', 'rate_limit', 'server_error']));
    expect(events.some((event) => event.type === 'retry' && event.ambiguous)).toBe(true);
    expect(sandbox.inspect.maxInFlight()).toBeLessThanOrEqual(4);
    // A payment instruction is never resent after a lost answer (500s and 429s are).
    expect(
      events.filter(
        (event) => event.type === 'retry' && event.endpoint === 'createPaymentInstruction' && event.ambiguous,
      ),
    ).toEqual([]);
    expect(
      events.some((event) => event.type === 'retry' && event.endpoint === 'createAccount' && event.ambiguous),
    ).toBe(true);

    results.forEach((result, index) => {
      const state = sandbox.inspect.account('ACME', ids[index] as string);
      expect(state?.createRequestsAccepted).toBe(1);
      expect(state?.notes.filter((note) => !note.bySandbox)).toHaveLength(1);
      expect(state?.transactions).toHaveLength(1);
      expect(state?.historicalStatements).toHaveLength(1);
      expect(result.notes.kind).toBe('created');
      expect(result.transactions.kind).toBe('created');
      expect(['created', 'already_exists']).toContain(result.statements.kind);
      if (result.instruction.ok) {
        expect(result.instruction.value.kind).toBe('created');
        expect(state?.paymentInstructions).toHaveLength(1);
      } else {
        // Sent, no answer: not resent (no dedup for instructions); the engine reconciles.
        expect(result.instruction.error).toMatchObject({ ambiguous: true, phase: 'sent' });
        expect(state?.paymentInstructions.length).toBeLessThanOrEqual(1);
      }
    });
  });
});

describe('retries stop at the limit with the last error', () => {
  it.each([
    ['failRate', { failRate: 1 }, 'server_error', 500],
    ['rateLimitRate', { rateLimitRate: 1, retryAfterSeconds: 0 }, 'rate_limited', 429],
    ['dropRate', { dropRate: 1 }, 'network_error', undefined],
  ] as const)('%s 1: maxRetries + 1 requests, then the last error', async (_name, faults, code, status) => {
    harness = await startHarness({ ...faults }, { maxRetries: 3, rateLimitPauseMs: 1 });
    const { sandbox, client, events } = harness;
    const error = await client.getImportStatus('ACME', 'M-1').catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ code, status, attempts: 4, endpoint: 'getImportStatus' });
    expect(sandbox.inspect.requests().filter((entry) => entry.path.startsWith('/v2/'))).toHaveLength(4);
    expect(events.filter((event) => event.type === 'retry')).toHaveLength(3);
    expect(events.at(-1)).toMatchObject({ type: 'failed', code, attempts: 4 });
  });
});

describe('concurrency and rate', () => {
  it('never more requests in flight than the configured concurrency', async () => {
    harness = await startHarness({ latencyMs: 25 }, { concurrency: 5 });
    const { sandbox, client } = harness;
    let maxSeen = 0;
    const calls = Array.from({ length: 40 }, async (_, index) => {
      const result = await client.getImportStatus('ACME', `C-${index}`);
      maxSeen = Math.max(maxSeen, client.stats().inFlight);
      return result;
    });
    expect(await Promise.all(calls)).toEqual(Array.from({ length: 40 }, () => null));
    expect(sandbox.inspect.maxInFlight()).toBe(5);
    expect(maxSeen).toBeLessThanOrEqual(5);
    expect(client.stats()).toMatchObject({ inFlight: 0, queued: 0 });
  });

  it("a maximum requests per second holds: starts are spaced by the cap on the client's clock", async () => {
    // Virtual time: the client's waits are recorded and skipped, so the spacing is exact whatever the machine's speed.
    const time = virtualTime();
    harness = await startHarness({}, { concurrency: 8, maxRequestsPerSecond: 40, ...time.client }, time.sandbox);
    const { sandbox, client } = harness;
    const started = time.now();
    await Promise.all(Array.from({ length: 50 }, (_, index) => client.getImportStatus('ACME', `R-${index}`)));
    // 50 starts 25 ms apart: 49 gaps; nothing else waits (no fault, no retry).
    expect(time.now() - started).toBe(49 * 25);
    expect(sandbox.inspect.requests().filter((entry) => entry.path.startsWith('/v2/'))).toHaveLength(50);
    expect(sandbox.inspect.requests().filter((entry) => entry.status === 429)).toEqual([]);
  });

  it('429s slow the whole client down: its concurrency is cut, and every start waits for the pause', async () => {
    // Seeded 429s (not a rate the machine's speed decides) and virtual time: the client's reaction is exact.
    const time = virtualTime();
    harness = await startHarness(
      { rateLimitRate: 0.2, retryAfterSeconds: 2, seed: 7 },
      { concurrency: 16, recoveryIntervalMs: 600_000, maxRetries: 10, ...time.client },
      time.sandbox,
    );
    const { sandbox, client, events } = harness;
    const results = await Promise.all(
      Array.from({ length: 150 }, (_, index) => client.getImportStatus('ACME', `L-${index}`)),
    );
    expect(results.every((result) => result === null)).toBe(true);
    const cuts = events.filter((event) => event.type === 'limit_changed' && event.reason === 'rate_limited');
    expect(cuts[0]).toMatchObject({ previousConcurrencyLimit: 16, concurrencyLimit: 8 });
    expect(sandbox.inspect.requests().some((entry) => entry.status === 429)).toBe(true);
    // The Retry-After of 2 s paused the client (a whole-client wait, on its clock), and no recovery came within it.
    expect(time.sleeps).toContain(2_000);
    expect(client.stats().concurrencyLimit).toBeLessThan(16);
  });
});

describe('tokens', () => {
  it('renews before expiry: no request is ever refused for an expired token', async () => {
    // Virtual time shared with the sandbox: tokens live 0.6 s on both sides, and the test moves 100 ms per round.
    const time = virtualTime();
    harness = await startHarness({ tokenTtlSeconds: 0.6 }, { concurrency: 3, ...time.client }, time.sandbox);
    const { sandbox, client, events } = harness;
    for (let round = 0, index = 0; round < 22; round += 1) {
      await Promise.all([0, 1, 2].map(() => client.getImportStatus('ACME', `E-${(index += 1)}`)));
      time.advance(100);
    }
    expect(sandbox.inspect.requests().filter((entry) => entry.status === 401)).toEqual([]);
    const renewals = events.filter((event) => event.type === 'token_renewed');
    expect(
      renewals.filter((event) => event.type === 'token_renewed' && event.reason === 'expiring').length,
    ).toBeGreaterThanOrEqual(3);
    expect(renewals.every((event) => event.type === 'token_renewed' && event.reason !== 'unauthorized')).toBe(true);
  });

  it('a token the service refuses (401) is renewed once with the key and the request resent', async () => {
    const other = await startHarness();
    const foreign = await (async () => {
      // A real token of another sandbox instance: well-formed, unexpired, signed with another secret.
      const probe = await fetch(`${other.sandbox.url}/v1/graphql/`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query: 'mutation { obtainKrakenToken(input: {APIKey: "sandbox-api-key"}) { token } }' }),
      });
      return ((await probe.json()) as { data: { obtainKrakenToken: { token: string } } }).data.obtainKrakenToken.token;
    })();
    await other.close();
    harness = await startHarness({}, { credentials: { apiKey: 'sandbox-api-key', token: foreign } });
    const { sandbox, client, events } = harness;
    expect(await client.getImportStatus('ACME', 'U-1')).toBeNull();
    expect(await client.getImportStatus('ACME', 'U-2')).toBeNull();
    expect(sandbox.inspect.requests().map((entry) => entry.status)).toEqual([401, 200, 404, 404]);
    expect(events.filter((event) => event.type === 'token_renewed')).toEqual([
      expect.objectContaining({ reason: 'unauthorized', via: 'api_key' }),
    ]);
  });

  it('a wrong API key: AuthenticationError (fatal), no REST request sent', async () => {
    harness = await startHarness({}, { credentials: { apiKey: 'not-the-key' } });
    const error = await harness.client.createAccount(account('W-1')).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: 'authentication_failed', fatal: true, serviceCode: 'KT-CT-1139' });
    expect(harness.sandbox.inspect.requests().filter((entry) => entry.path !== '/v1/graphql/')).toEqual([]);
  });
});
