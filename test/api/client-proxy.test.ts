import { afterEach, describe, expect, it } from 'vitest';
import { createImportServiceClient, proxyFor, type ServiceClient } from '../../src/api/index.js';
import { loadProxySettings } from '../../src/config/proxy.js';
import {
  describeServiceConfig,
  loadServiceConfig,
  serviceClientOptions,
  type ServiceFlags,
} from '../../src/config/service.js';
import { UsageError } from '../../src/errors.js';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.js';
import { startConnectProxy, type ConnectProxy } from './helpers/connect-proxy.js';
import { account } from './helpers/sandbox-client.js';

// --proxy, HTTPS_PROXY, HTTP_PROXY and NO_PROXY (docs/api-client.md "Proxies"), read by the configuration and honoured
// through undici's EnvHttpProxyAgent, against a real CONNECT proxy that records every connection and tunnel. A service
// on this machine is never reached through the variables' proxy, only through one --proxy names.

let sandbox: RunningSandbox | undefined;
let proxy: ConnectProxy | undefined;
let client: ServiceClient | undefined;
afterEach(async () => {
  await client?.close();
  await proxy?.close();
  await sandbox?.close();
  [client, proxy, sandbox] = [undefined, undefined, undefined];
});

async function clientFromEnvironment(env: NodeJS.ProcessEnv, flags: ServiceFlags = {}): Promise<ServiceClient> {
  sandbox ??= await startSandbox({ processingMs: 0 });
  const config = await loadServiceConfig({
    flags: { baseUrl: sandbox.url, ...flags },
    env: { MIGRATE_API_KEY: sandbox.apiKey, ...env },
    cwd: process.cwd(),
    dialect: 'spec',
  });
  client = createImportServiceClient(serviceClientOptions(config, { concurrency: 3 }));
  return client;
}

/** A service on another machine, which only the proxy can reach: `.invalid` never resolves. */
const ELSEWHERE = 'https://service.migrate-test.invalid';

async function clientOf(baseUrl: string, env: NodeJS.ProcessEnv): Promise<ServiceClient> {
  const config = await loadServiceConfig({
    flags: { baseUrl },
    env: { MIGRATE_API_KEY: 'key-123456', ...env },
    cwd: process.cwd(),
    dialect: 'spec',
  });
  client = createImportServiceClient(serviceClientOptions(config, { maxRetries: 0 }));
  return client;
}

describe('a service on this machine is never reached through the proxy variables', () => {
  it.each([['HTTP_PROXY'], ['http_proxy'], ['HTTPS_PROXY']])(
    '%s and a service on 127.0.0.1 or localhost: direct, the proxy sees no connection',
    async (variable) => {
      proxy = await startConnectProxy();
      sandbox = await startSandbox({ processingMs: 0 });
      for (const host of ['127.0.0.1', 'localhost']) {
        const config = await loadServiceConfig({
          flags: { baseUrl: sandbox.url.replace('127.0.0.1', host) },
          env: { MIGRATE_API_KEY: sandbox.apiKey, [variable]: proxy.url },
          cwd: process.cwd(),
          dialect: 'spec',
        });
        expect(config.proxy).toBeUndefined();
        expect(describeServiceConfig(config)).not.toContain('prox');
        const service = createImportServiceClient(serviceClientOptions(config));
        expect(await service.getImportStatus('ACME', 'PX-local')).toBeNull();
        await service.close();
      }
      expect(proxy.connections()).toBe(0);
      expect(proxy.tunnels).toEqual([]);
    },
  );

  it("a client given the variables' proxy directly does not use it for a loopback service either", async () => {
    proxy = await startConnectProxy();
    sandbox = await startSandbox({ processingMs: 0 });
    client = createImportServiceClient({
      baseUrl: sandbox.url,
      credentials: { apiKey: sandbox.apiKey },
      proxy: { httpProxy: { url: proxy.url, variable: 'HTTP_PROXY' } },
    });
    expect(await client.getImportStatus('ACME', 'PX-direct')).toBeNull();
    expect(proxy.connections()).toBe(0);
  });

  it.each([
    ['localhost', true],
    ['LOCALHOST.', true],
    ['api.localhost', true],
    ['127.0.0.1', true],
    ['127.255.0.9', true],
    ['[::1]', true],
    ['[::ffff:7f00:1]', true],
    ['128.0.0.1', false],
    ['10.0.0.1', false],
    ['localhost.example', false],
    ['[::2]', false],
  ])('%s is a loopback host: %s', (host, loopback) => {
    const settings = { httpsProxy: { url: 'http://proxy.example:3128/', variable: 'HTTPS_PROXY' } };
    expect(proxyFor(new URL(`https://${host}:8443`), settings) === undefined).toBe(loopback);
    const explicit = { ...settings, explicit: true };
    expect(proxyFor(new URL(`https://${host}:8443`), explicit)).toBe(explicit);
  });
});

describe('through a CONNECT proxy', () => {
  it("--proxy: every request, the token mutation included, goes through the proxy, a loopback service's too", async () => {
    proxy = await startConnectProxy();
    const service = await clientFromEnvironment({}, { proxy: proxy.url });
    expect(await service.createAccount(account('PX-1'))).toEqual({ kind: 'scheduled' });
    expect(await service.getImportStatus('ACME', 'PX-unknown')).toBeNull();
    const target = new URL(sandbox?.url ?? '').host;
    expect(proxy.tunnels.length).toBeGreaterThan(0);
    expect(new Set(proxy.tunnels)).toEqual(new Set([target]));
    expect(proxy.plainRequests).toEqual([]);
    expect(sandbox?.inspect.account('ACME', 'PX-1')?.createRequestsAccepted).toBe(1);
  });

  it('--proxy wins over the variables, NO_PROXY included', async () => {
    proxy = await startConnectProxy();
    const service = await clientFromEnvironment(
      { HTTP_PROXY: 'http://127.0.0.1:9', NO_PROXY: '127.0.0.1,localhost' },
      { proxy: proxy.url },
    );
    expect(await service.getImportStatus('ACME', 'PX-flag')).toBeNull();
    expect(new Set(proxy.tunnels)).toEqual(new Set([new URL(sandbox?.url ?? '').host]));
  });

  it('HTTPS_PROXY for a service elsewhere: the tunnel is asked of the proxy, lower case winning', async () => {
    proxy = await startConnectProxy({ refuseWith: 403 });
    const withCredentials = proxy.url.replace('http://', 'http://proxy-user:proxy-pass%2Fword@');
    const service = await clientOf(ELSEWHERE, { https_proxy: withCredentials, HTTPS_PROXY: 'http://127.0.0.1:9' });
    const error = await service.getImportStatus('ACME', 'PX-2').catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: 'proxy_refused' });
    expect(proxy.tunnels).toEqual(['service.migrate-test.invalid:443']);
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

  it('NO_PROXY naming the host: direct, the proxy sees nothing', async () => {
    proxy = await startConnectProxy();
    for (const noProxy of ['service.migrate-test.invalid', 'localhost,.migrate-test.invalid']) {
      const service = await clientOf(ELSEWHERE, { HTTPS_PROXY: proxy.url, NO_PROXY: noProxy });
      const error = await service.getImportStatus('ACME', 'PX-3').catch((caught: unknown) => caught);
      expect(error).toMatchObject({ code: 'host_not_found' });
      await service.close();
    }
    expect(proxy.connections()).toBe(0);
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
