import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
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
