import type { ExportMapping } from '../mapping/mapping-rules.js';
import type { ExportFile } from '../sources/index.js';
import { indexFilesRows, type IndexJob } from '../sources/key-scan-thread.js';
import type { RowPlaces } from '../sources/placed-rows.js';
import { scanJobOf, type OrderProof } from './order-proof.js';
import { openScratchFile, type ScratchFile } from './scratch-file.js';

// The files the proof found out of order, put in order by their rows' places (sources/row-index.ts): each is scanned
// whole on the key-scan threads, its rows' keys, lines and bytes sorted into runs on a scratch file of its own
// (0600, unlinked at once). A file the scan cannot read exactly, or whose bytes the full read would refuse, is left
// out: it is sorted on disk (sort-file.ts), and the full read names its problem at its line.

/** A file's sorted runs of row places on its scratch file (closed with the reader; closing again does nothing). */
export interface RowIndex extends RowPlaces {
  close(): void;
}

export interface PlacedFiles {
  /** The files read by their rows' places, by name as in the export. */
  indexes: ReadonlyMap<string, RowIndex>;
  /** The files out of order that are sorted on disk instead. */
  toSort: ReadonlySet<string>;
  /** Closes every scratch file (the readers close theirs too; a file closed once stays closed). */
  close(): void;
}

export async function placeRows(
  files: ExportFile[],
  proof: OrderProof,
  config: ExportMapping,
  options: { scratchDir?: string | undefined; signal?: AbortSignal | undefined } = {},
): Promise<PlacedFiles> {
  const toSort = new Set<string>();
  const jobs: Array<{ file: ExportFile; job: IndexJob; scratch: ScratchFile }> = [];
  const closeAll = (): void => jobs.forEach(({ scratch }) => scratch.close());
  try {
    for (const file of files) {
      if (!proof.toSort.has(file.file)) continue;
      const order = proof.files.find((entry) => entry.file === file.file);
      const job = order?.order === 'unsorted' ? await scanJobOf(file, config) : undefined;
      if (job === undefined) {
        toSort.add(file.file);
        continue;
      }
      const scratch = closingOnce(openScratchFile(options.scratchDir, 'places'));
      jobs.push({ file, job: { ...job, fd: scratch.fd }, scratch });
    }
    const results = await indexFilesRows(
      jobs.map(({ job }) => job),
      options.signal,
    );
    const indexes = new Map<string, RowIndex>();
    results.forEach((result, index) => {
      const { file, scratch } = jobs[index] as (typeof jobs)[number];
      if (result.order === 'indexed')
        indexes.set(file.file, { fd: scratch.fd, runs: result.runs, rows: result.rows, close: () => scratch.close() });
      else {
        scratch.close();
        toSort.add(file.file);
      }
    });
    return { indexes, toSort, close: closeAll };
  } catch (error) {
    closeAll();
    throw error;
  }
}

/** The scratch file, closed at the first close() only (its descriptor may be another file's after). */
function closingOnce(scratch: ScratchFile): ScratchFile {
  let open = true;
  return {
    fd: scratch.fd,
    close: () => {
      if (open) scratch.close();
      open = false;
    },
  };
}
