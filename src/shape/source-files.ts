import { readdir } from 'node:fs/promises';
import path from 'node:path';
import picomatch from 'picomatch';
import { InputError } from '../errors.js';
import type { FixedColumn } from '../sources/index.js';
import type { FileFormat } from '../sources/kinds.js';

// The legacy files a shape reads (docs/export-format.md "Shaping legacy files with SQL"): each source names its files
// by a glob relative to the export directory. `file` must match exactly one file; `files` one or more, appended in
// name order. A glob that matches nothing, or several files where one is expected, lists what is there.

/** How a source's files are read: as the export's own formats, or as fixed-width lines. */
export type SourceFormat = FileFormat | 'fixed';

/** One source of the mapping file's `sources`, complete (defaults filled in). */
export interface ShapeSource {
  /** The table's name in the shape's SQL. */
  table: string;
  /** The glob, and whether several files may match it (`files`) or exactly one (`file`). */
  glob: string;
  several: boolean;
  /** Undefined: from the extension. */
  format: SourceFormat | undefined;
  encoding: string;
  delimiter: string;
  /** The first CSV row names the columns (default); without it `columns` does, else they are column1, column2, ... */
  header: boolean;
  /** The character CSV fields are quoted with (default `"`); false: fields are never quoted. */
  quote?: string | false | undefined;
  /** A CSV file without a header row: its columns' names, in order. */
  columns?: string[] | undefined;
  /** A fixed-width file: each column's place. */
  layout?: FixedColumn[] | undefined;
  /** A control file: the columns naming a file and the rows it holds (source-use.ts). */
  control?: { fileColumn: string; rowsColumn: string };
}

/** A legacy file of a source, found. */
export interface SourceFile {
  /** Relative to the export directory, with `/` between folders: what `_file` holds. */
  file: string;
  absolutePath: string;
  format: SourceFormat;
}

const FORMAT_OF_EXTENSION: Record<string, FileFormat> = { csv: 'csv', json: 'json', ndjson: 'ndjson', jsonl: 'ndjson' };
const SHOWN = 20;

/** Every regular file under the export directory, relative, in name order. */
export async function exportDirFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((entry) => entry.isFile() || entry.isSymbolicLink())
    .map((entry) => path.relative(dir, path.join(entry.parentPath, entry.name)).split(path.sep).join('/'))
    .sort();
}

/** The files of one source, checked against its glob; throws InputError (exit 2) listing what is there. */
export function sourceFiles(dir: string, source: ShapeSource, present: readonly string[]): SourceFile[] {
  const isMatch = picomatch(source.glob, { dot: false });
  const matches = present.filter((name) => isMatch(name));
  const where = `sources.${source.table}`;
  if (matches.length === 0)
    throw new InputError(
      where,
      undefined,
      `the glob ${JSON.stringify(source.glob)} matches no file of the export directory ${dir}; it holds: ` +
        `${listed(present)}. Correct the glob in the mapping file.`,
      'shape_source_missing',
    );
  if (matches.length > 1 && !source.several)
    throw new InputError(
      where,
      undefined,
      `the glob ${JSON.stringify(source.glob)} matches ${matches.length} files (${listed(matches)}) where "file" ` +
        'expects one; narrow the glob, or write "files" to append them all in name order.',
      'shape_source_ambiguous',
    );
  return matches.map((file) => ({ file, absolutePath: path.join(dir, file), format: formatOf(source, file) }));
}

function formatOf(source: ShapeSource, file: string): SourceFormat {
  if (source.format !== undefined) return source.format;
  const format = FORMAT_OF_EXTENSION[file.slice(file.lastIndexOf('.') + 1).toLowerCase()];
  if (format !== undefined && format !== 'csv' && (!source.header || source.columns || (source.quote ?? '"') !== '"'))
    throw new InputError(
      `sources.${source.table}`,
      undefined,
      `${file} is read as ${format} (its extension), where "header", "columns" and "quote" do not apply; give ` +
        '"format": "csv" in the source if it is a delimited file.',
      'shape_source_format',
    );
  if (format !== undefined) return format;
  throw new InputError(
    `sources.${source.table}`,
    undefined,
    `${file} has no extension that says its format (.csv, .json, .ndjson, .jsonl); give "format": "csv", "json" or ` +
      '"ndjson" in the source.',
    'shape_source_format',
  );
}

function listed(names: readonly string[]): string {
  if (names.length === 0) return '(nothing)';
  const shown = names.slice(0, SHOWN).join(', ');
  return names.length > SHOWN ? `${shown} and ${names.length - SHOWN} more` : shown;
}
