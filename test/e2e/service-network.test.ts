import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.js';
import { createServer } from 'node:net';
import { startConnectProxy, type ConnectProxy } from '../api/helpers/connect-proxy.js';
import { startTlsFront, TEST_CA, type TlsFront } from '../api/helpers/tls-front.js';
import { SAMPLE_OPEN_PERIOD } from './helpers.js';
import { runPush } from './run-push.js';

// The network between the tool and the service, through the real binary: a corporate proxy (HTTPS_PROXY, HTTP_PROXY,
// NO_PROXY; never for a service on this machine, unless --proxy names it) in front of the sandbox, and the errors no resend can mend (an untrusted certificate, a host name that does
// not exist, a refused connection on the first request), which stop the run at once with what to do.

let root: string;
let sandbox: RunningSandbox | undefined;
let proxy: ConnectProxy | undefined;
let front: TlsFront | undefined;
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'service-network-'));
});
afterEach(async () => {
  await front?.close();
  await proxy?.close();
  await sandbox?.close();
  [front, proxy, sandbox] = [undefined, undefined, undefined];
});

/** A service on another machine, which only a proxy can reach: `.invalid` never resolves. */
const ELSEWHERE = 'https://service.migrate-test.invalid';

/** A port on this machine where nothing listens. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('proxies', () => {
  it('--proxy: the whole push goes through the proxy named, a service on this machine too, and lands every account', async () => {
    sandbox = await startSandbox({ processingMs: 0, openPeriodStart: SAMPLE_OPEN_PERIOD });
    proxy = await startConnectProxy();
    const run = await runPush(sandbox.url, join(root, 'proxied'), { MIGRATE_API_KEY: sandbox.apiKey }, [
      '--proxy',
      proxy.url,
    ]);
    expect(run.code, run.stderr).toBe(0);
    expect(sandbox.inspect.accountCount()).toBe(50);
    expect(proxy.tunnels.length).toBeGreaterThan(0);
    expect(new Set(proxy.tunnels)).toEqual(new Set([new URL(sandbox.url).host]));
  });

  it('HTTP_PROXY and HTTPS_PROXY with a sandbox on 127.0.0.1 (a rehearsal): direct, the proxy sees no connection', async () => {
    sandbox = await startSandbox({ processingMs: 0, openPeriodStart: SAMPLE_OPEN_PERIOD });
    proxy = await startConnectProxy();
    const run = await runPush(sandbox.url, join(root, 'rehearsal'), {
      MIGRATE_API_KEY: sandbox.apiKey,
      HTTP_PROXY: proxy.url,
      https_proxy: proxy.url,
    });
    expect(run.code, run.stderr).toBe(0);
    expect(sandbox.inspect.accountCount()).toBe(50);
    // Neither the key nor a payload passed the proxy: it took no connection at all.
    expect(proxy.connections()).toBe(0);
  });

  it('NO_PROXY naming the service host: the proxy sees nothing', async () => {
    sandbox = await startSandbox({ processingMs: 0, openPeriodStart: SAMPLE_OPEN_PERIOD });
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

describe('errors no resend can mend stop the run at once', () => {
  it('an untrusted TLS certificate: exit 3 naming NODE_EXTRA_CA_CERTS, one handshake, nothing sent; with it, the push lands', async () => {
    sandbox = await startSandbox({ processingMs: 0, openPeriodStart: SAMPLE_OPEN_PERIOD });
    front = await startTlsFront(sandbox.url);
    const env = { MIGRATE_API_KEY: sandbox.apiKey };
    const refused = await runPush(front.url, join(root, 'tls'), env);
    expect(refused.code, refused.stderr).toBe(3);
    expect(refused.stderr).toContain(
      `migrate: tls_certificate_untrusted: obtainToken: the TLS certificate of ${new URL(front.url).host} is not trusted (`,
    );
    expect(refused.stderr).toContain('NODE_EXTRA_CA_CERTS=/path/to/ca.pem');
    expect(refused.stdout).not.toContain('0 problems');
    expect(front.failedHandshakes).toBe(1);
    expect(front.handshakes).toBe(0);
    expect(sandbox.inspect.requestCount()).toBe(0);

    const trusted = await runPush(front.url, join(root, 'tls'), { ...env, NODE_EXTRA_CA_CERTS: TEST_CA });
    expect(trusted.code, trusted.stderr).toBe(0);
    expect(sandbox.inspect.accountCount()).toBe(50);
  });

  it('a host name that does not resolve: exit 3 naming the host and the base URL', async () => {
    const run = await runPush('https://migrate-test.invalid', join(root, 'dns'), { MIGRATE_API_KEY: 'key-123456' });
    expect(run.code, run.stderr).toBe(3);
    expect(run.stderr).toMatch(
      /migrate: host_not_found: obtainToken: the host name migrate-test\.invalid (does not resolve|could not be resolved)/,
    );
    expect(run.stderr).toContain('check the base URL https://migrate-test.invalid (--base-url, MIGRATE_BASE_URL)');
    expect(run.stderr).toContain(
      'no proxy variable is set (if this machine reaches the service through a proxy, set HTTPS_PROXY',
    );
  });

  it('a refused connection on the first request: exit 3 naming the address, the URL and the proxy variables', async () => {
    const port = await closedPort();
    const run = await runPush(`http://127.0.0.1:${port}`, join(root, 'refused'), { MIGRATE_API_KEY: 'key-123456' });
    expect(run.code, run.stderr).toBe(3);
    expect(run.stderr).toContain(
      `migrate: connection_refused: obtainToken: 127.0.0.1:${port} refused the connection (ECONNREFUSED) before the ` +
        `service answered any request of this run: check the base URL http://127.0.0.1:${port}`,
    );
    expect(run.stderr).toContain('HTTPS_PROXY');
  });

  it('a proxy that refuses connections: exit 3 naming the proxy variable', async () => {
    const port = await closedPort();
    const run = await runPush(ELSEWHERE, join(root, 'dead-proxy'), {
      MIGRATE_API_KEY: 'key-123456',
      HTTPS_PROXY: `http://127.0.0.1:${port}`,
    });
    expect(run.code, run.stderr).toBe(3);
    expect(run.stderr).toContain(`127.0.0.1:${port} refused the connection (ECONNREFUSED)`);
    expect(run.stderr).toContain(`through the proxy variables HTTPS_PROXY=http://127.0.0.1:${port}/`);
  });

  it('a proxy that will not open the tunnel (403): exit 3 naming the proxy', async () => {
    proxy = await startConnectProxy({ refuseWith: 403 });
    const run = await runPush(ELSEWHERE, join(root, 'proxy-403'), {
      MIGRATE_API_KEY: 'key-123456',
      HTTPS_PROXY: proxy.url,
    });
    expect(run.code, run.stderr).toBe(3);
    expect(run.stderr).toContain(
      'migrate: proxy_refused: obtainToken: the proxy would not open a connection to service.migrate-test.invalid ' +
        '(HTTP 403)',
    );
    expect(proxy.tunnels).toEqual(['service.migrate-test.invalid:443']);
  });

  it('a proxy that refuses the credentials its URL gives (407): says they were refused, never "put them in the URL"', async () => {
    proxy = await startConnectProxy({ refuseWith: 407 });
    const withCredentials = proxy.url.replace('http://', 'http://alice:s3cret-pass@');
    const run = await runPush(ELSEWHERE, join(root, 'proxy-407-given'), {
      MIGRATE_API_KEY: 'key-123456',
      HTTPS_PROXY: withCredentials,
    });
    expect(run.code, run.stderr).toBe(3);
    expect(run.stderr).toContain('(HTTP 407): it refused the credentials given in HTTPS_PROXY: check the user name');
    expect(run.stderr).not.toContain('put them in the proxy URL');
    expect(run.stderr).not.toContain('s3cret-pass');
    expect(proxy.authorizations[0]).toBe(`Basic ${Buffer.from('alice:s3cret-pass').toString('base64')}`);
  });

  it('a proxy that wants credentials none were given for (407): says to put them in the proxy URL', async () => {
    proxy = await startConnectProxy({ refuseWith: 407 });
    const run = await runPush(ELSEWHERE, join(root, 'proxy-407-none'), {
      MIGRATE_API_KEY: 'key-123456',
      HTTPS_PROXY: proxy.url,
    });
    expect(run.code, run.stderr).toBe(3);
    expect(run.stderr).toContain('(HTTP 407): it wants credentials: put them in the proxy URL');
  });
});
