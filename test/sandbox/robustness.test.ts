import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROUTES } from '../../src/sandbox/routes.js';
import { account, openSession, type Session } from './helpers.js';

// "The server never crashes or hangs on any input": garbage to every endpoint, then a normal
// request still works.

let s: Session;
beforeAll(async () => {
  s = await openSession({ maxBodyBytes: 4096 });
});
afterAll(() => s.sandbox.close());

interface RawAnswer {
  status: number;
  body: any;
  headers: Record<string, string | string[] | undefined>;
}

function raw(
  method: string,
  path: string,
  body: Buffer | string | undefined,
  headers: Record<string, string>,
): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const url = new URL(s.sandbox.url);
    const req = httpRequest(
      { host: url.hostname, port: url.port, method, path, headers: { authorization: s.token, ...headers } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let parsed: unknown = text;
          try {
            parsed = JSON.parse(text);
          } catch {
            // keep text
          }
          resolve({ status: res.statusCode ?? 0, body: parsed, headers: res.headers });
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const json = { 'content-type': 'application/json' };
const pathOf = (pattern: string) => pattern.replace(/:[a-z]+/g, 'ACME');
const postRoutes = ROUTES.filter((route) => route.method === 'POST').map((route) => pathOf(route.pattern));

async function stillServes(): Promise<void> {
  expect((await s.post('/v2/data-import/accounts/validate/', { payload: account('alive') })).status).toBe(200);
}

describe('garbage to every POST endpoint', () => {
  const garbage: Array<[string, Buffer | string, Record<string, string>, number]> = [
    ['malformed JSON', '{"payload": ', json, 400],
    ['invalid UTF-8', Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x3a, 0x31, 0x7d]), json, 400],
    ['wrong content type', '{}', { 'content-type': 'text/plain' }, 415],
    ['no content type', '{}', {}, 415],
    ['a body over the limit', `{"a":"${'x'.repeat(5000)}"}`, json, 413],
  ];
  for (const path of postRoutes) {
    it.each(garbage)(`${path}: %s gets a clear error, and the server goes on`, async (_name, body, headers, status) => {
      const answer = await raw('POST', path, body, headers);
      expect(answer.status).toBe(status);
      expect(answer.headers['content-type']).toBe('application/json');
      if (path.includes('graphql') && status === 400) expect(answer.body.detail ?? answer.body.errors).toBeDefined();
      else expect(typeof answer.body.detail).toBe('string');
      await stillServes();
    });
  }

  it.each(postRoutes.filter((path) => !path.includes('graphql')))(
    '%s: JSON of the wrong shape (array, number, null, deep nesting) gets 400 with errors',
    async (path) => {
      const deep = `{"import_supplier": ${'['.repeat(1500)}${']'.repeat(1500)}}`;
      for (const body of ['[]', '42', 'null', '"x"', deep, '{"__proto__": {"polluted": true}}']) {
        const answer = await raw('POST', path, body, json);
        expect(answer.status, body.slice(0, 20)).toBe(400);
        expect(answer.body.errors ?? answer.body.detail).toBeDefined();
      }
      expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
      await stillServes();
    },
  );

  it('refuses JSON nested deeper than 64 levels before parsing it (a million levels cannot overflow anything)', async () => {
    const big = await openSession();
    try {
      const deep = '['.repeat(1_000_000) + ']'.repeat(1_000_000);
      const body = `{"payload": {"import_supplier": "ACME", "external_account_number": "E", "metadata": [{"key": "k", "value": {"a": ${deep}}}]}}`;
      const answer = await fetch(`${big.sandbox.url}/v2/data-import/accounts/`, {
        method: 'POST',
        headers: { authorization: big.token, ...json },
        body,
      });
      expect(answer.status).toBe(400);
      expect(((await answer.json()) as { code: string }).code).toBe('parse_error');
      expect(big.sandbox.inspect.account('ACME', 'E')).toBeUndefined();
    } finally {
      await big.sandbox.close();
    }
  });

  it('an empty body reads as {} and names the missing fields', async () => {
    const answer = await raw('POST', '/v1/data-import/notes/create/', '', json);
    expect(answer.status).toBe(400);
    expect(answer.body.errors.map((item: { attr: string }) => item.attr)).toEqual(
      expect.arrayContaining(['import_supplier', 'external_account_number', 'notes']),
    );
  });
});

describe('paths and methods', () => {
  it('answers 404 for an unknown path, and hints at the trailing slash when it is missing', async () => {
    expect((await raw('GET', '/v3/nothing/', undefined, {})).status).toBe(404);
    const noSlash = await raw('POST', '/v2/data-import/accounts', '{}', json);
    expect(noSlash.status).toBe(404);
    expect(noSlash.body.detail).toContain('end with a slash');
    expect((await raw('GET', '/v2/data-import/accounts/%E0%A4%A/x/', undefined, {})).status).toBe(404);
  });

  it('answers 405 with Allow for a wrong method on every endpoint', async () => {
    for (const route of ROUTES) {
      const method = route.method === 'GET' ? 'DELETE' : 'PUT';
      const answer = await raw(method, pathOf(route.pattern), undefined, {});
      expect(answer.status, route.pattern).toBe(405);
      expect(answer.headers['allow']).toContain(route.method);
    }
    expect((await raw('GET', '/v2/data-import/accounts/validate/', undefined, {})).headers['allow']).toBe('POST');
  });

  it('survives a connection that sends no HTTP at all', async () => {
    const url = new URL(s.sandbox.url);
    const reply = await new Promise<string>((resolve) => {
      const socket = connect(Number(url.port), url.hostname, () => socket.write('GARBAGE\u0000\r\n\r\n'));
      let text = '';
      socket.on('data', (chunk) => (text += chunk.toString()));
      socket.on('close', () => resolve(text));
      socket.on('error', () => resolve(text));
    });
    expect(reply).toMatch(/^HTTP\/1.1 400/);
    await stillServes();
  });

  it('survives a client that disconnects halfway through its body', async () => {
    const url = new URL(s.sandbox.url);
    await new Promise<void>((resolve) => {
      const socket = connect(Number(url.port), url.hostname, () => {
        socket.write(
          `POST /v2/data-import/accounts/ HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\nAuthorization: ${s.token}\r\n\r\n{"payload":`,
        );
        setTimeout(() => socket.destroy(), 50);
      });
      socket.on('close', () => resolve());
    });
    await stillServes();
    expect(s.sandbox.inspect.inFlight()).toBe(0);
  });
});
