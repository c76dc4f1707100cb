import picomatch from 'picomatch';
import { InputError } from '../errors.js';
import { classifyFileName, FILE_KINDS, formatOfName, partOfKind, type FileFormat, type FileKind } from './kinds.js';

// Which kind an entry of the export directory holds (docs/export-format.md "Files"): a kind whose mapping section
// declares `file` (a glob such as THISTLE_NOTES_*.csv) is read from every file the glob matches, in name order; any
// other kind from its base name (notes.csv). A name that fits two kinds, a declared glob that matches nothing, and a
// file that looks like a part of a kind (notes_part1.csv) but is not declared stop the command (exit 2) before
// anything is read: guessing would read a file as the wrong kind or leave its records out without a word. Pure.

/** The mapping file's `mapping.<kind>.file`: the glob naming the files of each kind that declares one. */
export type FileGlobs = Partial<Record<FileKind, string>>;

interface KindGlob {
  kind: FileKind;
  glob: string;
  matches: (name: string) => boolean;
}

/** Globs match whole names in the export directory, case-sensitively, as written (`*` never matches a leading dot). */
export function compileGlobs(globs: FileGlobs): KindGlob[] {
  return FILE_KINDS.flatMap((kind) => {
    const glob = globs[kind];
    return glob === undefined ? [] : [{ kind, glob, matches: picomatch(glob, { dot: false }) }];
  });
}

const declaredAt = (glob: KindGlob): string => `mapping.${glob.kind}.file (${JSON.stringify(glob.glob)})`;

/** The kind and format of an entry, or undefined when it is not an export file (the caller says why). */
export function kindOfName(name: string, globs: KindGlob[]): { kind: FileKind; format: FileFormat } | undefined {
  const matched = globs.filter((glob) => glob.matches(name));
  const [first, second] = matched;
  if (first !== undefined && second !== undefined)
    throw new InputError(
      name,
      undefined,
      `matches both ${declaredAt(first)} and ${declaredAt(second)}; a file holds one kind of record: narrow the ` +
        'globs in the mapping file so that each file matches one.',
      'input_two_kinds',
    );
  const byName = classifyFileName(name);
  if (first !== undefined) return globbed(name, first, byName?.kind, globs);
  if (byName === undefined) return undefined;
  const own = globs.find((glob) => glob.kind === byName.kind);
  if (own !== undefined)
    throw new InputError(
      name,
      undefined,
      `is named as the ${byName.kind} file, but ${declaredAt(own)} declares which files hold ${byName.kind} and ` +
        'does not match it; widen the glob to take it, or move it out of the export directory.',
      'input_not_declared',
    );
  return byName;
}

function globbed(
  name: string,
  glob: KindGlob,
  namedAs: FileKind | undefined,
  globs: KindGlob[],
): { kind: FileKind; format: FileFormat } {
  if (namedAs !== undefined && namedAs !== glob.kind && !globs.some((other) => other.kind === namedAs))
    throw new InputError(
      name,
      undefined,
      `is named as the ${namedAs} file but matches ${declaredAt(glob)}; narrow the glob, or declare the ` +
        `${namedAs} files with mapping.${namedAs}.file too.`,
      'input_two_kinds',
    );
  const format = formatOfName(name);
  if (format === undefined)
    throw new InputError(
      name,
      undefined,
      `matches ${declaredAt(glob)}, but its extension is not an export format (.csv, .json, .ndjson or .jsonl); ` +
        'narrow the glob, or rename the file to the extension of its format.',
      'input_not_declared',
    );
  return { kind: glob.kind, format };
}

/**
 * A file whose name looks like a part of a kind (notes_part1.csv) that no glob declares: refused, since it would
 * otherwise be passed over with its records.
 */
export function refuseUndeclaredPart(name: string, globs: KindGlob[]): void {
  const kind = partOfKind(name);
  if (kind === undefined) return;
  const own = globs.find((glob) => glob.kind === kind);
  // The name's own spelling of the kind (globs are case-sensitive) and its extension: Notes 2.csv -> Notes*.csv.
  const suggested = `${name.slice(0, kind.length)}*${name.slice(name.lastIndexOf('.'))}`;
  const declare =
    own === undefined
      ? `declare the ${kind} files in the mapping file ({"mapping": {"${kind}": {"file": ` +
        `${JSON.stringify(suggested)}}}} reads every file it matches as one, in name order)`
      : `widen ${declaredAt(own)} to take it`;
  throw new InputError(
    name,
    undefined,
    `looks like a part of the ${kind} records but is not read as one: ${declare}, or rename it (or move it out of ` +
      'the export directory if it is not part of the export).',
    'input_undeclared_part',
  );
}

/** A declared glob that matches no file: exit 2, listing what the directory holds. */
export function refuseUnmatched(dir: string, names: string[], globs: KindGlob[], found: ReadonlySet<FileKind>): void {
  const unmatched = globs.find((glob) => !found.has(glob.kind));
  if (unmatched === undefined) return;
  const shown = names.slice(0, 20).map((name) => JSON.stringify(name));
  const listing =
    names.length === 0 ? 'it is empty' : `it holds ${shown.join(', ')}${names.length > 20 ? ', ...' : ''}`;
  const caseless = picomatch(unmatched.glob, { dot: false, nocase: true });
  const near = names.filter((name) => caseless(name));
  const hint =
    near.length > 0
      ? ` (${near.map((name) => JSON.stringify(name)).join(', ')} would match but for case: globs are case-sensitive)`
      : '';
  throw new InputError(
    dir,
    undefined,
    `${declaredAt(unmatched)} matches no file of the export directory${hint}; ${listing}. Correct the glob, or ` +
      `remove it if this export has no ${unmatched.kind}.`,
    'input_glob_matches_nothing',
  );
}
