// An external account number must be usable as one segment of the service's URL paths: the service finds an account
// by import supplier and number in its status URLs (spec "Get import status", "Get account transfer status"), and a
// number that a URL changes or cuts is created, then never found again. Percent-encoding (the client's) does not
// save ".", "..": URL parsers remove dot segments, encoded or not; "/", "\" and "%" are decoded or normalised by
// servers and proxies before routing; "?" and "#" end the path where a layer decodes before parsing; control
// characters are refused by HTTP servers. Pure.

const DOT_SEGMENT = /^\.{1,2}$/u;
// eslint-disable-next-line no-control-regex -- control characters are what this finds
const BREAKING = /[/\\?#%\u0000-\u001f\u007f-\u009f]/u;

/** Why `number` cannot be addressed in a URL path, or undefined when it can. */
export function unaddressableReason(number: string): string | undefined {
  if (DOT_SEGMENT.test(number)) return `"${number}" is a dot path segment, which URLs remove`;
  const found = BREAKING.exec(number)?.[0];
  if (found === undefined) return undefined;
  const shown =
    found.charCodeAt(0) < 0x20 || found.charCodeAt(0) >= 0x7f
      ? `a control character (U+${found.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')})`
      : `"${found}"`;
  return (
    `${JSON.stringify(number)} holds ${shown}, which servers and proxies decode, normalise or refuse in a ` + 'URL path'
  );
}
