import { afterEach, describe, expect, it } from 'vitest';
import { NoAnswerError, TimeoutError, UnexpectedResponseError } from '../../src/api/errors.js';
import { Redactor } from '../../src/api/redact.js';
import { Transport, type TransportOptions } from '../../src/api/transport.js';
import { json, startScriptedServer, type ScriptedServer } from './helpers/scripted-server.js';

// Bounds on what the service answers (docs/api-client.md "Time-outs", docs/limits.md "Limits on what the service
// answers"): before the service has answered any request, a request without a whole answer within the first answer's
// bound is fatal, naming what did not answer; after, it is an ordinary time-out; requests waiting long are counted on an
// injected clock; a success body past its ceiling is refused, on its Content-Length or as it comes.

let server: ScriptedServer | undefined;
let transport: Transport | undefined;
afterEach(async () => {
  await transport?.destroy();
  await server?.close();
  [server, transport] = [undefined, undefined];
});

function open(url: string, options: Partial<TransportOptions> = {}): Transport {
  transport = new Transport({
    baseUrl: new URL(url),
    connections: 4,
    connectTimeoutMs: 5_000,
    headersTimeoutMs: 60_000,
    bodyTimeoutMs: 60_000,
    keepAliveTimeoutMs: 1_000,
    requestTimeoutMs: 60_000,
    redactor: new Redactor(),
    tokenEndpoint: 'obtainToken',
    ...options,
  });
  return transport;
}

const get = (endpoint: string, path: string) => ({ endpoint, method: 'GET' as const, path, headers: {} });

describe('the first answer', () => {
  it('a request never answered before any answer: NoAnswerError, fatal, naming the URL and "no head"', async () => {
    server = await startScriptedServer(() => undefined);
    const error = await open(server.url, { firstAnswerMs: 300 })
      .send(get('getImportStatus', '/v2/data-import/accounts/S/A-1/'))
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(NoAnswerError);
    expect(error).toMatchObject({ code: 'no_answer', fatal: true, ambiguous: true });
    const message = (error as Error).message;
    expect(message).toContain(`${server.url}/v2/data-import/accounts/S/A-1/ gave no whole answer within 0.3 s`);
    expect(message).toContain("the request was sent; no answer's head came");
  });

  it('an answer trickling a byte at a time before any answer: NoAnswerError naming the status and the bytes that came', async () => {
    server = await startScriptedServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.write('{');
      response.write('"');
    });
    const error = await open(server.url, { firstAnswerMs: 300 })
      .send(get('getImportStatus', '/v2/x/'))
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(NoAnswerError);
    expect((error as Error).message).toContain('HTTP 200 came, and 2 bytes of its body, not the whole body');
  });

  it('the bound met once ends every request in flight, and any later one at once, alike', async () => {
    server = await startScriptedServer(() => undefined);
    const t = open(server.url, { firstAnswerMs: 400 });
    const first = t.send(get('getImportStatus', '/a/')).catch((caught: unknown) => caught);
    const second = t.send(get('getImportStatus', '/b/')).catch((caught: unknown) => caught);
    expect(await first).toBeInstanceOf(NoAnswerError);
    expect(await second).toBeInstanceOf(NoAnswerError);
    const arrived = server.received.length;
    const later = await t.send(get('getImportStatus', '/c/')).catch((caught: unknown) => caught);
    expect(later).toBeInstanceOf(NoAnswerError);
    expect((later as Error).message).toContain('gave no whole answer within 0.4 s');
    expect(server.received.length).toBe(arrived);
  });

  it('the token mutation answered does not count: the next request never answered is still fatal', async () => {
    server = await startScriptedServer(() => undefined);
    const t = open(server.url, { firstAnswerMs: 300 });
    const token = await t.send({ ...get('obtainToken', '/v1/graphql/'), method: 'POST', body: '{}' });
    expect(token.status).toBe(200);
    await expect(t.send(get('getImportStatus', '/v2/x/'))).rejects.toBeInstanceOf(NoAnswerError);
  });

  it('once the service has answered, a request past its deadline is an ordinary time-out (resent by the policy)', async () => {
    server = await startScriptedServer((request, response) => {
      if (request.url === '/answered/') json(response, 200, {});
    });
    const t = open(server.url, { firstAnswerMs: 300, requestTimeoutMs: 400 });
    expect((await t.send(get('getImportStatus', '/answered/'))).status).toBe(200);
    const error = await t.send(get('getImportStatus', '/hangs/')).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(TimeoutError);
    expect(error).toMatchObject({ code: 'timeout', fatal: false, retryable: true });
  });

  it("a list's answer read as it arrives: its head is the service's first answer, its body may take longer", async () => {
    server = await startScriptedServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.write('[');
      setTimeout(() => response.end(']'), 600);
    });
    const chunks: string[] = [];
    const reader = () => ({ write: (chunk: Buffer) => void chunks.push(chunk.toString()), end: () => undefined });
    const answer = await open(server.url, { firstAnswerMs: 300 }).send(get('listAllImports', '/v1/l/'), reader);
    expect(answer.status).toBe(200);
    expect(chunks.join('')).toBe('[]');
  });

  it('counts the requests waiting longer than a bound, on its own clock', async () => {
    let now = 1_000;
    let arrived = 0;
    let onArrival: () => void = () => undefined;
    server = await startScriptedServer(() => {
      arrived += 1;
      onArrival();
    });
    const t = open(server.url, { now: () => now });
    const both = new Promise<void>((resolve) => (onArrival = () => arrived === 2 && resolve()));
    const first = t.send(get('getImportStatus', '/a/')).catch(() => undefined);
    now += 30_000;
    const second = t.send(get('getImportStatus', '/b/')).catch(() => undefined);
    await both;
    expect(t.waitingLongerThan(60_000)).toBe(0);
    now += 31_000;
    expect(t.waitingLongerThan(60_000)).toBe(1);
    now += 30_000;
    expect(t.waitingLongerThan(60_000)).toBe(2);
    await t.destroy();
    await Promise.all([first, second]);
    expect(t.waitingLongerThan(0)).toBe(0);
  });
});

describe('the ceiling on a success body', () => {
  it('a status answer declaring 200 MB is refused on its head, naming the ceiling and the size declared', async () => {
    let written = 0;
    server = await startScriptedServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json', 'content-length': String(200_000_000) });
      written += 1;
      response.write('[');
    });
    const error = await open(server.url)
      .send(get('getImportStatus', '/v2/x/'))
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(UnexpectedResponseError);
    expect((error as Error).message).toContain(
      'getImportStatus: unexpected answer (HTTP 200) at "(body)": the answer is longer than the 1,048,576 bytes the ' +
        'tool reads of an answer to this request (it declares 200,000,000 bytes (Content-Length))',
    );
    expect(written).toBe(1);
  });

  it('an answer past the ceiling without Content-Length is cut off as it comes; a request with a body may have four times more', async () => {
    server = await startScriptedServer((request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      const size = Number(new URL(request.url, 'http://x').searchParams.get('size'));
      response.end(`"${'x'.repeat(size)}"`);
    });
    const t = open(server.url);
    const error = await t.send(get('getImportStatus', '/v2/x/?size=1100000')).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(UnexpectedResponseError);
    expect((error as Error).message).toMatch(/longer than the 1,048,576 bytes .*\(more than [\d,]+ bytes came\)/);
    const body = JSON.stringify({ notes: 'n'.repeat(100_000) });
    const echoed = await t.send({ ...get('createNotes', '/v1/n/?size=1300000'), method: 'POST', body });
    expect(echoed.status).toBe(200);
  });
});
