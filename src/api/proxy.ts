// The proxies a client goes through (read by src/config/proxy.ts from HTTPS_PROXY, HTTP_PROXY and NO_PROXY), and
// how messages name them: the variable and the URL, never its user name or password.

/**
 * The proxies of the environment (read by src/config/proxy.ts): each URL with the variable it came from, for messages.
 * Requests to an https base URL go through `httpsProxy` (`httpProxy` when it is not set), to an http one through
 * `httpProxy`, unless `noProxy` lists the host (undici's EnvHttpProxyAgent).
 */
export interface ProxySettings {
  httpProxy?: { url: string; variable: string };
  httpsProxy?: { url: string; variable: string };
  noProxy?: { list: string; variable: string };
}

/** The text with any `user:password@` before the host replaced: safe to print. */
export function hideUserInfo(text: string): string {
  return text.replace(
    /^([a-z][a-z0-9+.-]*:\/\/)?[^/@\s]*@/i,
    (_match, scheme: string | undefined) => `${scheme ?? ''}…@`,
  );
}

/** `HTTPS_PROXY=http://…@proxy:3128, NO_PROXY=localhost`: the variables set, without credentials. */
export function describeProxies(proxy: ProxySettings): string {
  return [proxy.httpsProxy, proxy.httpProxy]
    .filter((entry) => entry !== undefined)
    .map((entry) => `${entry.variable}=${hideUserInfo(entry.url)}`)
    .concat(proxy.noProxy ? [`${proxy.noProxy.variable}=${proxy.noProxy.list}`] : [])
    .join(', ');
}
