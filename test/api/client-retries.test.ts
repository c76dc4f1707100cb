import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import {
  AuthenticationError,
  NetworkError,
  ServerError,
  TimeoutError,
  UnexpectedResponseError,
  createImportServiceClient,
  type ClientEvent,
  type ClientOptions,
  type ServiceClient,
} from '../../src/api/index.js';
import { account } from './helpers/sandbox-client.js';
import { json, startScriptedServer, type Script, type ScriptedServer } from './helpers/scripted-server.js';
import { listItems } from './helpers/list-items.js';

// The retry decision at work over real sockets: what is resent, how often, after how long, and
// what is reported when the policy gives up.

const status = {
  status: 'PENDING',
  platform_identifier: null,
  created_at: '2026-11-22T08:00:00+00:00',
  modified_at: '2026-11-22T08:00:00+00:00',
  latest_error: null,
};
const instruction = {
  import_supplier: 'ACME',
  external_account_number: 'P-1',
  vendor: 'STRIPE',
  reference: 'pi-1',
  type: 'CARD' as const,
};

let server: ScriptedServer | undefined;
let client: ServiceClient | undefined;
afterEach(async () => {
  await client?.close();
  await server?.close();
  client = undefined;
  server = undefined;
});

function connect(url: string, options: Partial<ClientOptions> = {}) {
  const events: ClientEvent[] = [];
  const sleeps: number[] = [];
  let skipped = 0;
  client = createImportServiceClient({
    baseUrl: url,
    credentials: { apiKey: 'api-key-for-tests' },
    maxRetries: 3,
    onEvent: (event) => events.push(event),
    // Record every wait and skip it on a virtual clock: the delays are asserted, not lived through.
    clock: { now: () => Date.now() + skipped },
    sleep: async (ms) => {
      sleeps.push(ms);
      skipped += ms;
    },
    ...options,
  });
  return { client, events, sleeps };
}

async function serve(script: Script) {
  server = await startScriptedServer(script);
  return server;
}

describe('network failures', () => {
  it('connection refused once the service has answered (a restart): never sent, resent up to the limit, then the last error with the attempt count', async () => {
    const s = await serve((_request, response) => json(response, 200, status));
    const { client: c, events } = connect(s.url, { credentials: { token: 'pre-obtained-token' } });
    await c.getImportStatus('ACME', 'N-0');
    await s.close();
    server = undefined;
    const error = await c.createPaymentInstruction(instruction).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(NetworkError);
    expect(error).toMatchObject({
      phase: 'not_sent',
      ambiguous: false,
      retryable: true,
      attempts: 4,
      endpoint: 'createPaymentInstruction',
    });
    expect(events.filter((event) => event.type === 'retry')).toHaveLength(3);
    expect(events.at(-1)).toMatchObject({ type: 'failed', code: 'network_error', attempts: 4, ambiguous: false });
  });

  it('reset after the request arrived: ambiguous; a create is resent (the service deduplicates), a payment instruction is not', async () => {
    const s = await serve((_request, _response, socket) => socket.destroy());
    const { client: c } = connect(s.url);
    const create = await c.createAccount(account('R-1')).catch((caught: unknown) => caught);
    expect(create).toBeInstanceOf(NetworkError);
    expect(create).toMatchObject({ phase: 'sent', ambiguous: true, attempts: 4 });
    expect(s.rest()).toHaveLength(4);
    const payment = await c.createPaymentInstruction(instruction).catch((caught: unknown) => caught);
    expect(payment).toMatchObject({ phase: 'sent', ambiguous: true, attempts: 1 });
    expect(s.rest()).toHaveLength(5);
  });

  it("retry 'safe' and 'never' let the caller reconcile instead", async () => {
    const s = await serve((_request, _response, socket) => socket.destroy());
    const { client: c } = connect(s.url);
    await expect(c.createAccount(account('R-2'), { retry: 'safe' })).rejects.toMatchObject({
      ambiguous: true,
      attempts: 1,
    });
    await expect(c.getImportStatus('ACME', 'R-2', { retry: 'never' })).rejects.toMatchObject({ attempts: 1 });
    expect(s.rest()).toHaveLength(2);
  });

  it('no answer in time: a TimeoutError after sending', async () => {
    const s = await serve(() => undefined);
    const { client: c } = connect(s.url, { maxRetries: 0, timeouts: { headersMs: 150 } });
    const error = await c.getImportStatus('ACME', 'T-1').catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(TimeoutError);
    expect(error).toMatchObject({ code: 'timeout', phase: 'sent' });
  });
});

describe('answers', () => {
  it('5xx is resent with growing full-jitter backoff; the last error is reported', async () => {
    const s = await serve((_request, response) => json(response, 503, { detail: 'down' }));
    const { client: c, sleeps } = connect(s.url, { retry: { baseDelayMs: 100, maxDelayMs: 250 }, random: () => 0.999 });
    const error = await c.getImportStatus('ACME', 'S-1').catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ServerError);
    expect(error).toMatchObject({ status: 503, attempts: 4 });
    expect(sleeps).toEqual([99, 199, 249]);
    expect(s.rest()).toHaveLength(4);
  });

  it('429 waits the Retry-After, then succeeds', async () => {
    let calls = 0;
    const s = await serve((_request, response) => {
      calls += 1;
      if (calls === 1) json(response, 429, { detail: 'slow down' }, { 'retry-after': '2' });
      else json(response, 200, status);
    });
    const { client: c, events } = connect(s.url);
    expect(await c.getImportStatus('ACME', 'S-1')).toMatchObject({ status: 'PENDING' });
    expect(events).toContainEqual({ type: 'rate_limited', endpoint: 'getImportStatus', retryAfterMs: 2000 });
    expect(events).toContainEqual(expect.objectContaining({ type: 'retry', delayMs: 2000, code: 'rate_limited' }));
    expect(events).toContainEqual(
      expect.objectContaining({
        type: 'limit_changed',
        reason: 'rate_limited',
        concurrencyLimit: 4,
        previousConcurrencyLimit: 8,
      }),
    );
  });

  it('a body that does not match the spec is an UnexpectedResponseError naming the field', async () => {
    const s = await serve((request, response) => {
      if (request.url.includes('/accounts/')) json(response, 200, { ...status, status: 7 });
      else {
        // Not JSON, and not a web page either (that is an HtmlAnswerError: client-answers.test.ts).
        response.writeHead(200, { 'content-type': 'text/plain' });
        response.end('login required');
      }
    });
    const { client: c } = connect(s.url);
    const shape = await c.getImportStatus('ACME', 'U-1').catch((caught: unknown) => caught);
    expect(shape).toBeInstanceOf(UnexpectedResponseError);
    expect(shape).toMatchObject({ field: 'status', endpoint: 'getImportStatus' });
    expect((shape as Error).message).toMatch(
      /^getImportStatus: unexpected answer \(HTTP 200\) from \/v2\/data-import\/accounts\/ACME\/U-1\/ at "status": .*; the body: "\{\\"status\\":7,/,
    );
    const text = await c.listAllImports('ACME', listItems).catch((caught: unknown) => caught);
    expect(text).toMatchObject({ code: 'unexpected_answer', field: '' });
    expect(s.rest()).toHaveLength(2);
  });

  it("a v1 status with a null platform account number reads as the spec's empty string (no account yet)", async () => {
    const s = await serve((_request, response) =>
      json(response, 200, { status: 'UNKNOWN', platform_account_number: null }),
    );
    const { client: c } = connect(s.url);
    expect(await c.getTransferStatus('ACME', 'N-2')).toEqual({ status: 'UNKNOWN', platform_account_number: '' });
  });

  it('a status word the spec does not give is an answer, not an error (the enum may grow)', async () => {
    const s = await serve((_request, response) => json(response, 200, { ...status, status: 'QUEUED_FOR_REVIEW' }));
    const { client: c } = connect(s.url);
    expect(await c.getImportStatus('ACME', 'W-1')).toMatchObject({ status: 'QUEUED_FOR_REVIEW' });
  });

  it('a cut-off JSON body is unexpected_answer naming status, path and an escaped excerpt; not resent', async () => {
    const s = await serve((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end('{"status": "COMPLETED", "platform_account_number": "A-1\u001b]52;c;aGk=\u0007');
    });
    const { client: c } = connect(s.url);
    const error = await c.getTransferStatus('ACME', 'C-1').catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: 'unexpected_answer', status: 200, field: '' });
    const message = (error as Error).message;
    expect(message).toContain(
      'getTransferStatus: unexpected answer (HTTP 200) from /v1/data-import/account-transfer-status/ACME/C-1/ at ' +
        '"(body)": the body is not JSON; the body: "{\\"status\\": \\"COMPLETED\\", \\"platform_account_number\\": ' +
        '\\"A-1\\u001b]52;c;aGk=\\u0007"',
    );
    expect(message).not.toMatch(/[\u0000-\u001f]/);
    expect(s.rest()).toHaveLength(1);
  });

  it('a token that is a number is unexpected_answer at its field, naming the path; the token fields are not quoted', async () => {
    const now = Math.floor(Date.now() / 1000);
    const odd = createServer((_request, response) =>
      json(response, 200, {
        data: {
          obtainKrakenToken: {
            token: 12345,
            payload: { iat: now, exp: now + 3600 },
            refreshToken: 'refresh-secret-of-the-odd-answer',
            refreshExpiresIn: now + 86400,
          },
        },
      }),
    );
    await new Promise<void>((resolve) => odd.listen(0, '127.0.0.1', resolve));
    try {
      const { client: c } = connect(`http://127.0.0.1:${(odd.address() as AddressInfo).port}`, { maxRetries: 0 });
      const error = await c.getImportStatus('ACME', 'N-1').catch((caught: unknown) => caught);
      expect(error).toMatchObject({ code: 'unexpected_answer', status: 200, field: 'data.obtainKrakenToken.token' });
      const message = (error as Error).message;
      expect(message).toMatch(
        /^obtainToken: unexpected answer \(HTTP 200\) from \/v1\/graphql\/ at "data\.obtainKrakenToken\.token": /,
      );
      expect(message).toContain('\\"token\\":\\"[REDACTED]\\"');
      expect(message).not.toContain('refresh-secret-of-the-odd-answer');
    } finally {
      odd.closeAllConnections();
      await new Promise((resolve) => odd.close(resolve));
    }
  });

  it('an unknown word where the spec has an enum that cannot grow (a transaction outcome) is unexpected_answer', async () => {
    const s = await serve((_request, response) =>
      json(response, 201, { results: [{ status: 'TRANSACTION_MAYBE_ADDED', transaction_data: { id: 't-1' } }] }),
    );
    const { client: c } = connect(s.url);
    const error = await c
      .createTransactions({ import_supplier: 'ACME', external_account_number: 'X-1', transactions: [] })
      .catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: 'unexpected_answer', status: 201, field: 'results.0.status' });
    expect((error as Error).message).toContain(
      'createTransactions: unexpected answer (HTTP 201) from /v1/data-import/transactions/create/?' +
        'check_previously_added=true&force_add_to_current_statement=true at "results.0.status": ',
    );
    expect((error as Error).message).toContain('TRANSACTION_MAYBE_ADDED');
  });

  it("a 200 whose body is an error body gives the service's own words", async () => {
    const s = await serve((_request, response) =>
      json(response, 200, { detail: 'Import supplier ACME is under maintenance.', code: 'maintenance' }),
    );
    const { client: c } = connect(s.url);
    const error = await c.getImportStatus('ACME', 'E-1').catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: 'unexpected_answer', status: 200 });
    expect((error as Error).message).toContain(
      'an error body in a success (HTTP 200), the service saying "Import supplier ACME is under maintenance." ' +
        '("maintenance")',
    );
  });
});

describe('cancellation', () => {
  it('an aborted signal stops the wait to resend; the error says the last attempt may have been applied', async () => {
    const s = await serve((_request, response) => json(response, 503, { detail: 'down' }));
    const controller = new AbortController();
    // The wait to resend never ends by itself: only the abort, once the resend is decided, ends the call.
    const { client: c } = connect(s.url, {
      sleep: () => new Promise<void>(() => undefined),
      retry: { baseDelayMs: 60_000, maxDelayMs: 60_000 },
      random: () => 0.99,
      onEvent: (event) => {
        if (event.type === 'retry') controller.abort();
      },
    });
    const error = await c
      .createAccount(account('X-1'), { signal: controller.signal })
      .catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: 'aborted', ambiguous: true, attempts: 1, status: 503 });
    expect(s.rest()).toHaveLength(1);
  });

  it('a closed client fails calls at once', async () => {
    const s = await serve((_request, response) => json(response, 200, status));
    const { client: c } = connect(s.url);
    await c.close();
    await expect(c.getImportStatus('ACME', 'Z')).rejects.toMatchObject({ code: 'network_error', phase: 'not_sent' });
    expect(s.received).toHaveLength(0);
  });
});

describe('authentication', () => {
  it('a token that cannot be had is retried by the token call alone, not again per request', async () => {
    const s = await serve((_request, response) => json(response, 200, status));
    const port = Number(new URL(s.url).port);
    await s.close();
    server = undefined;
    const { client: c } = connect(`http://127.0.0.1:${port}`);
    const error = await c.getImportStatus('ACME', 'A-0').catch((caught: unknown) => caught);
    // Refused before any answer: no resend can mend it (connection-errors.ts), so the token call does not retry either.
    expect(error).toMatchObject({ code: 'connection_refused', endpoint: 'obtainToken', fatal: true, attempts: 1 });
    expect(s.received).toHaveLength(0);
  });

  it('on a 401: renews the token once and resends with the new one', async () => {
    let calls = 0;
    const s = await serve((_request, response) => {
      calls += 1;
      if (calls === 1) json(response, 401, { detail: 'Signature of the token has expired.' });
      else json(response, 200, status);
    });
    const { client: c, events } = connect(s.url);
    expect(await c.getImportStatus('ACME', 'A-1')).toMatchObject({ status: 'PENDING' });
    const [first, second] = s.rest();
    expect(first?.headers.authorization).toMatch(/sig-1$/);
    expect(second?.headers.authorization).toMatch(/sig-2$/);
    expect(s.received.filter((request) => request.url === '/v1/graphql/')).toHaveLength(2);
    expect(
      events
        .filter((event) => event.type === 'token_renewed')
        .map((event) => event.type === 'token_renewed' && event.reason),
    ).toEqual(['initial', 'unauthorized']);
    // the renewal used the refresh token, the key went out once
    expect(
      JSON.parse(s.received.filter((request) => request.url === '/v1/graphql/')[1]?.body ?? '{}').variables.input,
    ).toEqual({ refreshToken: 'refresh-1-abcdef' });
  });

  it('a 401 with the fresh token too: AuthenticationError, fatal, after exactly two requests', async () => {
    const s = await serve((_request, response) => json(response, 401, { detail: 'Invalid token.' }));
    const { client: c } = connect(s.url);
    const error = await c.createAccount(account('A-2')).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(AuthenticationError);
    expect(error).toMatchObject({ fatal: true, status: 401, exitCode: 3 });
    expect(s.rest()).toHaveLength(2);
  });

  it('header forms: bare token (default), Token <token> and JWT <token>', async () => {
    const s = await serve((_request, response) => json(response, 200, status));
    const bare = connect(s.url);
    await bare.client.getImportStatus('ACME', 'H-1');
    await bare.client.close();
    const prefixed = connect(s.url, { headerForm: 'token' });
    await prefixed.client.getImportStatus('ACME', 'H-1');
    await prefixed.client.close();
    const jwt = connect(s.url, { headerForm: 'jwt' });
    await jwt.client.getImportStatus('ACME', 'H-1');
    const [one, two, three] = s.rest();
    expect(one?.headers.authorization).toMatch(/^[\w-]+\.[\w-]+\.sig-1$/);
    expect(two?.headers.authorization).toMatch(/^Token [\w-]+\.[\w-]+\.sig-2$/);
    expect(three?.headers.authorization).toMatch(/^JWT [\w-]+\.[\w-]+\.sig-3$/);
  });
});
