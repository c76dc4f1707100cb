import { parentPort } from 'node:worker_threads';
import { scanKeyOrder, type KeyScanInput, type KeyScanResult } from './key-scan.js';
import { indexRows, type RowIndexResult } from './row-index.js';
import { messageOf } from '../errors.js';

// A key-scan thread: scans the files it is given one after the other and answers each with its result: a file's
// order (the proof), or its rows' places sorted into runs on the scratch file whose descriptor comes with the job
// (row-index.ts). The main thread terminates it when the run is interrupted (a scan holds nothing that needs closing
// but its file; the scratch file is the main thread's).

export type ToKeyScan = { id: number; input: KeyScanInput; indexFd?: number };
/** An error as a message and its system code (`ENOSPC`, `EFBIG`: the scratch space failing, which the CLI names). */
export type FromKeyScan =
  { id: number; result: KeyScanResult | RowIndexResult } | { id: number; error: string; code?: string };

const port = parentPort;
if (!port) throw new Error('key-scan-worker.js runs as a worker thread');
const send = (message: FromKeyScan): void => port.postMessage(message);

port.on('message', ({ id, input, indexFd }: ToKeyScan) => {
  const scan: Promise<KeyScanResult | RowIndexResult> =
    indexFd === undefined ? scanKeyOrder(input) : indexRows(input, indexFd);
  scan.then(
    (result) => send({ id, result }),
    (error: unknown) => {
      const code = (error as { code?: unknown } | undefined)?.code;
      const message = messageOf(error);
      send({ id, error: message, ...(typeof code === 'string' ? { code } : {}) });
    },
  );
});
