import { describe, expect, it } from 'vitest';
import { AuthenticationError, ConnectionFailedError, ServerError } from '../../src/api/errors.js';
import {
  TokenManager,
  decodeJwtTimes,
  type Credentials,
  type ObtainInput,
  type TokenGrant,
  type TokenRenewal,
} from '../../src/api/token-manager.js';
import { FakeTime } from './helpers/fake-time.js';

function jwt(claims: Record<string, number>): string {
  const part = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
  return `${part({ alg: 'HS256' })}.${part(claims)}.signature`;
}

/** A fake token service: numbered tokens that live `ttlMs`, refresh tokens that can be refused. */
function setup(
  credentials: Credentials,
  options: { ttlMs?: number; refuseRefresh?: boolean; refuseKey?: boolean; failures?: Error[] } = {},
) {
  const time = new FakeTime();
  time.now = 1_000_000;
  const calls: ObtainInput[] = [];
  const renewals: TokenRenewal[] = [];
  let issued = 0;
  const obtain = async (input: ObtainInput): Promise<TokenGrant> => {
    calls.push(input);
    await Promise.resolve();
    if ('refreshToken' in input && options.refuseRefresh)
      throw new AuthenticationError('obtainToken', 'Refresh token has expired. (KT-CT-1134)');
    if ('APIKey' in input && options.refuseKey)
      throw new AuthenticationError('obtainToken', 'Authentication failed. (KT-CT-1139)');
    const failure = options.failures?.shift();
    if (failure) throw failure;
    issued += 1;
    return {
      token: `token-${issued}`,
      issuedAt: time.now,
      expiresAt: time.now + (options.ttlMs ?? 3_600_000),
      refreshToken: `refresh-${issued}`,
    };
  };
  const manager = new TokenManager({
    credentials,
    obtain,
    clock: time.clock,
    renewMarginMs: 60_000,
    onRenewed: (renewal) => renewals.push(renewal),
  });
  return { time, manager, calls, renewals };
}

describe('TokenManager', () => {
  it('obtains a token with the API key once and caches it', async () => {
    const { manager, calls, renewals } = setup({ apiKey: 'key-123456' });
    expect(await manager.current()).toBe('token-1');
    expect(await manager.current()).toBe('token-1');
    expect(calls).toEqual([{ APIKey: 'key-123456' }]);
    expect(renewals).toEqual([{ reason: 'initial', via: 'api_key', expiresAt: 1_000_000 + 3_600_000 }]);
  });

  it('concurrent callers share one renewal', async () => {
    const { manager, calls } = setup({ apiKey: 'key-123456' });
    const tokens = await Promise.all(Array.from({ length: 20 }, () => manager.current()));
    expect(new Set(tokens)).toEqual(new Set(['token-1']));
    expect(calls).toHaveLength(1);
  });

  it('renews before exp (margin 60 s) with the refresh token; never hands out a token past that point', async () => {
    const { time, manager, calls, renewals } = setup({ apiKey: 'key-123456' });
    await manager.current();
    time.now += 3_600_000 - 60_001;
    expect(await manager.current()).toBe('token-1');
    time.now += 1;
    expect(await manager.current()).toBe('token-2');
    expect(calls[1]).toEqual({ refreshToken: 'refresh-1' });
    expect(renewals[1]).toMatchObject({ reason: 'expiring', via: 'refresh_token' });
  });

  it('caps the margin at a quarter of a short lifetime', async () => {
    const { time, manager } = setup({ apiKey: 'key-123456' }, { ttlMs: 2000 });
    await manager.current();
    time.now += 1499;
    expect(await manager.current()).toBe('token-1');
    time.now += 1;
    expect(await manager.current()).toBe('token-2');
  });

  it('falls back to the API key when the refresh token is refused', async () => {
    const { time, manager, calls, renewals } = setup({ apiKey: 'key-123456' }, { refuseRefresh: true });
    await manager.current();
    time.now += 3_600_000;
    expect(await manager.current()).toBe('token-2');
    expect(calls).toEqual([{ APIKey: 'key-123456' }, { refreshToken: 'refresh-1' }, { APIKey: 'key-123456' }]);
    expect(renewals[1]).toMatchObject({ via: 'api_key' });
  });

  it('after a 401 renews once for everyone holding the rejected token', async () => {
    const { manager, calls } = setup({ apiKey: 'key-123456' });
    const rejected = await manager.current();
    const renewed = await Promise.all([
      manager.renewAfterUnauthorized(rejected),
      manager.renewAfterUnauthorized(rejected),
    ]);
    expect(renewed).toEqual(['token-2', 'token-2']);
    // A late 401 for the old token does not renew again.
    expect(await manager.renewAfterUnauthorized(rejected)).toBe('token-2');
    expect(calls).toHaveLength(2);
  });

  it('uses a pre-obtained JWT until its exp; without a key it cannot renew', async () => {
    const time = new FakeTime();
    time.now = 10_000_000;
    const token = jwt({ iat: 10_000, exp: 10_000 + 3600 });
    const manager = new TokenManager({
      credentials: { token },
      obtain: () => Promise.reject(new Error('must not be called')),
      clock: time.clock,
    });
    expect(await manager.current()).toBe(token);
    time.now = (10_000 + 3600) * 1000;
    await expect(manager.current()).rejects.toBeInstanceOf(AuthenticationError);
    await expect(manager.renewAfterUnauthorized(token)).rejects.toThrow(/no API key/);
  });

  it('a pre-obtained token with a key: the token first, the key renews it', async () => {
    const { manager, calls } = setup({ apiKey: 'key-123456', token: 'opaque-token-value' });
    expect(await manager.current()).toBe('opaque-token-value');
    expect(calls).toHaveLength(0);
    expect(await manager.renewAfterUnauthorized('opaque-token-value')).toBe('token-1');
    expect(calls).toEqual([{ APIKey: 'key-123456' }]);
  });

  it('a refused key is an AuthenticationError (fatal)', async () => {
    const { manager } = setup({ apiKey: 'key-123456' }, { refuseKey: true });
    const error = await manager.current().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(AuthenticationError);
    expect((error as AuthenticationError).fatal).toBe(true);
  });

  it('after a failure no retry mends, every later caller gets it without another attempt', async () => {
    const untrusted = new ConnectionFailedError('obtainToken', 'tls_certificate_untrusted', 'not trusted');
    const { manager, calls } = setup({ apiKey: 'key-123456' }, { failures: [untrusted] });
    await expect(manager.current()).rejects.toBe(untrusted);
    await expect(manager.current()).rejects.toBe(untrusted);
    await expect(manager.renewAfterUnauthorized('token-0')).rejects.toBe(untrusted);
    expect(calls).toHaveLength(1);
  });

  it('after a failure a retry may mend (the service down past its resends), the next caller tries again', async () => {
    const down = new ServerError('obtainToken', 503, 'unavailable', false);
    const { manager, calls } = setup({ apiKey: 'key-123456' }, { failures: [down] });
    await expect(manager.current()).rejects.toBe(down);
    expect(await manager.current()).toBe('token-1');
    expect(calls).toHaveLength(2);
  });
});

describe('decodeJwtTimes', () => {
  it.each([
    [jwt({ iat: 100, exp: 160.5 }), { issuedAt: 100_000, expiresAt: 160_500 }],
    ['not-a-jwt', { issuedAt: undefined, expiresAt: undefined }],
    ['a.b.c', { issuedAt: undefined, expiresAt: undefined }],
    [`x.${Buffer.from('{"exp":"soon"}').toString('base64url')}.y`, { issuedAt: undefined, expiresAt: undefined }],
  ])('%s', (token, times) => {
    expect(decodeJwtTimes(token)).toEqual(times);
  });
});
