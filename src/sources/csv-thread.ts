import os from 'node:os';
import { Worker } from 'node:worker_threads';
import { readCsvRows, type CsvOptions, type CsvRow } from './csv.js';
import { readPlacedCsv, type RowPlaces } from './placed-rows.js';
import {
  decodeBatch,
  deserializeError,
  ROWS_PER_BATCH,
  type FromWorker,
  type ToWorker,
} from './csv-thread-protocol.js';

// CSV files parsed on a second core (so validate keeps pace with bare csv-parse): one
// worker thread per process, started on first use, parses every open file (several at once for
// the streaming join) with readCsv and sends rows in batches; this thread only splits strings.
// The same rows, lines and errors as readCsv in this thread, which is used instead on a single
// core, when running from TypeScript sources (tests), or with MIGRATE_CSV_THREAD=0.

/** Batches the worker may send ahead of the consumer, per file: memory stays bounded. */
const CREDITS = 4;

/**
 * The thread's young generation. Rows live until their batch is sent, several files' at once: in 8 MB the rows of files
 * read at their places outlived it (300 collections and 25 full ones, a fifth of the thread's time, for a scattered
 * 100,000-account export); in 16 MB they die in it (140 and 6), for about 15 MB more at the peak.
 */
const YOUNG_GENERATION_MB = 16;

let worker: Worker | undefined;
let nextId = 1;
let active = 0;
const listeners = new Map<number, (message: FromWorker) => void>();

function useThread(): boolean {
  return import.meta.url.endsWith('.js') && os.availableParallelism() > 1 && process.env['MIGRATE_CSV_THREAD'] !== '0';
}

function thread(): Worker {
  if (worker) return worker;
  const started = new Worker(new URL('./csv-thread-worker.js', import.meta.url), {
    resourceLimits: { maxYoungGenerationSizeMb: YOUNG_GENERATION_MB, maxOldGenerationSizeMb: 64 },
  });
  const fail = (error: Error): void => {
    if (worker === started) worker = undefined;
    for (const [id, listener] of listeners)
      listener({ type: 'error', id, error: { kind: 'other', message: error.message, stack: error.stack } });
  };
  started.on('message', (message: FromWorker) => listeners.get(message.id)?.(message));
  started.on('error', fail);
  started.on('exit', (code) => fail(new Error(`the CSV parsing thread stopped (exit code ${code})`)));
  // It keeps the process alive only while a file is being read (see readCsvBatches).
  started.unref();
  worker = started;
  return started;
}

/**
 * readCsv's rows, in batches: header first, blank lines skipped, 1-based lines; the same
 * InputErrors. `thread: false` parses in this thread even where the worker is used, to parse
 * two files at once (sort-file.ts reads every unsorted file before the join starts). `places`:
 * the data rows are read at their places, in external account number order (placed-rows.ts).
 */
export async function* readCsvBatches(
  absolutePath: string,
  options: CsvOptions & { thread?: boolean; places?: RowPlaces },
): AsyncGenerator<CsvRow[], void, undefined> {
  if (options.thread === false || !useThread()) {
    const { places } = options;
    yield* batchesOf(places ? readPlacedCsv(absolutePath, options, places) : readCsvRows(absolutePath, options));
    return;
  }
  const id = nextId;
  nextId += 1;
  const inbox: FromWorker[] = [];
  let wake: (() => void) | undefined;
  listeners.set(id, (message) => {
    inbox.push(message);
    wake?.();
  });
  const parser = thread();
  const post = (message: ToWorker): void => parser.postMessage(message);
  if (active === 0) parser.ref();
  active += 1;
  let finished = false;
  try {
    post({
      type: 'open',
      id,
      absolutePath,
      options: {
        file: options.file,
        encoding: options.encoding,
        delimiter: options.delimiter,
        quote: options.quote,
        ...(options.places ? { places: options.places } : {}),
      },
    });
    // Credits start at one batch at a time: the header, then the first rows (a short batch), so that every file's
    // header and first rows are parsed before any file's next thousand (the export opens once every header is checked,
    // and the join starts on the first accounts once every file's first rows have come); then CREDITS ahead.
    post({ type: 'credit', id });
    let received = 0;
    for (;;) {
      while (inbox.length === 0) await new Promise<void>((resolve) => (wake = resolve));
      wake = undefined;
      const message = inbox.shift() as FromWorker;
      if (message.type === 'error') {
        finished = true;
        throw deserializeError(message.error);
      }
      options.onBytes?.(message.bytes);
      if (message.type === 'end') {
        finished = true;
        return;
      }
      received += 1;
      const grant = received === 2 ? CREDITS : 1;
      for (let credit = 0; credit < grant; credit += 1) post({ type: 'credit', id });
      yield* decodeBatch(message.batch);
    }
  } finally {
    listeners.delete(id);
    if (!finished && worker === parser) post({ type: 'close', id });
    active -= 1;
    if (active === 0) parser.unref();
  }
}

/** Pieces of rows regrouped into batches of ROWS_PER_BATCH, as the thread sends them. */
async function* batchesOf(pieces: AsyncGenerator<CsvRow[]>): AsyncGenerator<CsvRow[], void, undefined> {
  let batch: CsvRow[] = [];
  for await (const rows of pieces) {
    for (const row of rows) {
      batch.push(row);
      if (batch.length >= ROWS_PER_BATCH) {
        yield batch;
        batch = [];
      }
    }
  }
  if (batch.length > 0) yield batch;
}
