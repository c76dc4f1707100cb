import { parentPort } from 'node:worker_threads';
import { readCsvRows } from './csv.js';
import { readPlacedCsv } from './placed-rows.js';
import { BatchEncoder, ROWS_PER_BATCH, serializeError, type FromWorker, type ToWorker } from './csv-thread-protocol.js';

// The CSV parsing thread: reads the files the main thread opens (several at once, interleaved)
// with the same readCsv as the main thread would, and sends their rows in batches, never more
// batches ahead than the main thread has granted (credits): memory stays bounded.

const CHARS_PER_BATCH = 1 << 19;
/** Rows of a file's first batch: the join starts on the first accounts while the next thousand are parsed. */
const FIRST_ROWS = 100;

interface OpenFile {
  credits: number;
  closed: boolean;
  wake: (() => void) | undefined;
}

const port = parentPort;
if (!port) throw new Error('csv-thread-worker.js runs as a worker thread');
const files = new Map<number, OpenFile>();
const send = (message: FromWorker): void => port.postMessage(message);

port.on('message', (message: ToWorker) => {
  if (message.type === 'open') {
    const file: OpenFile = { credits: 0, closed: false, wake: undefined };
    files.set(message.id, file);
    void read(message.id, file, message);
    return;
  }
  const file = files.get(message.id);
  if (!file) return;
  if (message.type === 'credit') file.credits += 1;
  else file.closed = true;
  file.wake?.();
});

async function read(id: number, file: OpenFile, open: Extract<ToWorker, { type: 'open' }>): Promise<void> {
  let bytes = 0;
  const { places, ...options } = open.options;
  const csv = { ...options, onBytes: (read: number) => (bytes = read) };
  const pieces = places ? readPlacedCsv(open.absolutePath, csv, places) : readCsvRows(open.absolutePath, csv);
  const batch = new BatchEncoder();
  let batches = 0;
  const flush = async (): Promise<void> => {
    while (file.credits === 0 && !file.closed) await new Promise<void>((resolve) => (file.wake = resolve));
    file.credits -= 1;
    const rows = batch.take();
    if (!file.closed) send({ type: 'rows', id, batch: rows, bytes });
    batches += 1;
  };
  try {
    reading: for await (const rows of pieces) {
      for (const row of rows) {
        batch.add(row);
        // The header goes alone, at once: a file is open (its columns checked) before its rows are parsed.
        if (
          batch.rows >= (batches === 1 ? FIRST_ROWS : ROWS_PER_BATCH) ||
          batch.chars >= CHARS_PER_BATCH ||
          batches === 0
        )
          await flush();
        if (file.closed) break reading;
      }
    }
    if (batch.rows > 0 && !file.closed) await flush();
    if (!file.closed) send({ type: 'end', id, bytes });
  } catch (error) {
    if (!file.closed) send({ type: 'error', id, error: serializeError(error) });
  } finally {
    files.delete(id);
  }
}
