import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { openLedgerReader } from '../../src/ledger/index.js';
import { startSandbox, type RunningSandbox, type SandboxOptions } from '../../src/sandbox/index.js';
import { startScriptedServer, type ScriptedServer } from '../api/helpers/scripted-server.js';
import { push, ROOT } from './helpers.js';

// Every wait of a push ends (docs/api-client.md "Time-outs" and "Stopping"), through the real binary against a
// misbehaving sandbox: a pause the service asks for beyond the ceiling stops the run at once (exit 3, naming the header);
// SIGTERM once the client waits out a pause within the ceiling, or reads an answer that trickles, ends the process
// within its grace (exit 130), with a consistent ledger. No test here waits on a timer: each signal is sent on an event
// (the sandbox has answered a 429, or an answer is trickling).

const SAMPLE = join(ROOT, 'fixtures', 'sample');
let root: string;
let sandbox: RunningSandbox | undefined;
let hanging: ScriptedServer | undefined;
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'service-waits-'));
});
afterEach(async () => {
  await sandbox?.close();
  await hanging?.close();
  [sandbox, hanging] = [undefined, undefined];
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

async function sandboxWith(faults: Partial<SandboxOptions>): Promise<RunningSandbox> {
  sandbox = await startSandbox({ processingMs: 0, ...faults });
  return sandbox;
}

function accountStates(state: string): Record<string, number> {
  const reader = openLedgerReader(state);
  try {
    return reader.read.counts().accounts;
  } finally {
    reader.close();
  }
}

describe('a pause the service asks for', () => {
  it('Retry-After: 86400 stops the run at once: exit 3 naming the header and the wait; nothing was applied', async () => {
    const service = await sandboxWith({ rateLimitRate: 1, retryAfterSeconds: 86_400 });
    const state = join(root, 'day');
    const run = await push(service, SAMPLE, state, ['--concurrency', '2']);
    expect(run.code, run.stderr).toBe(3);
    expect(run.stderr).toContain('migrate: retry_after_too_long: createAccount: the service asked to wait 86,400 s');
    expect(run.stderr).toContain('(HTTP 429, Retry-After: 86400)');
    expect(run.stderr).toContain('longer than the 120 s the tool waits for any pause a service asks for');
    // Refused before anything was applied: every account is left to the next run, none in doubt.
    expect(accountStates(state)).not.toHaveProperty('creating');
    expect(service.inspect.accountCount()).toBe(0);
  });

  it('the token request answered 503 with Retry-After: 86400 stops the run at once: exit 3 naming the header', async () => {
    const service = await sandboxWith({
      throttleTokenRequests: 1000,
      throttleTokenStatus: 503,
      retryAfterSeconds: 86_400,
    });
    const state = join(root, 'token-day');
    const run = await push(service, SAMPLE, state, ['--concurrency', '2']);
    expect(run.code, run.stderr).toBe(3);
    expect(run.stderr).toContain('migrate: retry_after_too_long: obtainToken: the service asked to wait 86,400 s');
    expect(run.stderr).toContain('(HTTP 503, Retry-After: 86400)');
    expect(service.inspect.requests().filter((entry) => entry.path === '/v1/graphql/')).toHaveLength(1);
    expect(service.inspect.accountCount()).toBe(0);
  });

  it('SIGTERM while the client waits out a pause within the ceiling: exit 130 at once, no second signal needed', async () => {
    const service = await sandboxWith({ rateLimitRate: 1, retryAfterSeconds: 100 });
    const state = join(root, 'pause');
    const run = await push(service, SAMPLE, state, ['--concurrency', '2'], {
      afterMs: 0,
      signal: 'SIGTERM',
      when: () => service.inspect.requests().some((entry) => entry.status === 429),
    });
    expect(run.signal).toBeNull();
    expect(run.code, run.stderr).toBe(130);
    expect(run.stdout).toContain('push stopped: interrupted');
    expect(accountStates(state)).not.toHaveProperty('creating');
    expect(service.inspect.accountCount()).toBe(0);
  });
});

describe('an answer that trickles', () => {
  it('SIGTERM while a status answer trickles a byte every 2 s: the read is cut off, exit 130', async () => {
    const service = await sandboxWith({ trickleMs: 2_000 });
    const state = join(root, 'trickle');
    const run = await push(service, SAMPLE, state, ['--concurrency', '2'], {
      afterMs: 0,
      signal: 'SIGTERM',
      when: () => service.inspect.trickling() > 0,
    });
    expect(run.signal).toBeNull();
    expect(run.code, run.stderr).toBe(130);
    const reader = openLedgerReader(state);
    expect(reader.read.runs(1)[0]).toMatchObject({ status: 'interrupted', exitCode: 130 });
    reader.close();
  });
});

describe('a write that is never answered', () => {
  it('SIGTERM once a create is on the wire: the write gets its grace, then is cut off; exit 130, the create left to reconcile', async () => {
    // Answers the token mutation, and never answers anything else.
    hanging = await startScriptedServer(() => undefined);
    const service = hanging;
    const state = join(root, 'hanging-write');
    const run = await push(
      { url: service.url, apiKey: 'key-123456' } as RunningSandbox,
      SAMPLE,
      state,
      ['--concurrency', '1'],
      {
        afterMs: 0,
        signal: 'SIGTERM',
        when: () => service.rest().some((request) => request.method === 'POST'),
      },
    );
    expect(run.signal).toBeNull();
    expect(run.code, run.stderr).toBe(130);
    expect(run.stderr).not.toMatch(/internal error/);
    // Sent without an answer: the next run asks the service before it sends anything again.
    expect(accountStates(state)).toMatchObject({ creating: 1 });
  });
});
