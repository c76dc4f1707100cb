import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { openLedgerReader } from '../../src/ledger/index.js';
import { json, startScriptedServer, tokenFor, type ScriptedServer } from '../api/helpers/scripted-server.js';
import { runPush } from './run-push.js';

// No hang (docs/api-client.md "Time-outs" and "Errors no retry can mend"), through the real binary against a local
// server that misbehaves as the test scripts it. Each case used to keep a push running for many minutes with "0
// problems" on its progress line; each now stops the run with exit 3 and says what did not answer or what is wrong.
// A run is bounded (killed) well past what the new code needs, so a regression fails on its exit code, not on
// vitest's time-out.

const BOUND_MS = 60_000;
let root: string;
let server: ScriptedServer | undefined;
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'service-hangs-'));
});
afterEach(async () => {
  await server?.close();
  server = undefined;
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('a token that cannot be an HTTP header', () => {
  it.each([
    ['a line break (CR LF) in the token the service gave', '\r\nX-Injected: 1', 'a line break (CR) at character'],
    ['a euro sign in the token the service gave', '€', 'U+20AC, a character outside visible ASCII at character'],
  ])('%s: exit 3 at once, named, the token not shown; no request leaves', async (_name, tail, said) => {
    server = await startScriptedServer((_request, response) => json(response, 201, {}), {
      token: (seq) => `${tokenFor(seq)}${tail}`,
    });
    const run = await runPush(
      server.url,
      join(root, `token-${tail.length}`),
      { MIGRATE_API_KEY: 'key-123456' },
      ['--concurrency', '2'],
      BOUND_MS,
    );
    expect(run.code, run.stderr).toBe(3);
    expect(run.stderr).toContain('token_unusable');
    expect(run.stderr).toContain(`the token the service gave for the API key`);
    expect(run.stderr).toContain(said);
    expect(run.stderr).not.toContain(tokenFor(1).split('.')[1]);
    expect(server.rest()).toEqual([]);
  });

  it('a token given in MIGRATE_TOKEN that holds a character outside visible ASCII: exit 3, naming where it came from', async () => {
    server = await startScriptedServer((_request, response) => json(response, 201, {}));
    const given = `${tokenFor(7)}€`;
    const run = await runPush(server.url, join(root, 'token-given'), { MIGRATE_TOKEN: given }, [], BOUND_MS);
    expect(run.code, run.stderr).toBe(3);
    expect(run.stderr).toContain('token_unusable');
    expect(run.stderr).toContain('the token given (--token-file, MIGRATE_TOKEN) cannot be sent in an HTTP header');
    expect(run.stderr).not.toContain(given.split('.')[1]);
    expect(server.rest()).toEqual([]);
  });
});

describe('a service that takes requests and never answers them', () => {
  it(
    'answers the token and nothing else: the run stops within a minute by default, exit 3, naming the URL and "no head"',
    {
      timeout: 120_000,
    },
    async () => {
      server = await startScriptedServer(() => undefined);
      const run = await runPush(server.url, join(root, 'silent'), { MIGRATE_API_KEY: 'key-123456' }, [], 100_000);
      expect(run.code, run.stderr).toBe(3);
      expect(run.stderr).toContain('no_answer: createAccount: ');
      expect(run.stderr).toContain(`${server.url}/v2/data-import/accounts/ gave no whole answer within 50 s`);
      expect(run.stderr).toContain("the request was sent; no answer's head came");
      expect(run.stderr).not.toMatch(/internal error|\n\s+at /);
    },
  );

  it('trickles every answer a byte every 2 s: the run stops at --first-answer-timeout, naming the bytes that came', async () => {
    const timers = new Set<NodeJS.Timeout>();
    server = await startScriptedServer((_request, response) => {
      response.writeHead(201, { 'content-type': 'application/json' });
      const timer = setInterval(() => response.write(' '), 2_000);
      timers.add(timer);
      response.on('close', () => clearInterval(timer));
    });
    const run = await runPush(
      server.url,
      join(root, 'trickle'),
      { MIGRATE_API_KEY: 'key-123456' },
      ['--first-answer-timeout', '5'],
      BOUND_MS,
    );
    for (const timer of timers) clearInterval(timer);
    expect(run.code, run.stderr).toBe(3);
    expect(run.stderr).toContain('gave no whole answer within 5 s');
    expect(run.stderr).toMatch(/HTTP 201 came, and \d bytes? of its body, not the whole body/);
  });
});

describe('an answer past its ceiling', () => {
  it('a 200 MB status answer is refused at 1 MiB, named; the process stays within a 96 MB heap', async () => {
    let statusBytesSent = 0;
    const state = join(root, 'big');
    server = await startScriptedServer((request, response) => {
      if (request.method === 'POST') return json(response, 201, {});
      // A JSON array of 100 million zeros: read and parsed whole, it takes the process far past a 96 MB heap.
      response.writeHead(200, { 'content-type': 'application/json' });
      response.write('[');
      const chunk = Buffer.from('0,'.repeat(512 * 1024));
      let left = 200;
      const more = (): void => {
        while (left > 0) {
          left -= 1;
          statusBytesSent += chunk.length;
          if (!response.write(chunk)) return void response.once('drain', more);
        }
        response.end('0]');
      };
      response.on('error', () => undefined);
      more();
    });
    const run = await runPush(
      server.url,
      state,
      { MIGRATE_API_KEY: 'key-123456', NODE_OPTIONS: '--max-old-space-size=96' },
      ['--limit', '2', '--wait-timeout', '5'],
      BOUND_MS,
    );
    expect(run.signal).toBeNull();
    expect(run.code, run.stderr).toBe(1);
    const reader = openLedgerReader(state);
    const errors = reader.read.accounts().map((account) => account.error?.detail ?? '');
    const history = reader.read.history(1).map((event) => JSON.stringify(event));
    reader.close();
    expect([...errors, ...history].join('\n')).toMatch(
      /getTransferStatus: unexpected answer \(HTTP 200\) at .{1,4}\(body\).{1,4}: the answer is longer than the 1,048,576 bytes the tool reads of an answer to this request \(more than [\d,]+ bytes came\)/,
    );
    expect(statusBytesSent).toBeLessThan(200 * 1024 * 1024);
  });
});
