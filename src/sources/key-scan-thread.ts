import os from 'node:os';
import { Worker } from 'node:worker_threads';
import { scanKeyOrder, type KeyScanInput, type KeyScanResult } from './key-scan.js';
import type { FromKeyScan, ToKeyScan } from './key-scan-worker.js';

// The key scans of an export's files, off the main thread: one worker per core (at most one per file), the
// largest files first so that the workers finish together. The same scanKeyOrder runs in this thread instead when
// running from TypeScript sources (tests), on a single core, or with MIGRATE_CSV_THREAD=0, as the CSV thread does.

export interface ScanJob {
  input: KeyScanInput;
  /** Bytes of the file: the largest go first. */
  bytes: number;
}

function useThreads(): boolean {
  return import.meta.url.endsWith('.js') && os.availableParallelism() > 1 && process.env['MIGRATE_CSV_THREAD'] !== '0';
}

/** Every job's result, in the order of `jobs`; rejects with the signal's reason when it is aborted. */
export async function scanKeyOrders(jobs: ScanJob[], signal?: AbortSignal): Promise<KeyScanResult[]> {
  signal?.throwIfAborted();
  if (!useThreads() || jobs.length === 0) {
    const results: KeyScanResult[] = [];
    for (const job of jobs) results.push(await scanKeyOrder(job.input, signal));
    return results;
  }
  const order = jobs.map((_, index) => index).sort((a, b) => (jobs[b]?.bytes ?? 0) - (jobs[a]?.bytes ?? 0));
  const workers = Array.from(
    { length: Math.min(jobs.length, os.availableParallelism()) },
    () => new Worker(new URL('./key-scan-worker.js', import.meta.url)),
  );
  const results = new Array<KeyScanResult>(jobs.length);
  try {
    await new Promise<void>((resolve, reject) => {
      let next = 0;
      let done = 0;
      const stop = (): void => reject(signal?.reason as Error);
      signal?.addEventListener('abort', stop, { once: true });
      const give = (worker: Worker): void => {
        const index = order[next];
        next += 1;
        if (index === undefined) return;
        worker.postMessage({ id: index, input: (jobs[index] as ScanJob).input } satisfies ToKeyScan);
      };
      for (const worker of workers) {
        worker.on('message', (message: FromKeyScan) => {
          if ('error' in message) return reject(new Error(message.error));
          results[message.id] = message.result;
          done += 1;
          if (done === jobs.length) {
            signal?.removeEventListener('abort', stop);
            resolve();
          } else give(worker);
        });
        worker.on('error', reject);
        worker.on('exit', (code) => reject(new Error(`a key-scan thread stopped (exit code ${code})`)));
        give(worker);
      }
    });
  } finally {
    await Promise.all(workers.map((worker) => worker.terminate()));
  }
  return results;
}
