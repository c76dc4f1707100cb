// What an answer that is not the spec's said, as an error message quotes it (docs/api-client.md "Errors"): the first
// characters only, and every character a terminal could act on written as an escape, so that a service cannot move
// the cursor, set a title or write the clipboard through a message.

/** How many characters of a body an error quotes. */
export const EXCERPT_CHARS = 200;

// C0 and C1 controls, DEL, the line and paragraph separators and the bidirectional overrides: shown as \uXXXX.
// eslint-disable-next-line no-control-regex -- control characters are what this escapes
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/**
 * A body (its text as received, or the parsed JSON written back as text) as a quoted, escaped excerpt:
 * `"{\"status\": \"WAI"... (1,234 characters in all)`. Empty body: `(empty)`.
 */
export function bodyExcerpt(body: unknown): string {
  const text = typeof body === 'string' ? body : body === undefined ? '' : (JSON.stringify(body) ?? '');
  if (text === '') return '(empty)';
  const shown = [...text.slice(0, EXCERPT_CHARS + 1)].slice(0, EXCERPT_CHARS).join('');
  const quoted = `"${shown.replace(/["\\]/g, (ch) => `\\${ch}`).replace(UNSAFE, escape)}"`;
  return shown.length < text.length
    ? `${quoted}... (${text.length.toLocaleString('en-GB')} characters in all)`
    : quoted;
}

function escape(ch: string): string {
  return `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`;
}
