import os from 'node:os';
import { Worker } from 'node:worker_threads';
import { scanKeyOrder, type KeyScanInput, type KeyScanResult } from './key-scan.js';
import type { FromKeyScan, ToKeyScan } from './key-scan-worker.js';
import { indexRows, type RowIndexResult } from './row-index.js';

// The key scans of an export's files, off the main thread: one worker per core (at most one per file), the
// largest files first so that the workers finish together. The same scans run in this thread instead when
// running from TypeScript sources (tests), on a single core, or with MIGRATE_CSV_THREAD=0, as the CSV thread does.

export interface ScanJob {
  input: KeyScanInput;
  /** Bytes of the file: the largest go first. */
  bytes: number;
}

/** A file whose rows' places are sorted into runs on the scratch file open as `fd` (row-index.ts). */
export interface IndexJob extends ScanJob {
  fd: number;
}

function useThreads(): boolean {
  return import.meta.url.endsWith('.js') && os.availableParallelism() > 1 && process.env['MIGRATE_CSV_THREAD'] !== '0';
}

/** Every job's result, in the order of `jobs`; rejects with the signal's reason when it is aborted. */
export async function scanKeyOrders(jobs: ScanJob[], signal?: AbortSignal): Promise<KeyScanResult[]> {
  return (await runScans(jobs, (job) => scanKeyOrder(job.input, signal), signal)) as KeyScanResult[];
}

/** Every file's rows' places, sorted into runs on its scratch file, in the order of `jobs` (as scanKeyOrders). */
export async function indexFilesRows(jobs: IndexJob[], signal?: AbortSignal): Promise<RowIndexResult[]> {
  return (await runScans(jobs, (job) => indexRows(job.input, job.fd, signal), signal)) as RowIndexResult[];
}

type ScanResult = KeyScanResult | RowIndexResult;

async function runScans<Job extends ScanJob>(
  jobs: Job[],
  here: (job: Job) => Promise<ScanResult>,
  signal?: AbortSignal,
): Promise<ScanResult[]> {
  signal?.throwIfAborted();
  if (!useThreads() || jobs.length === 0) {
    const results: ScanResult[] = [];
    for (const job of jobs) results.push(await here(job));
    return results;
  }
  const order = jobs.map((_, index) => index).sort((a, b) => (jobs[b]?.bytes ?? 0) - (jobs[a]?.bytes ?? 0));
  const workers = Array.from(
    { length: Math.min(jobs.length, os.availableParallelism()) },
    () => new Worker(new URL('./key-scan-worker.js', import.meta.url)),
  );
  const results = new Array<ScanResult>(jobs.length);
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
        const job = jobs[index] as Job;
        const indexFd = 'fd' in job ? (job.fd as number) : undefined;
        worker.postMessage({
          id: index,
          input: job.input,
          ...(indexFd === undefined ? {} : { indexFd }),
        } satisfies ToKeyScan);
      };
      for (const worker of workers) {
        worker.on('message', (message: FromKeyScan) => {
          if ('error' in message) return reject(Object.assign(new Error(message.error), { code: message.code }));
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
