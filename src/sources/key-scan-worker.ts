import { parentPort } from 'node:worker_threads';
import { scanKeyOrder, type KeyScanInput, type KeyScanResult } from './key-scan.js';

// A key-scan thread: scans the files it is given one after the other and answers each with its result. The main
// thread terminates it when the run is interrupted (a scan holds nothing that needs closing but its file).

export type ToKeyScan = { id: number; input: KeyScanInput };
export type FromKeyScan = { id: number; result: KeyScanResult } | { id: number; error: string };

const port = parentPort;
if (!port) throw new Error('key-scan-worker.js runs as a worker thread');
const send = (message: FromKeyScan): void => port.postMessage(message);

port.on('message', ({ id, input }: ToKeyScan) => {
  scanKeyOrder(input).then(
    (result) => send({ id, result }),
    (error: unknown) => send({ id, error: error instanceof Error ? error.message : String(error) }),
  );
});
