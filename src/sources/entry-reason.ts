import { classifyFileName, FILE_KINDS } from './kinds.js';

// Why an entry of the export directory is not read (docs/export-format.md "Files"): every entry is
// read, listed with one of these reasons, or refused; none is passed over without a word. Pure: the
// entry's type comes from files.ts.

/** What an entry is, as lstat (and, for a link, stat of its target) says. */
export type EntryType = 'file' | 'directory' | 'fifo' | 'socket' | 'device' | 'link' | 'other';

const TYPE_WORDS: Record<Exclude<EntryType, 'file' | 'link'>, string> = {
  directory: 'a directory',
  fifo: 'a FIFO (named pipe)',
  socket: 'a socket',
  device: 'a device',
  other: 'not a regular file',
};

const EXTENSIONS = '.csv, .json, .ndjson or .jsonl';
// Spaces, tabs, no-break and zero-width spaces, byte-order marks: invisible in a file listing.
const INVISIBLE = /[\s\u00a0\u200b-\u200d\u2060\ufeff]/gu;

/** What an entry that is not a regular file is, in words ("a directory"); undefined for a regular file or a link. */
export function typeInWords(type: EntryType): string | undefined {
  return type === 'file' || type === 'link' ? undefined : TYPE_WORDS[type];
}

/** Why a regular file whose name is not an export file name is not read, naming the near miss when there is one. */
export function notExportNameReason(name: string): string {
  if (name.startsWith('.')) return 'a hidden file: not an export file name';
  const visible = name.replace(INVISIBLE, '');
  if (visible !== name && classifyFileName(visible))
    return (
      `its name holds a space or an invisible character; if it is the ${classifyFileName(visible)?.kind} file, ` +
      `rename it to ${JSON.stringify(visible)}`
    );
  const dot = name.lastIndexOf('.');
  const base = dot > 0 ? name.slice(0, dot) : name;
  const kindOfBase = FILE_KINDS.find((kind) => kind === base.toLowerCase());
  if (kindOfBase !== undefined)
    return (
      `named like the ${kindOfBase} file, but ${dot > 0 ? `"${name.slice(dot)}"` : 'no extension'} is not an ` +
      `export format (${EXTENSIONS})`
    );
  const copyOf = exportNameInside(name);
  if (copyOf !== undefined)
    return (
      `named like ${copyOf} with "${name.slice(copyOf.length)}" after it (a backup or a compressed copy?); ` +
      `only ${copyOf} itself is read`
    );
  return `not an export file name (${FILE_KINDS.join(', ')}; ${EXTENSIONS})`;
}

/** `notes.csv.bak` -> `notes.csv`: the export file name a longer name starts with, if any. */
function exportNameInside(name: string): string | undefined {
  for (let dot = name.indexOf('.'); dot > 0; dot = name.indexOf('.', dot + 1)) {
    const end = name.slice(dot + 1).search(/[^A-Za-z]/u);
    const candidate = end < 0 ? name : name.slice(0, dot + 1 + end);
    if (candidate !== name && classifyFileName(candidate)) return candidate;
  }
  return undefined;
}
