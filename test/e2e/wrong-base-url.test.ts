import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.js';
import { SAMPLE_OPEN_PERIOD } from './helpers.js';
import { runPush } from './run-push.js';

// Fatal before bound: a base URL whose path is wrong (`http://host/api`) answers 404 where the service always has an
// endpoint (the token mutation, account create). That is no account's outcome: the run stops (exit 3) naming the URL,
// and nothing is recorded as the ledger's service, so the corrected rerun goes on instead of being refused as a push
// to another service.
let root: string;
let sandbox: RunningSandbox;
beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'wrong-base-url-'));
  sandbox = await startSandbox({ processingMs: 0, openPeriodStart: SAMPLE_OPEN_PERIOD });
});
afterAll(async () => {
  await sandbox.close();
  rmSync(root, { recursive: true, force: true });
});

describe('a base URL with a wrong path', () => {
  it('stops the run (exit 3) naming what answered 404; the corrected rerun is not refused and lands everything', async () => {
    const state = join(root, 'state');
    const wrong = await runPush(`${sandbox.url}/api`, state, { MIGRATE_API_KEY: sandbox.apiKey });
    expect(wrong.code, wrong.stderr).toBe(3);
    expect(wrong.stderr).toContain(`not_the_service: obtainToken: ${sandbox.url}/api/v1/graphql/ answered HTTP 404`);
    expect(wrong.stderr).not.toContain('not_found');
    expect(sandbox.inspect.accounts('ACME')).toEqual([]);
    const right = await runPush(sandbox.url, state, { MIGRATE_API_KEY: sandbox.apiKey });
    expect(right.stderr).not.toContain('--move-ledger-to-service');
    expect(right.code, right.stderr).toBe(0);
    expect(sandbox.inspect.accounts('ACME')).toHaveLength(50);
  });
});
