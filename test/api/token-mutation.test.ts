import { describe, expect, it } from 'vitest';
import { AuthenticationError, RateLimitedError, ServerError, UnexpectedResponseError } from '../../src/api/errors.js';
import { readTokenResponse, tokenMutationBody } from '../../src/api/token-mutation.js';

const now = 1_800_000_000_000;
const at = { now, wallNow: now };
const seconds = now / 1000;
const answer = (body: unknown, status = 200) => ({ status, headers: {}, body });
const grant = (payload: Record<string, number>, extra: Record<string, unknown> = {}) =>
  answer({ data: { obtainKrakenToken: { token: 'a.b.c', payload, ...extra } } });

describe('tokenMutationBody', () => {
  it('puts the key in variables only, and selects the fields the client reads', () => {
    const body = JSON.parse(tokenMutationBody('obtainKrakenToken', { APIKey: 'secret-key-1' })) as {
      query: string;
      variables: unknown;
    };
    expect(body.query).not.toContain('secret-key-1');
    expect(body.query).toMatch(/obtainKrakenToken\(input: \$input\) \{ token payload refreshToken refreshExpiresIn \}/);
    expect(body.variables).toEqual({ input: { APIKey: 'secret-key-1' } });
  });
});

describe('readTokenResponse', () => {
  it('a grant: expiry from payload.exp, refresh token and its expiry', () => {
    expect(
      readTokenResponse(
        'obtainKrakenToken',
        grant({ iat: seconds, exp: seconds + 3600 }, { refreshToken: 'r-1', refreshExpiresIn: seconds + 86400 }),
        at,
      ),
    ).toEqual({
      token: 'a.b.c',
      expiresAt: now + 3_600_000,
      issuedAt: now,
      refreshToken: 'r-1',
      refreshExpiresAt: now + 86_400_000,
    });
  });

  it.each([
    ['service clock 10 min ahead', 600],
    ['service clock 10 min behind', -600],
  ])('%s: the expiry is moved onto the local clock', (_name, skew) => {
    const result = readTokenResponse(
      'obtainKrakenToken',
      grant({ iat: seconds + skew, exp: seconds + skew + 3600 }),
      at,
    );
    expect(result).toMatchObject({ expiresAt: now + 3_600_000 });
  });

  it('whole-second rounding of iat is not skew', () => {
    const result = readTokenResponse('obtainKrakenToken', grant({ iat: seconds - 1, exp: seconds - 1 + 3600 }), at);
    expect(result).toMatchObject({ expiresAt: now + 3_599_000 });
  });

  it.each([
    [
      'wrong key (KT-CT-1139)',
      answer({
        data: { obtainKrakenToken: null },
        errors: [{ message: 'Authentication failed.', extensions: { errorCode: 'KT-CT-1139' } }],
      }),
      AuthenticationError,
      'KT-CT-1139',
    ],
    [
      'refresh token expired (KT-CT-1134)',
      answer({ errors: [{ message: 'expired', extensions: { errorCode: 'KT-CT-1134' } }] }),
      AuthenticationError,
      'KT-CT-1134',
    ],
    [
      'too many requests (KT-CT-1199)',
      answer({ errors: [{ message: 'slow', extensions: { errorCode: 'KT-CT-1199' } }] }),
      RateLimitedError,
      undefined,
    ],
    [
      'a query the service does not know (wrong --token-field)',
      answer({ errors: [{ message: 'Cannot query field' }] }, 400),
      AuthenticationError,
      undefined,
    ],
    ['server error', answer({ detail: 'boom' }, 502), ServerError, undefined],
    [
      'no payload selected',
      answer({ data: { obtainKrakenToken: { token: 'a.b.c' } } }),
      UnexpectedResponseError,
      undefined,
    ],
    [
      'another root field',
      answer({ data: { obtainToken: { token: 'a.b.c', payload: { exp: 1 } } } }),
      UnexpectedResponseError,
      undefined,
    ],
  ] as const)('%s', (_name, response, cls, serviceCode) => {
    const error = readTokenResponse('obtainKrakenToken', response, at);
    expect(error).toBeInstanceOf(cls);
    if (serviceCode) expect(error).toMatchObject({ serviceCode });
  });

  it('an unexpected shape names the field', () => {
    expect(
      readTokenResponse('obtainKrakenToken', answer({ data: { obtainKrakenToken: { token: 'a.b.c' } } }), at),
    ).toMatchObject({ field: 'data.obtainKrakenToken.payload' });
  });
});
