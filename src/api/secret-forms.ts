// The forms a secret may take in a text a service sends back (redact.ts): one regular expression per secret that finds
// it in each of them, and in any mix of them (a key JSON-escaped inside a text that was then URL-encoded in part):
// - as it is;
// - JSON-escaped, at any depth (`\"`, `\\\"`, `\\`, `\/`), and with `\uXXXX` escapes as Python's json.dumps writes
//   every non-ASCII character (`Zo\u00eb`);
// - URL-encoded, every UTF-8 byte as `%XX` in either case of hex, a space as `+` too;
// - HTML-escaped (`&quot;`, `&#34;`, `&amp;`, `&lt;`, `&gt;`, `&#39;`);
// - base64 and base64url at each of the three alignments it may have inside a longer encoded text (a Basic
//   header `base64(user:password)`): the characters that depend on the secret's bytes alone.

const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');

/** A hex digit in either case. */
function hexDigit(digit: string): string {
  return /[a-f]/i.test(digit) ? `[${digit.toLowerCase()}${digit.toUpperCase()}]` : digit;
}

function hex(value: number, width: number): string {
  return [...value.toString(16).padStart(width, '0')].map(hexDigit).join('');
}

/** JSON's short escapes (after the backslash). */
const JSON_SHORT: Readonly<Record<string, string>> = {
  '\b': 'b',
  '\f': 'f',
  '\n': 'n',
  '\r': 'r',
  '\t': 't',
};

const HTML_ENTITIES: Readonly<Record<string, readonly string[]>> = {
  '"': ['&quot;', '&#34;', '&#x22;'],
  '&': ['&amp;', '&#38;', '&#x26;'],
  '<': ['&lt;', '&#60;', '&#x3c;'],
  '>': ['&gt;', '&#62;', '&#x3e;'],
  "'": ['&#39;', '&apos;', '&#x27;'],
};

/** The alternatives for one character (one code point) of a secret. */
function characterForms(char: string): string[] {
  const forms: string[] = [];
  // As it is, or JSON-escaped by one or more levels of backslashes.
  if (char === '\\') forms.push('\\\\+');
  else if (char === '"' || char === '/') forms.push(`\\\\*${escapeRegExp(char)}`);
  else forms.push(escapeRegExp(char));
  const short = JSON_SHORT[char];
  if (short !== undefined) forms.push(`\\\\+${short}`);
  // \uXXXX per UTF-16 unit (a character beyond the BMP is a surrogate pair of them).
  const units = [...char].flatMap((part) => Array.from({ length: part.length }, (_, at) => part.charCodeAt(at)));
  forms.push(units.map((unit) => `\\\\*u${hex(unit, 4)}`).join(''));
  // %XX per UTF-8 byte; a space is also + in a form-encoded text.
  forms.push([...Buffer.from(char, 'utf8')].map((byte) => `%${hex(byte, 2)}`).join(''));
  if (char === ' ') forms.push('\\+');
  for (const entity of HTML_ENTITIES[char] ?? []) forms.push(escapeRegExp(entity));
  return forms;
}

/** The base64 and base64url characters that depend on the secret's bytes alone, at each alignment. */
function base64Cores(secret: string): string[] {
  const bytes = Buffer.from(secret, 'utf8');
  const cores: string[] = [];
  for (let shift = 0; shift < 3; shift += 1) {
    const encoded = Buffer.concat([Buffer.alloc(shift), bytes]).toString('base64');
    const start = Math.ceil((8 * shift) / 6);
    const end = Math.floor((8 * (shift + bytes.length)) / 6);
    const core = encoded.slice(start, end);
    cores.push(core, core.replace(/\+/g, '-').replace(/\//g, '_'));
  }
  return [...new Set(cores)].filter((core) => core.length >= 4).map(escapeRegExp);
}

/** The source of a regular expression that matches the secret in any of its forms. */
export function secretPattern(secret: string): string {
  const characters = [...secret].map((char) => `(?:${characterForms(char).join('|')})`).join('');
  return [characters, ...base64Cores(secret)].join('|');
}
