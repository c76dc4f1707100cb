import type { ExportMapping } from '../mapping/mapping-rules.js';
import { findExportFiles } from '../sources/index.js';
import { openExport, type ExportReader, type OpenExportOptions } from './index.js';
import { proveOrder, type OrderProof } from './order-proof.js';

/**
 * The export read in external account number order, every account complete when it is handed
 * out (docs/complete-or-not.md). A CSV export is proven first: every file's key column
 * is scanned (order-proof.ts); the files proven in order stream through the merge join, the
 * others are sorted on disk before the join starts. An export with a JSON or NDJSON file is
 * joined whole in a scratch file first (the scratch SQLite join), so that every record of it is in before the
 * first account is handed out. Either way nothing is assumed about the order of a file.
 */
export interface ExportInOrder extends ExportReader {
  /** How each CSV file's order was proven; undefined when the export was joined in a scratch file. */
  readonly proof: OrderProof | undefined;
}

export async function openExportInOrder(
  dir: string,
  config: ExportMapping,
  options: Pick<OpenExportOptions, 'scratchDir' | 'onProgress' | 'today' | 'found'> & {
    signal?: AbortSignal;
    /** Called once the order is proven, before the files to sort are read (messages, the log). */
    onProof?: (proof: OrderProof) => void;
  } = {},
): Promise<ExportInOrder> {
  const found = options.found ?? (await findExportFiles(dir));
  const { files } = found;
  const { signal, onProof, ...rest } = options;
  const open = { ...rest, found };
  if (!files.every((file) => file.format === 'csv')) {
    const reader = await openExport(dir, config, { ...open, join: 'scratch', ...(signal ? { signal } : {}) });
    return Object.assign(reader, { proof: undefined });
  }
  const proof = await proveOrder(files, config, signal);
  onProof?.(proof);
  const reader = await openExport(dir, config, { ...open, join: 'streaming', sortFiles: proof.toSort });
  return Object.assign(reader, { proof });
}
