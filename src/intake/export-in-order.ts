import type { ExportMapping } from '../mapping/mapping-rules.js';
import type { ExportEntry } from '../mapping/types.js';
import { findExportFiles } from '../sources/index.js';
import { openExport, type ExportReader, type JoinMode } from './index.js';
import type { IssueList } from './issue-spool.js';
import type { ExportNotSorted } from './stream-join.js';

/**
 * The export read for push in external account number order, so that accounts can be sent while
 * it is read (README "Sending while the export is read"). CSV exports stream through the merge
 * join; when a file turns out out of order, `reopen` reads the export again with it sorted on
 * disk (the others streaming beside it), or through the staging file when nothing more can be
 * sorted (as validate does). JSON files have no header that names their keys before the first
 * record, so an export with one is staged whole first, and its problems are all known before
 * anything is sent.
 */
export interface ExportInOrder {
  entries(): AsyncIterable<ExportEntry>;
  reopen(unsorted: ExportNotSorted): Promise<void>;
  /**
   * Problems outside any account in the current read: when it opens, only a header's (an unknown
   * column); the rows' (no account number, an account not in the accounts file) as it is read.
   */
  readonly fileIssues: IssueList;
  close(): Promise<void>;
}

export async function openExportInOrder(
  dir: string,
  config: ExportMapping,
  options: { scratchDir?: string },
): Promise<ExportInOrder> {
  const { files } = await findExportFiles(dir);
  const open = (join: JoinMode, sortFiles?: ReadonlySet<string>): Promise<ExportReader> =>
    openExport(dir, config, { ...options, join, ...(sortFiles ? { sortFiles } : {}) });
  const streaming = files.every((file) => file.format === 'csv');
  let reader = await open(streaming ? 'streaming' : 'staged');
  const sortFiles = new Set<string>();
  return {
    entries: () => reader.entries(),
    get fileIssues() {
      return reader.fileIssues;
    },
    reopen: async (unsorted) => {
      await reader.close();
      reader = await open(nextJoin(sortFiles, unsorted), sortFiles);
    },
    close: () => reader.close(),
  };
}

/**
 * The join of the next read after a file was found out of order: streaming with every file found
 * out of order so far sorted first, or the staging file when they all were sorted already.
 */
export function nextJoin(sortFiles: Set<string>, unsorted: ExportNotSorted): JoinMode {
  const before = sortFiles.size;
  for (const file of unsorted.unsortedFiles) sortFiles.add(file);
  return sortFiles.size === before ? 'staged' : 'streaming';
}
