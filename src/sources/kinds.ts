// The export directory's file kinds (docs/export-format.md "Files"): recognised by base
// name, case-insensitive, in one of three formats, or by a glob the mapping file declares for the kind.

export const FILE_KINDS = [
  'accounts',
  'customers',
  'supply_addresses',
  'notes',
  'transactions',
  'statements',
  'payment_instructions',
] as const;

export type FileKind = (typeof FILE_KINDS)[number];

export type FileFormat = 'csv' | 'json' | 'ndjson';

const FORMAT_OF_EXTENSION: Record<string, FileFormat> = { csv: 'csv', json: 'json', ndjson: 'ndjson', jsonl: 'ndjson' };

export function isFileKind(value: string): value is FileKind {
  return (FILE_KINDS as readonly string[]).includes(value);
}

/** The export format a file name's extension gives (`.jsonl` is NDJSON); undefined for any other extension. */
export function formatOfName(name: string): FileFormat | undefined {
  const dot = name.lastIndexOf('.');
  return dot <= 0 ? undefined : FORMAT_OF_EXTENSION[name.slice(dot + 1).toLowerCase()];
}

/**
 * The kind a file in an export format seems to be a part of (`notes_part1.csv`, `notes-2026.csv`, `Notes 2.csv`,
 * `notes2.json`): its name starts with a kind's base name followed by a space, `_`, `-`, `.`, `(` or a digit.
 * Undefined for an export file name itself and for anything else.
 */
export function partOfKind(name: string): FileKind | undefined {
  if (formatOfName(name) === undefined || classifyFileName(name) !== undefined) return undefined;
  const base = name.slice(0, name.lastIndexOf('.')).toLowerCase();
  // Longest first: payment_instructions before a shorter kind it could start with.
  const kinds = [...FILE_KINDS].sort((a, b) => b.length - a.length);
  return kinds.find((kind) => base.startsWith(kind) && /^[\s_\-.(\d]/u.test(base.slice(kind.length)));
}

/** `Customers.CSV` -> { kind: 'customers', format: 'csv' }; undefined for a file that is not part of an export. */
export function classifyFileName(name: string): { kind: FileKind; format: FileFormat } | undefined {
  const dot = name.lastIndexOf('.');
  if (dot <= 0) return undefined;
  const base = name.slice(0, dot).toLowerCase();
  const format = FORMAT_OF_EXTENSION[name.slice(dot + 1).toLowerCase()];
  return format && isFileKind(base) ? { kind: base, format } : undefined;
}

/** The kind of an export file from its path relative to the export directory (used to locate errors later). */
export function kindOfFile(file: string): FileKind | undefined {
  return classifyFileName(file.split(/[\\/]/).pop() ?? file)?.kind;
}
