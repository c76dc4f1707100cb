import { afterEach, describe, expect, it } from 'vitest';
import { createImportServiceClient, type ServiceClient } from '../../src/api/index.js';
import { loadProxySettings } from '../../src/config/proxy.js';
import { describeServiceConfig, loadServiceConfig, serviceClientOptions } from '../../src/config/service.js';
import { UsageError } from '../../src/errors.js';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.js';
import { startConnectProxy, type ConnectProxy } from './helpers/connect-proxy.js';
import { account } from './helpers/sandbox-client.js';

// HTTPS_PROXY, HTTP_PROXY and NO_PROXY (docs/api-client.md "Proxies"), read by the configuration and honoured through
// undici's EnvHttpProxyAgent, against a real CONNECT proxy that records every tunnel.

let sandbox: RunningSandbox | undefined;
let proxy: ConnectProxy | undefined;
let client: ServiceClient | undefined;
afterEach(async () => {
  await client?.close();
  await proxy?.close();
  await sandbox?.close();
  [client, proxy, sandbox] = [undefined, undefined, undefined];
});

async function clientFromEnvironment(env: NodeJS.ProcessEnv): Promise<ServiceClient> {
  sandbox ??= await startSandbox({ processingMs: 0 });
  const config = await loadServiceConfig({
    flags: { baseUrl: sandbox.url },
    env: { MIGRATE_API_KEY: sandbox.apiKey, ...env },
    cwd: process.cwd(),
    dialect: 'spec',
  });
  client = createImportServiceClient(serviceClientOptions(config, { concurrency: 3 }));
  return client;
}

describe('through a CONNECT proxy', () => {
  it('HTTP_PROXY: every request, the token mutation included, goes through the proxy; the answers are the same', async () => {
    proxy = await startConnectProxy();
    const service = await clientFromEnvironment({ HTTP_PROXY: proxy.url });
    expect(await service.createAccount(account('PX-1'))).toEqual({ kind: 'scheduled' });
    expect(await service.getImportStatus('ACME', 'PX-unknown')).toBeNull();
    const target = new URL(sandbox?.url ?? '').host;
    expect(proxy.tunnels.length).toBeGreaterThan(0);
    expect(new Set(proxy.tunnels)).toEqual(new Set([target]));
    expect(proxy.plainRequests).toEqual([]);
    expect(sandbox?.inspect.account('ACME', 'PX-1')?.createRequestsAccepted).toBe(1);
  });

  it('lower case wins; proxy credentials travel as Proxy-Authorization and are never shown', async () => {
    proxy = await startConnectProxy();
    const withCredentials = proxy.url.replace('http://', 'http://proxy-user:proxy-pass%2Fword@');
    const service = await clientFromEnvironment({ http_proxy: withCredentials, HTTP_PROXY: 'http://127.0.0.1:9' });
    await service.getImportStatus('ACME', 'PX-2');
    expect(proxy.authorizations[0]).toBe(`Basic ${Buffer.from('proxy-user:proxy-pass/word').toString('base64')}`);
    const config = await loadServiceConfig({
      flags: { baseUrl: 'https://api.example.energy' },
      env: { MIGRATE_API_KEY: 'key-123456', HTTPS_PROXY: withCredentials, no_proxy: 'localhost' },
      cwd: process.cwd(),
      dialect: 'spec',
    });
    const described = describeServiceConfig(config);
    expect(described).toContain('HTTPS_PROXY=http://…@127.0.0.1');
    expect(described).toContain('no_proxy=localhost');
    expect(described).not.toMatch(/proxy-pass|proxy-user/);
  });

  it('NO_PROXY naming the host (or its port): direct, the proxy sees nothing', async () => {
    proxy = await startConnectProxy();
    for (const noProxy of [
      '127.0.0.1',
      'localhost,127.0.0.1',
      `127.0.0.1:${new URL((sandbox ??= await startSandbox({ processingMs: 0 })).url).port}`,
    ]) {
      const service = await clientFromEnvironment({ HTTP_PROXY: proxy.url, NO_PROXY: noProxy });
      expect(await service.getImportStatus('ACME', 'PX-3')).toBeNull();
      await service.close();
    }
    expect(proxy.tunnels).toEqual([]);
  });

  it('HTTPS_PROXY alone does not apply to an http base URL', async () => {
    proxy = await startConnectProxy();
    const service = await clientFromEnvironment({ HTTPS_PROXY: proxy.url });
    expect(await service.getImportStatus('ACME', 'PX-4')).toBeNull();
    expect(proxy.tunnels).toEqual([]);
  });
});

describe('the proxy variables', () => {
  it('none set: no proxy; a URL without a scheme is http, as curl reads it', () => {
    expect(loadProxySettings({ NO_PROXY: 'localhost' })).toBeUndefined();
    expect(loadProxySettings({ HTTPS_PROXY: 'proxy.example:3128' })).toEqual({
      httpsProxy: { url: 'http://proxy.example:3128/', variable: 'HTTPS_PROXY' },
    });
  });

  it.each([['ftp://proxy.example:21'], ['http://'], ['http://user:secret-pw@[bad'], ['http://user:secret-pw']])(
    'a bad proxy URL is a usage error naming the variable, never its password: %s',
    (value) => {
      const attempt = () => loadProxySettings({ https_proxy: value });
      expect(attempt).toThrow(UsageError);
      expect(attempt).toThrow(/^https_proxy: expected a proxy URL such as http:\/\/proxy\.example:3128/);
      expect(attempt).not.toThrow(/secret-pw/);
    },
  );
});
