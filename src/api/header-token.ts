// A token is sent as the value of the Authorization header, and an HTTP header value carries visible ASCII only
// (RFC 9110 "Field Values": no line break; other bytes are obsolete and Node.js refuses any character past U+00FF).
// Checked before a request is built, so that a token that cannot be a header stops the run at once, named, instead of
// failing every request in a way that looks like a service that does not answer.

/** What makes the token unusable as a header value ("a line break (CR) at character 41 of 300"), or undefined. */
export function tokenHeaderProblem(token: string): string | undefined {
  const at = token.search(/[^\x21-\x7e]/u);
  if (at < 0) return undefined;
  const char = token.codePointAt(at) ?? 0;
  const place = `at character ${(at + 1).toLocaleString('en-GB')} of ${token.length.toLocaleString('en-GB')}`;
  const named =
    char === 0x0d || char === 0x0a
      ? `a line break (${char === 0x0d ? 'CR' : 'LF'})`
      : char === 0x20
        ? 'a space'
        : char < 0x20 || char === 0x7f
          ? `a control character (U+${hex(char)})`
          : `U+${hex(char)}, a character outside visible ASCII`;
  return `it holds ${named} ${place}`;
}

const hex = (code: number): string => code.toString(16).toUpperCase().padStart(4, '0');
