import { afterEach, describe, expect, it } from 'vitest';
import { ConnectionFailedError, HtmlAnswerError, NetworkError, UnexpectedResponseError } from '../../src/api/errors.js';
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
        response.writeHead(request.url.endsWith('/text-error/') ? 502 : 200, { 'content-type': 'text/plain' });
        response.end('Bad gateway');
      }
    });
    const t = open(server.url);
    expect((await t.send({ endpoint: 'e', method: 'GET', path: '/empty/', headers: {} })).body).toBeUndefined();
    expect(await t.send({ endpoint: 'e', method: 'GET', path: '/text-error/', headers: {} })).toMatchObject({
      status: 502,
      body: undefined,
    });
    await expect(t.send({ endpoint: 'e', method: 'GET', path: '/text/', headers: {} })).rejects.toBeInstanceOf(
      UnexpectedResponseError,
    );
  });

  it.each([
    ['a 200 login page', 200, 'text/html; charset=utf-8', '<html><head><title>Sign in</title></head></html>'],
    ['a 502 page of a web server', 502, 'text/html', '<html><body><h1>502 Bad Gateway</h1></body></html>'],
    ['a 404 page of a wrong base URL', 404, 'application/xhtml+xml', '<html><title>Not found</title></html>'],
    ['a page sent as text/plain', 200, 'text/plain', '\n<!DOCTYPE html><html><title>Proxy notice</title></html>'],
  ])('%s is an HtmlAnswerError, fatal, naming the URL and the content type', async (_name, status, type, page) => {
    server = await startScriptedServer((_request, response) => {
      response.writeHead(status, { 'content-type': type });
      response.end(page);
    });
    const error = await open(server.url)
      .send({ endpoint: 'getImportStatus', method: 'GET', path: '/v2/x/', headers: {} })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(HtmlAnswerError);
    expect(error).toMatchObject({ code: 'html_answer', fatal: true, status });
    expect((error as Error).message).toContain(`getImportStatus: ${server.url}/prefix/v2/x/ answered HTTP ${status}`);
    expect((error as Error).message).toContain(`Content-Type: ${type}`);
  });

  it('a list answered with a page: never handed to the list reader', async () => {
    server = await startScriptedServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/html' });
      response.end('<html><title>Sign in</title></html>');
    });
    const readBody = () => ({
      write: () => {
        throw new Error('the reader must not see a page');
      },
      end: () => undefined,
    });
    const error = await open(server.url)
      .send({ endpoint: 'listAllImports', method: 'GET', path: '/v1/l/', headers: {} }, readBody)
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(HtmlAnswerError);
    expect((error as Error).message).toContain('title "Sign in"');
  });

  it('a body beyond the limit is refused, not buffered', async () => {
    server = await startScriptedServer((_request, response) => json(response, 200, { items: 'x'.repeat(100_000) }));
    const error = await open(server.url, 10_000)
      .send({ endpoint: 'listAllImports', method: 'GET', path: '/big/', headers: {} })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(UnexpectedResponseError);
    expect((error as Error).message).toMatch(
      /listAllImports.*longer than the 10,000 bytes the tool reads of an answer/,
    );
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

  it('https to a port that speaks plain http, before any answer: fatal, naming the scheme and the port', async () => {
    server = await startScriptedServer((_request, response) => json(response, 200, {}));
    const error = await open(server.url.replace('http:', 'https:'))
      .send({ endpoint: 'e', method: 'GET', path: '/x/', headers: {} })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ConnectionFailedError);
    expect(error).toMatchObject({ code: 'tls_handshake_failed', fatal: true });
    expect((error as Error).message).toContain('check the scheme and the port of the base URL https://127.0.0.1:');
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
