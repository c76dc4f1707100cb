import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.js';
import { manualClock, obtainToken, send, TOKEN_QUERY } from './helpers.js';

// Spec "Authentication"; docs/service.md "Authentication".

let sandbox: RunningSandbox;
const graphql = (body: unknown) =>
  send(`${sandbox.url}/v1/graphql/`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
const status = (authorization?: string) =>
  send(`${sandbox.url}/v1/data-import/all-account-import-processes/ACME/`, {
    method: 'GET',
    headers: authorization === undefined ? {} : { authorization },
  });

// The sandbox's time stands still unless a test moves it: token lifetimes are exact.
const clock = manualClock(Date.UTC(2026, 10, 25, 12, 0, 0, 400));
beforeAll(async () => {
  sandbox = await startSandbox({ apiKey: 'k-123' }, { clock: clock.now });
});
afterAll(() => sandbox.close());

describe('the token mutation', () => {
  it('answers obtainKrakenToken with variables: token, refreshToken, refreshExpiresIn, payload with exp one TTL ahead', async () => {
    const now = clock.now() / 1000;
    const answer = await graphql({ query: TOKEN_QUERY, variables: { input: { APIKey: 'k-123' } } });
    expect(answer.status).toBe(200);
    const result = answer.body.data.obtainKrakenToken;
    expect(Object.keys(result).sort()).toEqual(['payload', 'refreshExpiresIn', 'refreshToken', 'token']);
    expect(result.token.split('.')).toHaveLength(3);
    expect(result.payload.exp).toBe(Math.floor(now) + 3600);
    const claims = JSON.parse(Buffer.from(result.token.split('.')[1], 'base64url').toString());
    expect(claims.exp).toBe(result.payload.exp);
    expect(result.refreshExpiresIn).toBeGreaterThan(now + 6 * 24 * 3600);
  });

  it('accepts the neutral field obtainToken and an inline APIKey, returning only the selected fields', async () => {
    const answer = await graphql({ query: 'mutation { obtainToken(input: {APIKey: "k-123"}) { token payload } }' });
    expect(answer.status).toBe(200);
    expect(Object.keys(answer.body.data.obtainToken).sort()).toEqual(['payload', 'token']);
  });

  it('refuses a wrong API key with HTTP 200 and the platform error code KT-CT-1139', async () => {
    const answer = await graphql({ query: TOKEN_QUERY, variables: { input: { APIKey: 'wrong' } } });
    expect(answer.status).toBe(200);
    expect(answer.body.data.obtainKrakenToken).toBeNull();
    expect(answer.body.errors[0].extensions.errorCode).toBe('KT-CT-1139');
    expect(JSON.stringify(answer.body)).not.toContain('k-123');
  });

  it('renews with a refresh token once; a reused or unknown refresh token is refused', async () => {
    const first = await graphql({ query: TOKEN_QUERY, variables: { input: { APIKey: 'k-123' } } });
    const refreshToken = first.body.data.obtainKrakenToken.refreshToken;
    const renewed = await graphql({ query: TOKEN_QUERY, variables: { input: { refreshToken } } });
    expect(typeof renewed.body.data.obtainKrakenToken.token).toBe('string');
    const reused = await graphql({ query: TOKEN_QUERY, variables: { input: { refreshToken } } });
    expect(reused.body.errors[0].extensions.errorCode).toBe('KT-CT-1135');
  });

  it('answers 400 to a request without a query, another operation, or unknown result fields', async () => {
    expect((await graphql({})).status).toBe(400);
    expect((await graphql({ query: '{ viewer { id } }' })).status).toBe(400);
    const unknown = await graphql({
      query: 'mutation { obtainKrakenToken(input: {APIKey: "k-123"}) { token secret } }',
    });
    expect(unknown.status).toBe(400);
    expect(unknown.body.errors[0].message).toContain('secret');
  });
});

describe('REST authentication', () => {
  it('accepts the header forms the spec shows, the bare token and "Token <token>", and the platform\'s "JWT <token>"', async () => {
    const token = await obtainToken(sandbox.url, 'k-123');
    expect((await status(token)).status).toBe(200);
    expect((await status(`Token ${token}`)).status).toBe(200);
    expect((await status(`JWT ${token}`)).status).toBe(200);
  });

  it('refuses a missing token with 401 and a detail', async () => {
    const answer = await status();
    expect(answer.status).toBe(401);
    expect(answer.body).toEqual({ detail: 'Authentication credentials were not provided.' });
  });

  it('refuses an unknown token: a tampered one, one from another sandbox, the API key itself, a Bearer header', async () => {
    const token = await obtainToken(sandbox.url, 'k-123');
    const other = await startSandbox({ apiKey: 'k-123' });
    try {
      const foreign = await obtainToken(other.url, 'k-123');
      for (const header of [`${token}x`, foreign, 'k-123', 'Token k-123', `Bearer ${token}`]) {
        const answer = await status(header);
        expect(answer.status, header.slice(0, 12)).toBe(401);
        expect(typeof answer.body.detail).toBe('string');
      }
    } finally {
      await other.close();
    }
  });

  it('refuses an expired token (tokenTtlSeconds short) and accepts a renewed one', async () => {
    const clock = manualClock();
    const short = await startSandbox({ tokenTtlSeconds: 0.2 }, { clock: clock.now });
    try {
      const token = await obtainToken(short.url, short.apiKey);
      const get = (header: string) =>
        send(`${short.url}/v1/data-import/all-account-import-processes/ACME/`, {
          method: 'GET',
          headers: { authorization: header },
        });
      expect((await get(token)).status).toBe(200);
      clock.advance(300);
      const expired = await get(token);
      expect(expired.status).toBe(401);
      expect(expired.body.detail).toMatch(/expired/);
      expect((await get(await obtainToken(short.url, short.apiKey))).status).toBe(200);
    } finally {
      await short.close();
    }
  });
});
