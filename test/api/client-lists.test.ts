import type { ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import {
  UnexpectedResponseError,
  createImportServiceClient,
  type ListCollector,
  type ServiceClient,
} from '../../src/api/index.js';
import type { ListItem } from '../../src/schema/index.js';
import { listItems } from './helpers/list-items.js';
import { json, startScriptedServer, type Script, type ScriptedServer } from './helpers/scripted-server.js';

// The list endpoints read as their body arrives (docs/service.md "Status and list endpoints"): bare or wrapped once
// more, each entry validated on its own, a body that is not such a list the same UnexpectedResponseError as a body
// parsed whole, and a resend after a partial read counted once.

let server: ScriptedServer | undefined;
let client: ServiceClient | undefined;
afterEach(async () => {
  await client?.close();
  await server?.close();
  client = undefined;
  server = undefined;
});

async function connect(script: Script): Promise<ServiceClient> {
  server = await startScriptedServer(script);
  client = createImportServiceClient({
    baseUrl: server.url,
    credentials: { apiKey: 'api-key-for-tests' },
    maxRetries: 3,
    sleep: async () => {},
  });
  return client;
}

const entry = (n: number, imported = true): ListItem => ({
  external_account_number: `E-${n}`,
  platform_account_number: imported ? `A-${n}` : null,
  account_created_at: imported ? '2026-11-22T08:00:00+00:00' : null,
});

/** Writes the body in small pieces (tokens split across chunks), with a pause so they arrive apart. */
async function dribble(response: ServerResponse, body: string, piece = 7): Promise<void> {
  response.writeHead(200, { 'content-type': 'application/json' });
  for (let at = 0; at < body.length; at += piece) {
    response.write(body.slice(at, at + piece));
    if (at % (piece * 20) === 0) await new Promise((resolve) => setImmediate(resolve));
  }
  response.end();
}

/** Counts entries and keeps their numbers; notes how many collectors were opened (one per attempt). */
function counting() {
  const opened = { count: 0 };
  const collect = (): ListCollector<{ count: number; numbers: string[] }> => {
    let count = 0;
    const numbers: string[] = [];
    opened.count += 1;
    return {
      add: (item) => {
        count += 1;
        numbers.push(item.external_account_number);
      },
      result: () => ({ count, numbers }),
    };
  };
  return { opened, collect };
}

const isListPath = (url: string): boolean => url.includes('account-import-processes');

describe('list endpoints read as they arrive', () => {
  it('a bare array, in pieces: every entry in order, validated', async () => {
    const entries = [entry(1), entry(2, false), { ...entry(3), extra_field: { nested: [1, 2] } }];
    const c = await connect((request, response) => {
      if (isListPath(request.url)) void dribble(response, JSON.stringify(entries));
      else json(response, 404, {});
    });
    expect(await c.listAllImports('ACME', listItems)).toEqual(entries);
  });

  it('the real platform wrapping once more ([[...]]), in several inner arrays: flattened', async () => {
    const c = await connect((request, response) => {
      if (isListPath(request.url)) void dribble(response, JSON.stringify([[entry(1), entry(2)], [], [entry(3)]]), 5);
      else json(response, 404, {});
    });
    const items = await c.listImportedAccounts('ACME', listItems);
    expect(items.map((item) => item.external_account_number)).toEqual(['E-1', 'E-2', 'E-3']);
  });

  it('empty lists, bare and wrapped; a 404 on the imported list is an empty collector', async () => {
    const bodies = ['[]', ' [ [ ] ] '];
    const c = await connect((request, response) => {
      if (request.url.includes('/imported-')) return json(response, 404, { detail: 'none' });
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(bodies.shift());
    });
    expect(await c.listAllImports('ACME', listItems)).toEqual([]);
    expect(await c.listPendingImports('ACME', listItems)).toEqual([]);
    expect(await c.listImportedAccounts('ACME', listItems)).toEqual([]);
  });

  it.each([
    ['a truncated body', '[{"external_account_number": "E-1", "platform_acc', ''],
    ['trailing garbage', '[] x', ''],
    ['an empty body', '', ''],
    ['not an array', '{"external_account_number": "E-1"}', ''],
    ['an entry that is not an object', '[1]', '0'],
    [
      'an invalid entry',
      JSON.stringify([entry(1), { ...entry(2), platform_account_number: 7 }]),
      '1.platform_account_number',
    ],
    [
      'a wrapped invalid entry',
      JSON.stringify([[entry(1)], [{ platform_account_number: null }]]),
      '1.external_account_number',
    ],
    ['bare and wrapped entries mixed', JSON.stringify([[entry(1)], entry(2)]), '1'],
  ])('%s is an UnexpectedResponseError naming the endpoint, not retried', async (_name, body, field) => {
    const c = await connect((request, response) => {
      if (!isListPath(request.url)) return json(response, 404, {});
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(body);
    });
    const error = await c.listAllImports('ACME', listItems).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(UnexpectedResponseError);
    expect(error).toMatchObject({ endpoint: 'listAllImports', status: 200, field, code: 'unexpected_answer' });
    expect((error as Error).message).toMatch(
      /^listAllImports: unexpected answer \(HTTP 200\) from \/v1\/data-import\/all-account-import-processes\/ACME\/ at "/,
    );
    expect(server?.rest()).toHaveLength(1);
  });

  it('a connection lost half-way is resent; the answer counts each entry once (a fresh collector per attempt)', async () => {
    const entries = Array.from({ length: 5000 }, (_, n) => entry(n));
    const body = JSON.stringify(entries);
    let calls = 0;
    const c = await connect((request, response, socket) => {
      if (!isListPath(request.url)) return json(response, 404, {});
      calls += 1;
      if (calls === 1) {
        // Headers and half the body, then the connection drops.
        response.writeHead(200, { 'content-type': 'application/json', 'content-length': String(body.length) });
        response.write(body.slice(0, body.length / 2), () => setTimeout(() => socket.destroy(), 20));
        return;
      }
      json(response, 200, entries);
    });
    const { opened, collect } = counting();
    const answer = await c.listAllImports('ACME', collect);
    expect(calls).toBe(2);
    expect(opened.count).toBe(2);
    expect(answer.count).toBe(5000);
    expect(new Set(answer.numbers).size).toBe(5000);
  });
});

describe('a collector that throws', () => {
  it('fails the call with an UnexpectedResponseError naming it, not retried as a network failure', async () => {
    const c = await connect((request, response) => {
      if (isListPath(request.url)) json(response, 200, [entry(1)]);
      else json(response, 404, {});
    });
    const error = await c
      .listAllImports('ACME', () => ({
        add: () => {
          throw new RangeError('collector broke');
        },
        result: () => 0,
      }))
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(UnexpectedResponseError);
    expect((error as Error).message).toMatch(/listAllImports.*RangeError: collector broke/);
    expect(server?.rest()).toHaveLength(1);
  });
});
