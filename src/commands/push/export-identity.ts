import { createHash } from 'node:crypto';
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import type { MigrateConfig } from '../../config/index.js';
import type { ExportFile } from '../../sources/index.js';

/**
 * What names an export for a shared ledger (a runner stages an export whose identity differs from the one staged
 * last): every file's name, size and modification time, the mapping, and the dialect its payloads are checked for.
 * The runners of one Job read the same files on a shared volume, so they agree on it without reading them.
 */
export function exportIdentity(
  files: { files: readonly ExportFile[] },
  config: MigrateConfig,
  dialect: string,
  exportDir?: string,
): string {
  const facts = files.files.map((file) => [file.file, file.bytes, statSync(file.absolutePath).mtimeMs]);
  // A shaped export: its legacy files (every file of the directory, which its sources' globs choose from) and the SQL.
  if (config.shape && exportDir !== undefined) {
    const shape = statSync(config.shape.file);
    facts.push([config.shape.file, shape.size, shape.mtimeMs]);
    for (const name of readdirSync(exportDir, { recursive: true }).map(String).sort()) {
      const info = statSync(path.join(exportDir, name));
      if (info.isFile()) facts.push([name, info.size, info.mtimeMs]);
    }
  }
  return createHash('sha256').update(JSON.stringify({ facts, config, dialect })).digest('hex');
}
