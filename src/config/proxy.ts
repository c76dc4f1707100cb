import type { ProxySettings } from '../api/index.js';
import { UsageError } from '../errors.js';

// The proxy variables (docs/api-client.md "Proxies"), read here and nowhere else: HTTPS_PROXY, HTTP_PROXY and NO_PROXY,
// each also in lower case, which wins when both are set (as curl and undici read them), or the proxy `--proxy` names
// (for every request, a service on this machine's included: the variables' proxies are not used for one). A proxy URL
// is checked once, at the start, with a message naming the variable or flag; its user name and password are never
// shown.

const VARIABLES = {
  httpProxy: ['http_proxy', 'HTTP_PROXY'],
  httpsProxy: ['https_proxy', 'HTTPS_PROXY'],
  noProxy: ['no_proxy', 'NO_PROXY'],
} as const;

/** The first of the names that is set to something other than blanks: [name, value]. */
function firstSet(env: NodeJS.ProcessEnv, names: readonly string[]): [string, string] | undefined {
  for (const name of names) {
    const value = env[name]?.trim();
    if (value) return [name, value];
  }
  return undefined;
}

/** A proxy URL as undici takes it; `proxy.example:3128` without a scheme is read as http, as curl does. */
function proxyUrl(variable: string, text: string): string {
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(text) ? text : `http://${text}`;
  let url: URL;
  try {
    url = new URL(withScheme);
  } catch {
    throw badProxy(variable, text);
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.hostname === '') throw badProxy(variable, text);
  return url.href;
}

function badProxy(variable: string, text: string): UsageError {
  // Its scheme only: a value that is not a URL cannot be told apart from its password.
  const scheme = /^[a-z][a-z0-9+.-]*:/i.exec(text)?.[0];
  return new UsageError(
    `${variable}: expected a proxy URL such as http://proxy.example:3128 (http or https, credentials as ` +
      `http://user:password@proxy.example:3128), got ${scheme ? `a value starting "${scheme}"` : 'another value'} ` +
      `(not shown: it may hold a password)`,
    'invalid_proxy',
  );
}

/** The proxy settings of the environment; undefined when no proxy variable is set (every request goes direct). */
export function loadProxySettings(env: NodeJS.ProcessEnv): ProxySettings | undefined {
  const http = firstSet(env, VARIABLES.httpProxy);
  const https = firstSet(env, VARIABLES.httpsProxy);
  if (http === undefined && https === undefined) return undefined;
  const noProxy = firstSet(env, VARIABLES.noProxy);
  return {
    ...(http ? { httpProxy: { url: proxyUrl(http[0], http[1]), variable: http[0] } } : {}),
    ...(https ? { httpsProxy: { url: proxyUrl(https[0], https[1]), variable: https[0] } } : {}),
    ...(noProxy ? { noProxy: { list: noProxy[1], variable: noProxy[0] } } : {}),
  };
}

/** The proxy `--proxy` names, for every request (a service on a loopback address included); NO_PROXY does not apply. */
export function explicitProxySettings(text: string): ProxySettings {
  const proxy = { url: proxyUrl('--proxy', text.trim()), variable: '--proxy' };
  return { httpProxy: proxy, httpsProxy: proxy, explicit: true };
}
