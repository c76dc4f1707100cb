import { shownUrl } from '../shown-url.js';

// The proxies a client goes through (read by src/config/proxy.ts from HTTPS_PROXY, HTTP_PROXY and NO_PROXY), and
// how messages name them: the variable and the URL, never its user name or password.

/**
 * The proxies of the environment, or the one `--proxy` names (read by src/config/proxy.ts): each URL with the variable
 * or flag it came from, for messages. Requests to an https base URL go through `httpsProxy` (`httpProxy` when it is not
 * set), to an http one through `httpProxy`, unless `noProxy` lists the host (undici's EnvHttpProxyAgent).
 */
export interface ProxySettings {
  httpProxy?: { url: string; variable: string };
  httpsProxy?: { url: string; variable: string };
  noProxy?: { list: string; variable: string };
  /** Named by `--proxy`: used for every request, a loopback service's included. */
  explicit?: boolean;
}

/**
 * The proxy a client of `baseUrl` goes through: none for a service on this machine (127.0.0.0/8, ::1, localhost)
 * unless `--proxy` names one. A proxy of the environment is for reaching other machines; a rehearsal against a local
 * sandbox through it would hand the proxy the key and every payload in plain http.
 */
export function proxyFor(baseUrl: URL, proxy: ProxySettings | undefined): ProxySettings | undefined {
  if (proxy === undefined || proxy.explicit === true) return proxy;
  return isLoopbackHost(baseUrl.hostname) ? undefined : proxy;
}

/** True for localhost (and names under it), 127.0.0.0/8, ::1 and the IPv4-mapped form of 127.0.0.0/8. */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname
    .replace(/^\[|\]$/g, '')
    .replace(/\.$/, '')
    .toLowerCase();
  return (
    host === 'localhost' ||
    host.endsWith('.localhost') ||
    host === '::1' ||
    /^127(\.\d{1,3}){3}$/.test(host) ||
    /^::ffff:(127(\.\d{1,3}){3}|7f[0-9a-f]{2}:[0-9a-f]{1,4})$/.test(host)
  );
}

/** `HTTPS_PROXY=http://…@proxy:3128, NO_PROXY=localhost`: the variables set, without credentials. */
export function describeProxies(proxy: ProxySettings): string {
  return [proxy.httpsProxy, proxy.httpProxy]
    .filter((entry) => entry !== undefined)
    .map((entry) => `${entry.variable}=${shownUrl(entry.url)}`)
    .concat(proxy.noProxy ? [`${proxy.noProxy.variable}=${proxy.noProxy.list}`] : [])
    .join(', ');
}
