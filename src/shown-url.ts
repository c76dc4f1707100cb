import { limitDetail, visibleValue } from './errors.js';

// A URL a user gave (the service's base URL, a proxy, the PostgreSQL ledger) as every message, log record, report and
// hint shows it: never its password, whatever the value looks like. A value that is no URL at all (`user:secret@host`
// without a scheme, a password holding `/` or `#`) is cut at its last `@` all the same: everything before it may be
// a secret. Control characters are shown, not obeyed, and the text is bounded (docs/operators-guide.md "What reaches
// your terminal").

/** `service`: no user name, password, query or fragment; `ledger`: libpq's form, the user name and the query kept. */
export type UrlForm = 'service' | 'ledger';

const SCHEME = /^[a-z][a-z0-9+.-]*:\/\//i;
/** libpq's query parameters that hold a secret (a password; the client key's passphrase). */
const SECRET_PARAMETERS = /([?&](?:ssl)?password=)[^&#]*/gi;

/** The URL as the client reads it (percent-encoded, no line break), when it is a whole URL with a host. */
function parsedServiceUrl(text: string): string | undefined {
  if (!SCHEME.test(text)) return undefined;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return undefined;
  }
  if (url.host === '') return undefined;
  const user = url.username !== '' || url.password !== '' ? '…@' : '';
  const rest = url.search !== '' || url.hash !== '' ? '?…' : '';
  // The parser's `/` for no path at all is not shown: the URL reads as it was written.
  const path = url.pathname === '/' && !text.trimEnd().endsWith('/') ? '' : url.pathname;
  return `${url.protocol}//${user}${url.host}${path}${rest}`;
}

/** Scheme, what stands before the last `@` (undefined: no `@`), and the rest, read as text. */
function pieces(text: string): { scheme: string; userInfo: string | undefined; rest: string } {
  const scheme = SCHEME.exec(text)?.[0] ?? '';
  const tail = text.slice(scheme.length);
  const at = tail.lastIndexOf('@');
  return at === -1
    ? { scheme, userInfo: undefined, rest: tail }
    : { scheme, userInfo: tail.slice(0, at), rest: tail.slice(at + 1) };
}

function textServiceUrl(text: string): string {
  const { scheme, userInfo, rest } = pieces(text);
  const cut = rest.search(/[?#]/);
  return `${scheme}${userInfo === undefined ? '' : '…@'}${cut === -1 ? rest : `${rest.slice(0, cut)}?…`}`;
}

function ledgerUrl(text: string): string {
  // Text, not URL parsing: libpq's forms (an empty host with ?host=/socket/dir, several hosts) are no WHATWG URLs.
  const { scheme, userInfo, rest } = pieces(text);
  const colon = userInfo?.indexOf(':') ?? -1;
  const user = userInfo === undefined ? '' : colon === -1 ? `${userInfo}@` : `${userInfo.slice(0, colon)}:***@`;
  return `${scheme}${user}${rest.replace(SECRET_PARAMETERS, '$1***')}`;
}

/** True when a ledger URL holds a password (in its user information or a query parameter). */
export function holdsPassword(text: string): boolean {
  return ledgerUrl(text) !== text;
}

/** The URL as it may be shown (see UrlForm); one line, at most 500 characters. */
export function shownUrl(text: string, form: UrlForm = 'service'): string {
  const shown = form === 'ledger' ? ledgerUrl(text) : (parsedServiceUrl(text) ?? textServiceUrl(text));
  return visibleValue(limitDetail(shown, 500));
}
