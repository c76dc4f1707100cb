import type { UnicodeSpellings } from '../../intake/index.js';
import type { NotRead } from '../../sources/index.js';

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

/** An account number as written, with its code points past ASCII named (an NFD "ü" is "u" and U+0308). */
const spelled = (text: string): string =>
  [...text]
    .map((char) =>
      char.charCodeAt(0) < 0x80 ? char : `<U+${char.codePointAt(0)?.toString(16).toUpperCase().padStart(4, '0')}>`,
    )
    .join('');

/**
 * `Account numbers in another Unicode form than NFC, read as NFC (one account with the lines spelling them so): ...`,
 * with the first lines; nothing when every number was written in NFC (docs/export-format.md "External account
 * numbers").
 */
export function spellingLines(spellings: UnicodeSpellings, indent = '  '): string[] {
  if (spellings.lines === 0) return [];
  const more = spellings.lines - spellings.sample.length;
  return [
    `Account numbers written in another Unicode form than NFC on ${spellings.lines} line(s): each is read and sent ` +
      'as its NFC form, the same account as the lines that write it so:',
    ...spellings.sample.map(
      (entry) => `${indent}${entry.file}:${entry.line} ${spelled(entry.written)} read as ${entry.read}`,
    ),
    ...(more > 0 ? [`${indent}... and ${more} more`] : []),
  ];
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

/** Identical note rows counted once (validate's report and push's summary say the same). */
export function duplicateNotesLine(count: number): string {
  return (
    `${count} note row(s) identical to an earlier note of the same account (body, created_at and every other ` +
    'field) counted once: the service keeps one note per body and created_at.'
  );
}
