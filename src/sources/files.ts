import { constants, type Stats } from 'node:fs';
import { access, lstat, readdir, readlink, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { errnoOf, InputError, UsageError } from '../errors.js';
import { notExportNameReason, typeInWords, type EntryType } from './entry-reason.js';
import { compileGlobs, kindOfName, refuseUndeclaredPart, refuseUnmatched, type FileGlobs } from './file-globs.js';
import { FILE_KINDS, type FileFormat, type FileKind } from './kinds.js';

// Finds the export files of a directory (docs/export-format.md "Files"): every kind optional except
// accounts; two formats of one base name is an error naming both, never a silent pick; a kind the mapping file
// declares by glob is read from every file the glob matches. Every entry of
// the directory is read, listed as not read with its reason, or refused: an entry named as an export
// file that cannot be read as one (a directory, a FIFO, a broken link, no permission) is refused, since
// passing over it would leave its records out without a word. A symbolic link to a regular file is
// followed, and said so (ExportFile.linkTarget).

export interface ExportFile {
  kind: FileKind;
  format: FileFormat;
  /** File name relative to the export directory, as shown in every message. */
  file: string;
  absolutePath: string;
  bytes: number;
  /** When the entry is a symbolic link: the real path of the file it leads to, which is what is read. */
  linkTarget?: string;
}

/** An entry of the export directory that is not read, and why. */
export interface NotRead {
  name: string;
  reason: string;
}

export interface ExportFiles {
  files: ExportFile[];
  /** Entries of the directory that are not export files (listed, never read). */
  notRead: NotRead[];
}

const NOT_EXPORT_FILES = new Set(['migrate.config.json']);

/** An entry as lstat sees it; for a symbolic link, what it leads to (stat). */
interface Entry {
  type: EntryType;
  info: Stats | undefined;
  link?: { target: string; problem?: string };
}

/**
 * The export's files, each kind in name order; `globs` are the kinds the mapping file declares by glob
 * (sources/file-globs.ts), the other kinds are found by base name.
 */
export async function findExportFiles(dir: string, globs: FileGlobs = {}): Promise<ExportFiles> {
  const names = await entryNames(dir);
  const declared = compileGlobs(globs);
  const byKind = new Map<FileKind, ExportFile[]>();
  const notRead: NotRead[] = [];
  for (const name of names) {
    if (NOT_EXPORT_FILES.has(name.toLowerCase())) continue;
    const absolutePath = path.join(dir, name);
    const entry = await describeEntry(absolutePath);
    const classified = kindOfName(name, declared);
    if (!classified) {
      if (entry.type === 'file') refuseUndeclaredPart(name, declared);
      notRead.push({ name, reason: notReadReason(name, entry) });
      continue;
    }
    await refuseUnreadable(name, absolutePath, entry);
    const earlier = byKind.get(classified.kind);
    if (earlier && !declared.some((glob) => glob.kind === classified.kind)) {
      throw new InputError(
        name,
        undefined,
        `and ${earlier[0]?.file} both hold ${classified.kind} records; keep one of them (one format per base name), ` +
          `or declare the ${classified.kind} files with a glob in the mapping file (mapping.${classified.kind}.file).`,
        'input_two_formats',
      );
    }
    const link = entry.link === undefined ? {} : { linkTarget: entry.link.target };
    const file = { ...classified, file: name, absolutePath, bytes: entry.info?.size ?? 0, ...link };
    byKind.set(classified.kind, [...(earlier ?? []), file]);
  }
  refuseUnmatched(dir, names, declared, new Set(byKind.keys()));
  if (!byKind.has('accounts')) {
    throw new InputError(
      dir,
      undefined,
      'has no accounts file (accounts.csv, accounts.json or accounts.ndjson); it is the one file an export must have.',
      'input_no_accounts',
    );
  }
  // Accounts first, then the order of FILE_KINDS, so that joins see their parents first; a kind's files in name order.
  const files = FILE_KINDS.flatMap((kind) => byKind.get(kind) ?? []);
  return { files, notRead };
}

/** Every entry of the directory, sorted by name. */
async function entryNames(dir: string): Promise<string[]> {
  try {
    const info = await stat(dir);
    if (!info.isDirectory())
      throw new UsageError(
        `${dir} is not a directory; give the export directory (the one holding accounts.csv).`,
        'export_dir_not_directory',
      );
    return (await readdir(dir)).sort();
  } catch (error) {
    if (error instanceof UsageError) throw error;
    const code = errnoOf(error);
    const why = code === 'ENOENT' ? 'does not exist' : `cannot be read (${code ?? String(error)})`;
    throw new UsageError(`export directory ${dir} ${why}.`, 'export_dir_unreadable', error);
  }
}

async function describeEntry(absolutePath: string): Promise<Entry> {
  const own = await lstat(absolutePath);
  if (!own.isSymbolicLink()) return { type: typeOf(own), info: own };
  try {
    const [info, target] = await Promise.all([stat(absolutePath), realpath(absolutePath)]);
    return { type: typeOf(info), info, link: { target } };
  } catch (error) {
    const code = errnoOf(error) ?? String(error);
    const target = await readlink(absolutePath).catch(() => '?');
    const problem =
      code === 'ENOENT'
        ? `leads to ${JSON.stringify(target)}, which does not exist`
        : `to ${JSON.stringify(target)} cannot be followed (${code})`;
    return { type: 'link', info: undefined, link: { target, problem } };
  }
}

function typeOf(info: Stats): EntryType {
  if (info.isFile()) return 'file';
  if (info.isDirectory()) return 'directory';
  if (info.isFIFO()) return 'fifo';
  if (info.isSocket()) return 'socket';
  if (info.isCharacterDevice() || info.isBlockDevice()) return 'device';
  return 'other';
}

function notReadReason(name: string, entry: Entry): string {
  const link = entry.link === undefined ? '' : `a symbolic link to ${entry.link.target}; `;
  if (entry.link?.problem !== undefined) return `a symbolic link that ${entry.link.problem}`;
  const words = typeInWords(entry.type);
  if (words !== undefined) return `${link}${words}${entry.type === 'directory' ? ': subdirectories are not read' : ''}`;
  return `${link}${notExportNameReason(name)}`;
}

/**
 * An entry named as an export file must be a readable regular file (or a link to one): anything else is refused
 * before a record is read.
 */
async function refuseUnreadable(name: string, absolutePath: string, entry: Entry): Promise<void> {
  const fix = 'an export file must be a regular file (or a symbolic link to one): put the file in its place';
  if (entry.link?.problem !== undefined)
    throw new InputError(name, undefined, `is a symbolic link that ${entry.link.problem}; ${fix}.`, 'input_not_a_file');
  const words = typeInWords(entry.type);
  if (words !== undefined) {
    const what = entry.link === undefined ? words : `a symbolic link to ${entry.link.target}, ${words}`;
    throw new InputError(name, undefined, `is ${what}, not a file; ${fix}.`, 'input_not_a_file');
  }
  try {
    await access(absolutePath, constants.R_OK);
  } catch (error) {
    const code = errnoOf(error) ?? String(error);
    throw new InputError(
      name,
      undefined,
      `cannot be read (${code}: ${code === 'EACCES' ? 'permission denied' : 'see the code'}) by the user running ` +
        `migrate (uid ${process.getuid?.() ?? '?'}); make it readable by that user, or run migrate as a user who can ` +
        'read it.',
      'input_unreadable',
      error,
    );
  }
}
