import { Worker } from 'node:worker_threads';
import type { LedgerCounts } from '../../ledger/index.js';

// The ledger's counts for --metrics-file, read on a thread of their own: at 1,000,000 accounts and
// 2,000,000 records the GROUP BY queries take about 0.3 s, which on the push's thread would hold
// every answer in flight that long at each write. Run from the bundle (.js) only; from the
// TypeScript sources (tests of the library) they are read in place.

export interface CountsReader {
  read(): Promise<LedgerCounts>;
  close(): Promise<void>;
}

type Answer = { ok: true; counts: LedgerCounts } | { ok: false; message: string };

export function ledgerCountsReader(stateDir: string, inPlace: () => LedgerCounts): CountsReader {
  if (!import.meta.url.endsWith('.js'))
    return { read: () => Promise.resolve(inPlace()), close: () => Promise.resolve() };
  const worker = new Worker(new URL('./ledger-counts-worker.js', import.meta.url), {
    workerData: { stateDir },
    resourceLimits: { maxYoungGenerationSizeMb: 8, maxOldGenerationSizeMb: 32 },
  });
  worker.unref();
  let failed: Error | undefined;
  worker.on('error', (error) => (failed = error));
  return {
    read: () =>
      failed !== undefined
        ? Promise.reject(failed)
        : new Promise((resolve, reject) => {
            worker.once('message', (answer: Answer) =>
              answer.ok ? resolve(answer.counts) : reject(new Error(answer.message)),
            );
            worker.once('error', reject);
            worker.postMessage('counts');
          }),
    close: async () => {
      await worker.terminate();
    },
  };
}
