import { fileGlobsOf, type ExportMapping } from '../mapping/mapping-rules.js';
import { findExportFiles } from '../sources/index.js';
import { openExport, type ExportReader, type OpenExportOptions, type ReadPhaseProgress } from './index.js';
import { proveOrder, type OrderProof } from './order-proof.js';
import { placeRows } from './row-places.js';
import { openShapedExport } from './shaped-export.js';

/**
 * The export read in external account number order, every account complete when it is handed
 * out (docs/complete-or-not.md). A CSV export is proven first: every file's key column
 * is scanned (order-proof.ts) while the merge join is opened beside it; the files proven in order
 * stream through that join, and when a file is not, the join is opened again with the files out of
 * order read by their rows' places (row-places.ts: every row's key, line and bytes, sorted), or
 * sorted on disk before it starts where the scan cannot place their rows. An export with a JSON or NDJSON file is
 * staged whole first (the scratch SQLite join), so that every record of it is in before the
 * first account is handed out. Either way nothing is assumed about the order of a file. An export of legacy files
 * shaped by SQL comes sorted by the engine (shaped-export.ts).
 */
export interface ExportInOrder extends ExportReader {
  /** How each CSV file's order was proven; undefined when the export was joined in a scratch file. */
  readonly proof: OrderProof | undefined;
}

export async function openExportInOrder(
  dir: string,
  config: ExportMapping,
  options: Pick<OpenExportOptions, 'scratchDir' | 'onProgress' | 'today' | 'found'> & {
    /** A shaped export's accounts view may hold no row (--allow-no-accounts; a file export checks it before). */
    allowNoAccounts?: boolean;
    signal?: AbortSignal;
    /** Called once the order is proven, before the files to sort are read (messages, the log). */
    onProof?: (proof: OrderProof) => void;
  } = {},
): Promise<ExportInOrder> {
  if (config.shape) return openShapedExport(dir, { ...config, shape: config.shape }, options);
  const found = options.found ?? (await findExportFiles(dir, fileGlobsOf(config)));
  const { files } = found;
  const { signal, onProof, ...rest } = options;
  const open = { ...rest, found };
  if (!files.every((file) => file.format === 'csv')) {
    const reader = await openExport(dir, config, { ...open, join: 'scratch', ...(signal ? { signal } : {}) });
    return Object.assign(reader, { proof: undefined });
  }
  // The join is opened while the proof runs (the files' headers read, their first rows parsed ahead on the CSV
  // thread), so that a sorted export's first account comes as soon as the proof ends; nothing is handed out before.
  // Its progress is held until the proof keeps it: a file found out of order means opening again with it sorted.
  const progress = heldProgress(rest.onProgress);
  const [proved, opened] = await Promise.allSettled([
    proveOrder(files, config, signal),
    openExport(dir, config, { ...open, onProgress: progress.report, join: 'streaming' }),
  ]);
  if (proved.status === 'rejected' || proved.value.toSort.size > 0) {
    if (opened.status === 'fulfilled') await opened.value.close();
    if (proved.status === 'rejected') throw proved.reason;
  }
  const proof = proved.value;
  onProof?.(proof);
  if (proof.toSort.size > 0) {
    // The files out of order are read by their rows' places; those the scan cannot place are sorted on disk.
    const places = await placeRows(files, proof, config, { scratchDir: rest.scratchDir, signal });
    try {
      const reader = await openExport(dir, config, {
        ...open,
        join: 'streaming',
        sortFiles: places.toSort,
        indexes: places.indexes,
      });
      return Object.assign(reader, { proof });
    } catch (error) {
      places.close();
      throw error;
    }
  }
  if (opened.status === 'rejected') throw opened.reason;
  progress.release();
  return Object.assign(opened.value, { proof });
}

/** Progress events kept back until release() (then passed on, those kept first), or dropped with the reader. */
function heldProgress(onProgress: OpenExportOptions['onProgress']): {
  report: (event: ReadPhaseProgress) => void;
  release: () => void;
} {
  let held: ReadPhaseProgress[] | undefined = [];
  return {
    report: (event) => {
      if (held === undefined) onProgress?.(event);
      else held.push(event);
    },
    release: () => {
      const events = held ?? [];
      held = undefined;
      for (const event of events) onProgress?.(event);
    },
  };
}
