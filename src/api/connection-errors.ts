import { ConnectionFailedError } from './errors.js';
import { describeProxies, type ProxySettings } from './proxy.js';

// Errors no resend can mend (docs/api-client.md "Errors no retry can mend"). Resending them only hid the cause: the
// run showed "0 problems" for about 5 minutes of backoff before it gave up with exit 3. An untrusted certificate and a
// host name that does not exist are fatal whenever they come; a refused, unroutable or unanswered connection is fatal
// only before the service (or anything in its place) has answered a request of this client: later in a run it is the
// service restarting, resent as usual.

export interface ConnectionContext {
  endpoint: string;
  baseUrl: URL;
  proxy: ProxySettings | undefined;
  /** Whether any request of this client has had an answer (a response head) yet. */
  answered: boolean;
}

/** OpenSSL's and Node's codes for a certificate that cannot be trusted for this connection. */
const CERTIFICATE_CODES: ReadonlySet<string> = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'CERT_UNTRUSTED',
  'CERT_REJECTED',
  'CERT_SIGNATURE_FAILURE',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'CERT_REVOKED',
  'INVALID_CA',
  'INVALID_PURPOSE',
  'PATH_LENGTH_EXCEEDED',
  'HOSTNAME_MISMATCH',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);

/** Failures to connect that only the first answer tells apart from a service restarting. */
const BEFORE_FIRST_ANSWER: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
  'UND_ERR_CONNECT_TIMEOUT',
]);

interface SystemError {
  code?: unknown;
  hostname?: unknown;
  address?: unknown;
  port?: unknown;
  message?: unknown;
}

/** The fatal error a failure to connect stands for, or undefined when it is an ordinary (resendable) one. */
export function unmendable(error: unknown, context: ConnectionContext): ConnectionFailedError | undefined {
  const failure = (typeof error === 'object' && error !== null ? error : {}) as SystemError;
  const code = typeof failure.code === 'string' ? failure.code : '';
  const message = typeof failure.message === 'string' ? failure.message : '';
  if (CERTIFICATE_CODES.has(code)) return certificate(code, context);
  const hostname = typeof failure.hostname === 'string' ? failure.hostname : context.baseUrl.hostname;
  if (code === 'ENOTFOUND') return notFound(code, hostname, context);
  if (context.answered) return undefined;
  const refusedByProxy = /Proxy response \((\d+)\)/.exec(message);
  if (refusedByProxy) return proxyRefused(Number(refusedByProxy[1]), context);
  if (code.startsWith('ERR_SSL_') || code === 'EPROTO') return handshake(code, context);
  if (!BEFORE_FIRST_ANSWER.has(code)) return undefined;
  if (code === 'EAI_AGAIN') return notFound(code, hostname, context);
  const where = typeof failure.address === 'string' ? `${failure.address}:${String(failure.port)}` : 'the host';
  return unreachable(code, where, context);
}

function certificate(code: string, context: ConnectionContext): ConnectionFailedError {
  const host = context.baseUrl.host;
  const advice =
    code === 'CERT_HAS_EXPIRED' || code === 'CERT_NOT_YET_VALID'
      ? `it has expired or is not valid yet: check this machine's clock, or ask the service's operators to renew it`
      : code === 'ERR_TLS_CERT_ALTNAME_INVALID' || code === 'HOSTNAME_MISMATCH'
        ? `it is for another host name: check that the base URL (--base-url, MIGRATE_BASE_URL) uses the ` +
          `service's own name`
        : `if your organisation inspects TLS traffic (a proxy that presents its own certificates) or the service ` +
          `uses a private certificate authority, give that authority's certificate (PEM) to Node.js: ` +
          `NODE_EXTRA_CA_CERTS=/path/to/ca.pem migrate ...; certificate checks are never turned off`;
  return new ConnectionFailedError(
    context.endpoint,
    'tls_certificate_untrusted',
    `the TLS certificate of ${host} is not trusted (${code}): ${advice}. ${stopped()}`,
  );
}

function handshake(code: string, context: ConnectionContext): ConnectionFailedError {
  return new ConnectionFailedError(
    context.endpoint,
    'tls_handshake_failed',
    `the TLS handshake with ${context.baseUrl.host} failed (${code}) before the service answered any request of ` +
      `this run: check the scheme and the port of the base URL ${context.baseUrl.origin} (--base-url, ` +
      `MIGRATE_BASE_URL; is it an http service?); ${proxies(context)}. ${stopped()}`,
  );
}

function notFound(code: string, hostname: string, context: ConnectionContext): ConnectionFailedError {
  const ofService = hostname === context.baseUrl.hostname;
  const what = ofService
    ? `check the base URL ${context.baseUrl.origin} (--base-url, MIGRATE_BASE_URL) and this machine's DNS`
    : `it is the proxy's host name: check the proxy variables`;
  const doesNot = code === 'EAI_AGAIN' ? 'could not be resolved (the DNS did not answer)' : 'does not resolve';
  return new ConnectionFailedError(
    context.endpoint,
    'host_not_found',
    `the host name ${hostname} ${doesNot} (${code}): ${what}; ${proxies(context)}. ${stopped()}`,
  );
}

function unreachable(code: string, where: string, context: ConnectionContext): ConnectionFailedError {
  const what =
    code === 'ECONNREFUSED'
      ? `refused the connection`
      : code === 'UND_ERR_CONNECT_TIMEOUT'
        ? `did not answer the connection (a firewall may drop it)`
        : `cannot be reached from this machine`;
  return new ConnectionFailedError(
    context.endpoint,
    code === 'ECONNREFUSED' ? 'connection_refused' : 'host_unreachable',
    `${where} ${what} (${code}) before the service answered any request of this run: check the base URL ` +
      `${context.baseUrl.origin} (--base-url, MIGRATE_BASE_URL) and that the service is up; ${proxies(context)}. ` +
      stopped(),
  );
}

function proxyRefused(status: number, context: ConnectionContext): ConnectionFailedError {
  const given = proxyWithCredentials(context);
  const why =
    status !== 407
      ? 'it cannot reach the service, or may not: check the base URL, and ask the proxy administrators'
      : given === undefined
        ? 'it wants credentials: put them in the proxy URL (http://user:password@proxy.example:3128)'
        : `it refused the credentials given in ${given}: check the user name and the password there (a ` +
          `character such as @, : or / in them is written percent-encoded, %40 for @), or ask the proxy ` +
          `administrators whether this user may go through it`;
  return new ConnectionFailedError(
    context.endpoint,
    'proxy_refused',
    `the proxy would not open a connection to ${context.baseUrl.host} (HTTP ${status}): ${why}; ` +
      `${proxies(context)}. ${stopped()}`,
  );
}

/** The variable of the proxy this request went through, when its URL carries a user name or password. */
function proxyWithCredentials(context: ConnectionContext): string | undefined {
  const { proxy } = context;
  const used = context.baseUrl.protocol === 'https:' ? (proxy?.httpsProxy ?? proxy?.httpProxy) : proxy?.httpProxy;
  if (used === undefined) return undefined;
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(used.url) ? used.url : `http://${used.url}`;
  try {
    const url = new URL(withScheme);
    return url.username !== '' || url.password !== '' ? used.variable : undefined;
  } catch {
    return undefined;
  }
}

function proxies(context: ConnectionContext): string {
  return context.proxy === undefined
    ? 'no proxy variable is set (if this machine reaches the service through a proxy, set HTTPS_PROXY, and ' +
        'NO_PROXY for the hosts reached directly)'
    : `through the proxy variables ${describeProxies(context.proxy)}`;
}

function stopped(): string {
  return (
    'No resend can mend this: the run stopped (nothing was sent on this connection); run it again once it is ' +
    'fixed.'
  );
}
