import { rm } from 'node:fs/promises';
import path from 'node:path';
import { createCanonicalFile, type CanonicalFile, type WrittenFile } from './canonical-csv.js';

// A legacy file's canonical CSV in parts (canonical-csv.ts), so that DuckDB loads one part while the tool's readers
// write the next: the load then overlaps the reading instead of following it. Parts are loaded one at a time, in
// order (a table keeps the file's row order), and the writer waits for a part's load before it starts the next, so
// at most two parts are on disk. Each part is removed once loaded.

/** Where the readers' records go: one canonical file, or one in parts. */
export interface RecordSink {
  /** Every value of the record, in the table's column order; `undefined` or '' is NULL. */
  write(line: number, cells: ReadonlyArray<string | undefined>): void;
  /** Called between batches of records: writes out what is buffered, and starts a part's load when it is full. */
  flush(): Promise<void>;
}

interface PartedLoad extends RecordSink {
  /** Loads the last part, waits for every load; the records loaded. */
  finish(): Promise<number>;
  /** After a read failed: waits for the load under way, removes what is left; its error, if any, is the read's. */
  abandon(): Promise<void>;
}

/** Records per part by default: about 25 MB of canonical CSV for a 25-column legacy file. */
const PART_ROWS = 100_000;

const ignore = (): void => undefined;

export async function partedLoad(
  scratch: string,
  load: (partPath: string, written: WrittenFile) => Promise<void>,
  partRows = PART_ROWS,
): Promise<PartedLoad> {
  let index = 0;
  const next = (): Promise<CanonicalFile> => createCanonicalFile(path.join(scratch, `canonical-${index++}.csv`));
  let current = await next();
  let inPart = 0;
  let rows = 0;
  let loading: Promise<void> = Promise.resolve();
  const loadPart = async (part: CanonicalFile, written: WrittenFile): Promise<void> => {
    try {
      await load(part.path, written);
    } finally {
      await rm(part.path, { force: true });
    }
  };
  const endPart = async (): Promise<void> => {
    const written = await current.close();
    rows += written.rows;
    await loading;
    // A file that ends on a part's boundary leaves its last part empty: nothing to load.
    loading = written.rows === 0 ? rm(current.path, { force: true }) : loadPart(current, written);
    loading.catch(ignore);
  };
  return {
    write(line, cells) {
      current.write(line, cells);
      inPart += 1;
    },
    async flush() {
      await current.flush();
      if (inPart < partRows) return;
      await endPart();
      current = await next();
      inPart = 0;
    },
    async finish() {
      await endPart();
      await loading;
      return rows;
    },
    async abandon() {
      await current.close().catch(ignore);
      await rm(current.path, { force: true });
      await loading.catch(ignore);
    },
  };
}
