import { statSync } from 'node:fs';
import { InputError } from '../errors.js';
import type { ExportFile } from '../sources/index.js';

// An export file that changes while it is read (still being written, appended to, cut short, replaced by the next
// export) is named as such (docs/export-format.md "Files that cannot be read"), not blamed on its data: what a
// truncated record or a half-written line looks like is a parse error, and the remedy is to wait, not to fix a line.

/** What a file was when it was listed and opened: its size as listed, and the inode and time as opened. */
export interface FileStamp {
  size: number;
  mtimeMs: number;
  ino: number;
  dev: number;
}

/** The file's stamp as it is opened (its size as it was listed); undefined when it cannot be read (opening says). */
export function stampOf(file: ExportFile): FileStamp | undefined {
  try {
    const info = statSync(file.absolutePath);
    return { size: file.bytes, mtimeMs: info.mtimeMs, ino: info.ino, dev: info.dev };
  } catch {
    return undefined;
  }
}

/** The InputError (exit 2) for a file that is no longer what `before` was; undefined when it is unchanged. */
export function changedWhileRead(file: ExportFile, before: FileStamp | undefined): InputError | undefined {
  if (before === undefined) return undefined;
  const what = changeOf(file, before);
  if (what === undefined) return undefined;
  return new InputError(
    file.file,
    undefined,
    `changed while it was read (${what}): the export is still being written, or was replaced. Nothing of it is ` +
      'blamed on its data; rerun when the export is complete.',
    'input_changed_while_read',
  );
}

function changeOf(file: ExportFile, before: FileStamp): string | undefined {
  let now;
  try {
    now = statSync(file.absolutePath);
  } catch {
    return 'it was removed';
  }
  if (now.ino !== before.ino || now.dev !== before.dev) return 'it was replaced by another file';
  if (now.size > before.size) return `it grew from ${before.size} to ${now.size} bytes`;
  if (now.size < before.size) return `it shrank from ${before.size} to ${now.size} bytes`;
  if (now.mtimeMs !== before.mtimeMs) return 'it was written to';
  return undefined;
}

/** `records` as they are read, then the file checked: a change found at the end or behind a read error is named. */
export async function* watchedRecords<T>(
  records: AsyncGenerator<T, void, undefined>,
  file: ExportFile,
  before: FileStamp | undefined,
): AsyncGenerator<T, void, undefined> {
  try {
    yield* records;
  } catch (error) {
    throw changedWhileRead(file, before) ?? error;
  }
  const changed = changedWhileRead(file, before);
  if (changed !== undefined) throw changed;
}
