import { parentPort, workerData } from 'node:worker_threads';
import { openLedgerDbReadOnly } from '../../ledger/db.js';
import { LedgerReader } from '../../ledger/index.js';

// The thread of ledger-counts-thread.ts: the ledger's counts per state, on its own read-only
// connection (WAL lets it read beside the push's writes), so that the push's thread is not held.

const reader = new LedgerReader(openLedgerDbReadOnly((workerData as { stateDir: string }).stateDir));
parentPort?.on('message', () => {
  try {
    parentPort?.postMessage({ ok: true, counts: reader.counts() });
  } catch (error) {
    parentPort?.postMessage({ ok: false, message: (error as Error).message });
  }
});
