import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { InputError, UsageError } from '../errors.js';
import { classifyFileName, FILE_KINDS, type FileFormat, type FileKind } from './kinds.js';

// Finds the export files of a directory (docs/export-format.md "Files"): every kind optional except
// accounts; two formats of one base name is an error naming both, never a silent pick.

export interface ExportFile {
  kind: FileKind;
  format: FileFormat;
  /** File name relative to the export directory, as shown in every message. */
  file: string;
  absolutePath: string;
  bytes: number;
}

export interface ExportFiles {
  files: ExportFile[];
  /** Files in the directory that are not part of an export (shown, never read). */
  ignored: string[];
}

const NOT_EXPORT_FILES = new Set(['migrate.config.json']);

export async function findExportFiles(dir: string): Promise<ExportFiles> {
  let names: string[];
  try {
    const info = await stat(dir);
    if (!info.isDirectory())
      throw new UsageError(
        `${dir} is not a directory; give the export directory (the one holding accounts.csv).`,
        'export_dir_not_directory',
      );
    names = (await readdir(dir, { withFileTypes: true }))
      .filter((entry) => entry.isFile())
      .map((entry) => entry.name)
      .sort();
  } catch (error) {
    if (error instanceof UsageError) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'does not exist' : `cannot be read (${code ?? String(error)})`;
    throw new UsageError(`export directory ${dir} ${why}.`, 'export_dir_unreadable', error);
  }
  const byKind = new Map<FileKind, ExportFile>();
  const ignored: string[] = [];
  for (const name of names) {
    const classified = classifyFileName(name);
    if (!classified) {
      if (!NOT_EXPORT_FILES.has(name.toLowerCase()) && !name.startsWith('.')) ignored.push(name);
      continue;
    }
    const earlier = byKind.get(classified.kind);
    if (earlier) {
      throw new InputError(
        name,
        undefined,
        `and ${earlier.file} both hold ${classified.kind} records; keep one of them (one format per base name).`,
        'input_two_formats',
      );
    }
    const absolutePath = path.join(dir, name);
    byKind.set(classified.kind, { ...classified, file: name, absolutePath, bytes: (await stat(absolutePath)).size });
  }
  if (!byKind.has('accounts')) {
    throw new InputError(
      dir,
      undefined,
      'has no accounts file (accounts.csv, accounts.json or accounts.ndjson); it is the one file an export must have.',
      'input_no_accounts',
    );
  }
  // Accounts first, then the order of FILE_KINDS, so that joins see their parents first.
  const files = FILE_KINDS.flatMap((kind) => byKind.get(kind) ?? []);
  return { files, ignored };
}
