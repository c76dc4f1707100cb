// A document path names a file below the import supplier's document root (spec: "document root location ... base
// for document paths"): the platform joins it to the root, and a path that reaches elsewhere once decoded (a URL with
// a scheme, a Windows drive or network share, a `..` segment written as %2E%2E or ..%2F) would fetch another
// supplier's or the host's file. The rule (docs/export-format.md "Document paths"): the path is percent-decoded until
// nothing changes, then it may hold no scheme, no drive letter, no host (\\host or //host), no backslash, no `..`
// segment and no control character. Pure.

/** Decoding more times than this, and the path still changing, is a path built to hide what it is. */
const MAX_DECODES = 8;

/** Why `path` is not a path below the document root, or undefined when it is one. */
export function documentPathProblem(path: string): string | undefined {
  const decoded = fullyDecoded(path);
  if (decoded === undefined) return `it is percent-encoded more than ${MAX_DECODES} times over`;
  const encoded = decoded === path ? '' : ` (decoded: ${JSON.stringify(decoded)})`;
  if (/^[a-z]:/i.test(decoded)) return `it names a Windows drive${encoded}; give a path below the document root`;
  if (/^[\\/]{2}/.test(decoded)) return `it names a network host${encoded}; give a path below the document root`;
  if (/^[a-z][a-z0-9+.-]*:/i.test(decoded))
    return `it is a URL with a scheme${encoded}, not a path below the document root`;
  if (decoded.includes('\\')) return `it holds a backslash${encoded}; separate folders with "/"`;
  if (decoded.split('/').includes('..')) return `it leaves the document root ('..' is not allowed)${encoded}`;
  // eslint-disable-next-line no-control-regex -- control characters are what this finds
  if (/[\x00-\x1f\x7f]/.test(decoded)) return `it holds a control character${encoded}`;
  return undefined;
}

/** `path` with %XX decoded (each escape as one byte's character) until nothing changes; undefined past the limit. */
function fullyDecoded(path: string): string | undefined {
  let current = path;
  for (let round = 0; round <= MAX_DECODES; round += 1) {
    const next = current.replace(/%([0-9a-f]{2})/gi, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
    if (next === current) return current;
    current = next;
  }
  return undefined;
}
