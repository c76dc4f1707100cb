import type { NotRead } from '../sources/index.js';

// The export directory's entries that are not read as they are (docs/export-format.md "Files"), in the words
// validate and push both print: links read through, and every entry not read with its reason.

/** An export file, and the file it was read through when it is a symbolic link. */
export interface LinkedFile {
  file: string;
  linkTarget?: string | undefined;
}

/** Entries listed one per line; more are counted (validate --json lists them all). */
const SHOWN = 50;

/** A name as it is, or quoted when it has a space at an end or a character a listing does not show. */
export function shownName(name: string): string {
  return /^\S(.*\S)?$/u.test(name) && !/[\p{C}\u00a0\u200b-\u200d\u2060\ufeff]/u.test(name)
    ? name
    : JSON.stringify(name);
}

/** `Not read (not export files):` and one line per entry, indented by `indent`; none when every entry is read. */
export function notReadLines(notRead: readonly NotRead[], indent = '  '): string[] {
  if (notRead.length === 0) return [];
  const shown = notRead.slice(0, SHOWN).map((entry) => `${indent}${shownName(entry.name)}: ${entry.reason}`);
  const more = notRead.length > SHOWN ? [`${indent}... and ${notRead.length - SHOWN} more`] : [];
  return [
    `Not read (not export files): ${notRead.length} entr${notRead.length === 1 ? 'y' : 'ies'}`,
    ...shown,
    ...more,
  ];
}

/** `Read through symbolic links: notes.csv -> /data/notes.csv.`, or nothing. */
export function linkLines(files: readonly LinkedFile[]): string[] {
  const links = files.flatMap((file) => (file.linkTarget === undefined ? [] : [`${file.file} -> ${file.linkTarget}`]));
  return links.length === 0 ? [] : [`Read through symbolic links: ${links.join(', ')}.`];
}

/**
 * `Columns left out (unmapped: ignore): accounts.csv: OLD_REF, FLAGS.`: the columns of each file that the kind's
 * `"unmapped": "ignore"` leaves out, once per file; nothing where none was.
 */
export function ignoredColumnLines(files: ReadonlyArray<{ file: string; ignoredColumns?: string[] }>): string[] {
  const lines = files.flatMap((file) => {
    const columns = file.ignoredColumns ?? [];
    if (columns.length === 0) return [];
    const shown = columns.slice(0, SHOWN).map(shownName).join(', ');
    return [`  ${file.file} (${columns.length}): ${shown}${columns.length > SHOWN ? ', ...' : ''}`];
  });
  return lines.length === 0 ? [] : ['Columns left out (not documented fields; "unmapped": "ignore"):', ...lines];
}
