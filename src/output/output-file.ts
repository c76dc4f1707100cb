import { randomBytes } from 'node:crypto';
import { closeSync, constants, fstatSync, ftruncateSync, lstatSync, openSync, realpathSync } from 'node:fs';
import path from 'node:path';
import { UsageError } from '../errors.js';

// Every file a command writes or appends (push --log-file and --metrics-file, validate --errors-csv, the files of
// report --out) goes through here (docs/operators-guide.md "Files migrate writes"): the tool often runs as root or a
// service account beside shared directories, so it never writes into an export directory, never through a symbolic
// link planted where the file should be, never over a file another user owns, and a file it creates by renaming a
// temporary has a temporary name nobody can predict (O_EXCL, so a planted one is refused, not written through).

/** Throws a UsageError (exit 2) when `target` (a file or a directory, made or not) is in one of `exportDirs`. */
export function refuseInsideExport(flag: string, given: string, target: string, exportDirs: readonly string[]): void {
  const real = realPathOf(target);
  for (const dir of exportDirs) {
    const exportDir = realPathOf(path.resolve(dir));
    const inside = path.relative(exportDir, real);
    if (inside === '' || (!inside.startsWith('..') && !path.isAbsolute(inside)))
      throw new UsageError(
        `${flag} ${given}: ${real} is ${inside === '' ? '' : 'inside '}the export directory ${exportDir}; ` +
          'migrate never writes into an export directory (a file of its own could take the place of an export ' +
          'file). Give a path outside it.',
        'output_in_export',
      );
  }
}

/**
 * Before a command reads anything: the file it will write or append (`given`) is refused now, exit 2, for what
 * opening it would refuse later (inside an export, a symbolic link, not a regular file, another user's file).
 */
export function refuseUnsafeOutput(flag: string, given: string, exportDirs: readonly string[]): void {
  refuseInsideExport(flag, given, given, exportDirs);
  let stat;
  try {
    stat = lstatSync(given);
  } catch {
    return;
  }
  if (stat.isSymbolicLink()) throw refusal(flag, given, Object.assign(new Error('a symbolic link'), { code: 'ELOOP' }));
  refuseForeign(flag, given, stat.uid, stat.isFile());
}

/**
 * Opens `file` for writing (0600; appended to, or emptied once it is known to be ours) without following a final
 * symbolic link, refusing a file another user owns: a UsageError (exit 2) saying why, or naming the system's refusal.
 */
export function openOutputFile(flag: string, file: string, how: 'append' | 'truncate'): number {
  // O_NONBLOCK: a FIFO planted in the file's place is not waited on (refused below, as not a regular file).
  const flags =
    constants.O_WRONLY |
    constants.O_CREAT |
    constants.O_NOFOLLOW |
    constants.O_NONBLOCK |
    (how === 'append' ? constants.O_APPEND : 0);
  let fd: number;
  try {
    fd = openSync(file, flags, 0o600);
  } catch (error) {
    throw refusal(flag, file, error);
  }
  try {
    const stat = fstatSync(fd);
    refuseForeign(flag, file, stat.uid, stat.isFile());
    if (how === 'truncate') ftruncateSync(fd, 0);
    return fd;
  } catch (error) {
    closeSync(fd);
    throw error instanceof UsageError ? error : refusal(flag, file, error);
  }
}

/**
 * A temporary name beside `file` (same file system, so renaming it over `file` is atomic) that nobody can predict,
 * not ending as `file` does (a collector reading *.prom never reads a half-written one). Create it with 'wx'.
 */
export function temporaryBeside(file: string): string {
  return path.join(path.dirname(file), `.${path.basename(file)}.${randomBytes(8).toString('hex')}.tmp`);
}

/** Before a temporary is renamed over `file`: an existing `file` must be a regular file (or link) this user owns. */
export function refuseForeignTarget(flag: string, file: string): void {
  let stat;
  try {
    stat = lstatSync(file);
  } catch {
    return;
  }
  refuseForeign(flag, file, stat.uid, stat.isFile() || stat.isSymbolicLink());
}

function refuseForeign(flag: string, file: string, uid: number, regular: boolean): void {
  if (!regular)
    throw new UsageError(`${flag} ${file}: it is not a regular file; give the path of a file.`, 'output_not_a_file');
  const own = process.getuid?.();
  if (own !== undefined && uid !== own)
    throw new UsageError(
      `${flag} ${file}: it belongs to another user (uid ${uid}, this run is uid ${own}); migrate never writes ` +
        "over another user's file. Give a path of your own.",
      'output_foreign_file',
    );
}

function refusal(flag: string, file: string, error: unknown): UsageError {
  const code = (error as NodeJS.ErrnoException).code ?? String(error);
  if (code === 'ELOOP')
    return new UsageError(
      `${flag} ${file}: it is a symbolic link; migrate never writes through one (a link planted in a shared ` +
        'directory could point at any file). Give the real path.',
      'output_symbolic_link',
      error,
    );
  return new UsageError(
    `${flag} ${file}: cannot be opened for writing (${code}); give a writable path.`,
    'output_unwritable',
    error,
  );
}

/** The real path of `target`, or of its nearest existing parent with the rest appended (a path not made yet). */
function realPathOf(target: string): string {
  const missing: string[] = [];
  let current = path.resolve(target);
  for (;;) {
    try {
      return path.join(realpathSync(current), ...missing.reverse());
    } catch {
      const parent = path.dirname(current);
      if (parent === current) return path.resolve(target);
      missing.push(path.basename(current));
      current = parent;
    }
  }
}
