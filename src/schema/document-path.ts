// A document path names a file below the import supplier's document root (spec: "document root location ... base
// for document paths"): the platform joins it to the root, and a path that reaches elsewhere once read the way some
// server reads it (a URL with a scheme, a Windows drive or network share, a leading "/", a `..` segment written as
// %2E%2E, %C0%AE%C0%AE, %u002e or fullwidth dots) would fetch another supplier's or the host's file. The rule
// (docs/export-format.md "Document paths"): the path is percent-decoded as UTF-8 and NFKC-normalised until nothing
// changes, then one check of what is left. Pure; validate's quick check and the request schemas both ask it.

/** Decoding more times than this, and the path still changing, is a path built to hide what it is. */
const MAX_DECODES = 8;

/** Why `path` is not a path below the document root, or undefined when it is one. */
export function documentPathProblem(path: string): string | undefined {
  const read = readPath(path);
  if (typeof read === 'string') return read;
  const shown = read.how === '' ? '' : ` (${read.how}: ${JSON.stringify(read.path)})`;
  return readPathProblem(read.path, shown);
}

interface ReadPath {
  path: string;
  how: '' | 'decoded' | 'normalised' | 'decoded and normalised';
}

/** `path` percent-decoded and NFKC-normalised until nothing changes, or why it cannot be read with certainty. */
function readPath(path: string): ReadPath | string {
  let current = path;
  let decoded = false;
  let normalised = false;
  for (let round = 0; round <= MAX_DECODES; round += 1) {
    const wide = /%u[0-9a-f]{4}/i.exec(current);
    if (wide !== null) return `it holds a %u escape (${wide[0]}), which some servers decode; write it as UTF-8 (%XX)`;
    const next = percentDecoded(current);
    if (next.bad !== undefined) return `it holds ${next.bad}, which is not UTF-8; percent escapes are UTF-8 bytes`;
    const folded = next.text.normalize('NFKC');
    decoded ||= next.text !== current;
    normalised ||= folded !== next.text;
    if (folded === current) {
      const how =
        decoded && normalised ? 'decoded and normalised' : decoded ? 'decoded' : normalised ? 'normalised' : '';
      return { path: current, how };
    }
    current = folded;
  }
  return `it is percent-encoded more than ${MAX_DECODES} times over`;
}

/** One round of %XX decoding, each run of escapes read as UTF-8; `bad` is the first escape sequence that is not. */
function percentDecoded(text: string): { text: string; bad?: string } {
  let bad: string | undefined;
  const decodedText = text.replace(/(?:%[0-9a-f]{2})+/gi, (run) => {
    const bytes = run
      .slice(1)
      .split('%')
      .map((hex) => parseInt(hex, 16));
    let out = '';
    for (const sequence of utf8Sequences(bytes)) {
      const character = strictUtf8(sequence);
      if (character === undefined) {
        bad ??= sequence.map((byte) => `%${byte.toString(16).toUpperCase().padStart(2, '0')}`).join('');
        return run;
      }
      out += character;
    }
    return out;
  });
  return bad === undefined ? { text: decodedText } : { text, bad };
}

const UTF8 = new TextDecoder('utf-8', { fatal: true });
const isContinuation = (byte: number): boolean => byte >= 0x80 && byte <= 0xbf;

/** `bytes` cut before each byte that is not a continuation byte (at most four bytes a piece): one character each. */
function utf8Sequences(bytes: number[]): number[][] {
  const sequences: number[][] = [];
  for (const byte of bytes) {
    const last = sequences.at(-1);
    if (last !== undefined && isContinuation(byte) && last.length < 4) last.push(byte);
    else sequences.push([byte]);
  }
  return sequences;
}

/** The one character `sequence` encodes, or undefined when it is not well-formed UTF-8 (overlong, surrogate, cut). */
function strictUtf8(sequence: number[]): string | undefined {
  try {
    const text = UTF8.decode(Uint8Array.from(sequence));
    return [...text].length === 1 ? text : undefined;
  } catch {
    return undefined;
  }
}

/** Why the decoded, normalised `path` reaches out of the document root (`shown` says how it was read), if it does. */
function readPathProblem(path: string, shown: string): string | undefined {
  // Line breaks, soft hyphens, direction marks and lone surrogates hide what a path is from whoever reads it.
  if (/[\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}]/u.test(path)) return `it holds a control or invisible character${shown}`;
  if (/^[a-z]:/i.test(path)) return `it names a Windows drive${shown}; give a path below the document root`;
  if (/^[\\/]{2}/.test(path)) return `it names a network host${shown}; give a path below the document root`;
  if (/^[a-z][a-z0-9+.-]*:/i.test(path)) return `it is a URL with a scheme${shown}, not a path below the document root`;
  const root = /^[\\/]/.exec(path);
  if (root !== null) return `it starts with '${root[0]}'${shown}; give a path below the document root`;
  if (/^\s|\s$/u.test(path)) return `it starts or ends with a space${shown}`;
  if (path.includes('\\')) return `it holds a backslash${shown}; separate folders with "/"`;
  const segments = path.split('/');
  if (segments.includes('..')) return `it leaves the document root ('..' is not allowed)${shown}`;
  if (segments.includes('.')) return `it holds a '.' segment${shown}; write the path without it`;
  // Windows drops a name's trailing dots and spaces, so "..." and ".. " read as "..".
  if (segments.some((segment) => /^[. ]+$/.test(segment)))
    return `it holds a segment of dots and spaces (Windows reads it as '.' or '..')${shown}`;
  if (segments.includes('')) return `it holds an empty segment ('//' or a trailing '/')${shown}`;
  return undefined;
}
