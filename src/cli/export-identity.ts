import { createHash } from 'node:crypto';
import { statSync } from 'node:fs';
import type { MigrateConfig } from '../config/index.js';
import type { ExportFile } from '../sources/index.js';

/**
 * What names an export for a shared ledger (a runner stages an export whose identity differs from the one staged
 * last): every file's name, size and modification time, the mapping, and the dialect its payloads are checked for.
 * The runners of one Job read the same files on a shared volume, so they agree on it without reading them.
 */
export function exportIdentity(
  files: { files: readonly ExportFile[] },
  config: MigrateConfig,
  dialect: string,
): string {
  const facts = files.files.map((file) => [file.file, file.bytes, statSync(file.absolutePath).mtimeMs]);
  return createHash('sha256').update(JSON.stringify({ facts, config, dialect })).digest('hex');
}
