// The export directory's file kinds (docs/export-format.md "Files"): recognised by base
// name, case-insensitive, in one of three formats.

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
