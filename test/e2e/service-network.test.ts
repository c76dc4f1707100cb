import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.js';
import { startConnectProxy, type ConnectProxy } from '../api/helpers/connect-proxy.js';
import { runPush } from './run-push.js';

// The network between the tool and the service, through the real binary: a corporate proxy (HTTPS_PROXY, HTTP_PROXY,
// NO_PROXY) in front of the sandbox.

let root: string;
let sandbox: RunningSandbox | undefined;
let proxy: ConnectProxy | undefined;
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'service-network-'));
});
afterEach(async () => {
  await proxy?.close();
  await sandbox?.close();
  [proxy, sandbox] = [undefined, undefined];
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('proxies', () => {
  it('HTTP_PROXY: the whole push goes through the proxy and lands every account', async () => {
    sandbox = await startSandbox({ processingMs: 0 });
    proxy = await startConnectProxy();
    const run = await runPush(sandbox.url, join(root, 'proxied'), {
      MIGRATE_API_KEY: sandbox.apiKey,
      HTTP_PROXY: proxy.url,
    });
    expect(run.code, run.stderr).toBe(0);
    expect(sandbox.inspect.accountCount()).toBe(50);
    expect(proxy.tunnels.length).toBeGreaterThan(0);
    expect(new Set(proxy.tunnels)).toEqual(new Set([new URL(sandbox.url).host]));
  });

  it('NO_PROXY naming the service host: the proxy sees nothing', async () => {
    sandbox = await startSandbox({ processingMs: 0 });
    proxy = await startConnectProxy();
    const run = await runPush(sandbox.url, join(root, 'direct'), {
      MIGRATE_API_KEY: sandbox.apiKey,
      http_proxy: proxy.url,
      no_proxy: 'localhost,127.0.0.1',
    });
    expect(run.code, run.stderr).toBe(0);
    expect(proxy.tunnels).toEqual([]);
  });

  it('a proxy URL that is not one: exit 2 naming the variable, nothing written', async () => {
    const state = join(root, 'bad-proxy');
    const run = await runPush('https://api.example.energy', state, {
      MIGRATE_API_KEY: 'key-123456',
      HTTPS_PROXY: 'ftp://user:pw-secret@proxy.example',
    });
    expect(run.code, run.stderr).toBe(2);
    expect(run.stderr).toContain('migrate: HTTPS_PROXY: expected a proxy URL such as http://proxy.example:3128');
    expect(run.stderr).not.toContain('pw-secret');
    expect(existsSync(state)).toBe(false);
  });
});
