import type { ExportMapping } from '../mapping/mapping-rules.js';
import { readCsv, type ExportFile } from '../sources/index.js';
import type { KeyScanResult } from '../sources/key-scan.js';
import { scanKeyOrders, type ScanJob } from '../sources/key-scan-thread.js';
import { planCsvHeader } from './read-export.js';

// Whether each CSV file of an export is in external account number order, proven before any
// account is handed out (docs/complete-or-not.md): the streaming join may hand out an
// account only once every file is known to hold no further row for it, and a file is known to
// be in order only when all of it has been read. The key scan (sources/key-scan.ts) reads every
// file's key column, off the main thread; a file not proven in order is read by its rows' places
// (row-places.ts) or sorted on disk (sort-file.ts) before the join starts, so that no file is ever
// assumed to be in order.

export type FileOrder = { file: string } & (
  | { order: 'sorted' }
  | { order: 'unsorted'; line: number; key: string; previousKey: string }
  | { order: 'unproven'; reason: string }
);

/** A file that was not proven in order, and why: it is read by its rows' places or sorted on disk. */
export type FileOutOfOrder = Exclude<FileOrder, { order: 'sorted' }>;

export interface OrderProof {
  files: FileOrder[];
  /** The files not proven in order, in export order. */
  outOfOrder: FileOutOfOrder[];
  /** The files put in order before the join (by their rows' places, else sorted on disk): those not proven in order. */
  toSort: ReadonlySet<string>;
  /** Milliseconds the proof took (the headers and the key scans). */
  ms: number;
}

/** Proves the order of every CSV file of the export (others are refused: JSON exports go to the scratch join). */
export async function proveOrder(
  files: ExportFile[],
  config: ExportMapping,
  signal?: AbortSignal,
): Promise<OrderProof> {
  const startedAt = performance.now();
  const jobs: Array<ScanJob | undefined> = [];
  for (const file of files) jobs.push(await scanJobOf(file, config));
  const scanned = await scanKeyOrders(
    jobs.filter((job) => job !== undefined),
    signal,
  );
  const results: KeyScanResult[] = [];
  for (const job of jobs)
    results.push(job === undefined ? { order: 'sorted', rows: 0 } : (scanned.shift() as KeyScanResult));
  const orders = files.map((file, index) => fileOrder(file.file, results[index] as KeyScanResult));
  const outOfOrder = orders.filter((order): order is FileOutOfOrder => order.order !== 'sorted');
  return {
    files: orders,
    outOfOrder,
    toSort: new Set(outOfOrder.map((order) => order.file)),
    ms: performance.now() - startedAt,
  };
}

/**
 * The key scan of one file, or undefined when its order needs no scan: every record takes the
 * mapping file's constant account number. Reads the header as the join will (a file whose header
 * cannot be read fails here, with the error the join would give).
 */
export async function scanJobOf(file: ExportFile, config: ExportMapping): Promise<ScanJob | undefined> {
  if (file.format !== 'csv') throw new Error(`${file.file}: only CSV files are proven in order`);
  const mapping = config.mapping[file.kind];
  if (mapping.constants['external_account_number'] !== undefined) return undefined;
  const rows = readCsv(file.absolutePath, {
    file: file.file,
    encoding: mapping.encoding,
    delimiter: mapping.delimiter,
  });
  let header: string[];
  try {
    const first = await rows.next();
    header = first.done ? [] : first.value.cells;
  } finally {
    await rows.return(undefined);
  }
  const keyIndex = header.length === 0 ? undefined : planCsvHeader(file, header, config).keyIndex;
  // An empty file, or no key column: the join refuses the file before reading a row.
  if (keyIndex === undefined) return undefined;
  return {
    input: { absolutePath: file.absolutePath, delimiter: mapping.delimiter, encoding: mapping.encoding, keyIndex },
    bytes: file.bytes,
  };
}

function fileOrder(file: string, result: KeyScanResult): FileOrder {
  switch (result.order) {
    case 'sorted':
      return { file, order: 'sorted' };
    case 'unsorted':
      return { file, order: 'unsorted', line: result.line, key: result.key, previousKey: result.previousKey };
    default:
      return { file, order: 'unproven', reason: result.reason };
  }
}
