import { afterEach, describe, expect, it } from 'vitest';
import { ConnectionFailedError, NetworkError, UnexpectedResponseError } from '../../src/api/errors.js';
import { Redactor } from '../../src/api/redact.js';
import { Transport } from '../../src/api/transport.js';
import { json, startScriptedServer, type ScriptedServer } from './helpers/scripted-server.js';

let server: ScriptedServer | undefined;
let transport: Transport | undefined;
afterEach(async () => {
  await transport?.close();
  await server?.close();
});

function open(url: string, maxResponseBytes?: number): Transport {
  transport = new Transport({
    baseUrl: new URL(`${url}/prefix/`),
    connections: 2,
    connectTimeoutMs: 1000,
    headersTimeoutMs: 1000,
    bodyTimeoutMs: 1000,
    keepAliveTimeoutMs: 1000,
    requestTimeoutMs: 5000,
    redactor: new Redactor(),
    ...(maxResponseBytes === undefined ? {} : { maxResponseBytes }),
  });
  return transport;
}

describe('Transport', () => {
  it('sends under the base URL path; reads status, lower-case headers and JSON', async () => {
    server = await startScriptedServer((request, response) =>
      json(response, 201, { echo: request.url, method: request.method, body: request.body }, { 'Retry-After': '3' }),
    );
    const answer = await open(server.url).send({
      endpoint: 'e',
      method: 'POST',
      path: '/v1/x/?a=1',
      headers: { 'content-type': 'application/json' },
      body: '{"k":1}',
    });
    expect(answer).toMatchObject({
      status: 201,
      headers: { 'retry-after': '3' },
      body: { echo: '/prefix/v1/x/?a=1', method: 'POST', body: '{"k":1}' },
    });
  });

  it('an empty body is undefined; a non-JSON error body is undefined; a non-JSON success is unexpected', async () => {
    server = await startScriptedServer((request, response) => {
      if (request.url.endsWith('/empty/')) json(response, 200, undefined);
      else {
        response.writeHead(request.url.endsWith('/html-error/') ? 502 : 200, { 'content-type': 'text/html' });
        response.end('<html></html>');
      }
    });
    const t = open(server.url);
    expect((await t.send({ endpoint: 'e', method: 'GET', path: '/empty/', headers: {} })).body).toBeUndefined();
    expect(await t.send({ endpoint: 'e', method: 'GET', path: '/html-error/', headers: {} })).toMatchObject({
      status: 502,
      body: undefined,
    });
    await expect(t.send({ endpoint: 'e', method: 'GET', path: '/html/', headers: {} })).rejects.toBeInstanceOf(
      UnexpectedResponseError,
    );
  });

  it('a body beyond the limit is refused, not buffered', async () => {
    server = await startScriptedServer((_request, response) => json(response, 200, { items: 'x'.repeat(100_000) }));
    const error = await open(server.url, 10_000)
      .send({ endpoint: 'listAllImports', method: 'GET', path: '/big/', headers: {} })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(UnexpectedResponseError);
    expect((error as Error).message).toMatch(/listAllImports.*larger than 10000 bytes/);
  });

  it('a reset after the request arrived is "sent"', async () => {
    server = await startScriptedServer((_request, _response, socket) => socket.destroy());
    const t = open(server.url);
    await expect(t.send({ endpoint: 'e', method: 'POST', path: '/x/', headers: {}, body: '{}' })).rejects.toMatchObject(
      { phase: 'sent', ambiguous: true },
    );
  });

  it('a refused connection before any answer is fatal, naming the address and the base URL', async () => {
    server = await startScriptedServer((_request, response) => json(response, 200, {}));
    const url = server.url;
    await server.close();
    server = undefined;
    const error = await open(url)
      .send({ endpoint: 'e', method: 'GET', path: '/x/', headers: {} })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ConnectionFailedError);
    expect(error).toMatchObject({ code: 'connection_refused', fatal: true, phase: 'not_sent', ambiguous: false });
    expect((error as Error).message).toContain(`${new URL(url).host} refused the connection (ECONNREFUSED)`);
  });

  it('the service restarting later in a run: its refused connection stays an ordinary network error', async () => {
    server = await startScriptedServer((_request, response) => json(response, 200, {}));
    const t = open(server.url);
    expect((await t.send({ endpoint: 'e', method: 'GET', path: '/x/', headers: {} })).status).toBe(200);
    await server.close();
    server = undefined;
    const error = await t
      .send({ endpoint: 'e', method: 'POST', path: '/x/', headers: {}, body: '{}' })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(NetworkError);
    expect(error).toMatchObject({ phase: 'not_sent', ambiguous: false, retryable: true, fatal: false });
  });
});
