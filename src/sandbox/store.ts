import { formatAccountNumber, hash53, hashShare } from './random.js';
import type { SupplierStatus } from './options.js';
import { type LatestError, type PostImportData, type ProcessRecord } from './records.js';

// The import processes and their asynchronous life (spec "Account import process"):
// create -> PENDING -> IN_PROGRESS (half of processingMs) -> PROCESSED | ERRORED | CANCELLED (processingMs, plus a
// seeded share of processingSpreadMs per process).
// No timer per account: processes wait in two FIFO queues (their due times grow with creation
// time) and every read advances the queues to "now", so what a request sees is exact.

const FORCED_ERROR: LatestError = {
  code: 'account_creation_failed',
  detail: 'The account could not be created (sandbox: the external account number starts with ERR-).',
  domain: 'import_process',
};
const RANDOM_ERROR: LatestError = {
  code: 'account_creation_failed',
  detail: 'The account could not be created (sandbox: chosen by the errored share).',
  domain: 'import_process',
};

interface QueueEntry {
  record: ProcessRecord;
  generation: number;
  at: number;
}

class FifoQueue {
  #items: QueueEntry[] = [];
  #head = 0;

  push(entry: QueueEntry): void {
    this.#items.push(entry);
  }

  /** Removes and returns the entries due at `now`, oldest first. */
  *takeDue(now: number): Generator<QueueEntry> {
    while (this.#head < this.#items.length) {
      const entry = this.#items[this.#head];
      if (!entry || entry.at > now) break;
      this.#items[this.#head] = undefined as unknown as QueueEntry;
      this.#head++;
      yield entry;
    }
    if (this.#head > 1024 && this.#head * 2 > this.#items.length) {
      this.#items = this.#items.slice(this.#head);
      this.#head = 0;
    }
  }
}

/**
 * Entries in due order when their due times do not grow with creation time (a processing spread): a binary heap.
 * takeDue stays cheap when nothing is due (it looks at the top only).
 */
class HeapQueue {
  readonly #heap: QueueEntry[] = [];

  push(entry: QueueEntry): void {
    const heap = this.#heap;
    heap.push(entry);
    for (let index = heap.length - 1; index > 0;) {
      const parent = (index - 1) >> 1;
      if ((heap[parent]?.at ?? 0) <= entry.at) break;
      heap[index] = heap[parent] as QueueEntry;
      heap[parent] = entry;
      index = parent;
    }
  }

  *takeDue(now: number): Generator<QueueEntry> {
    const heap = this.#heap;
    while (heap.length > 0 && (heap[0]?.at ?? Infinity) <= now) {
      const top = heap[0] as QueueEntry;
      const last = heap.pop() as QueueEntry;
      if (heap.length > 0) this.#sink(last);
      yield top;
    }
  }

  #sink(entry: QueueEntry): void {
    const heap = this.#heap;
    let index = 0;
    for (;;) {
      const left = index * 2 + 1;
      if (left >= heap.length) break;
      const right = left + 1;
      const child = right < heap.length && (heap[right]?.at ?? 0) < (heap[left]?.at ?? 0) ? right : left;
      if ((heap[child]?.at ?? 0) >= entry.at) break;
      heap[index] = heap[child] as QueueEntry;
      index = child;
    }
    heap[index] = entry;
  }
}

export interface StoreSettings {
  seed: number;
  processingMs: number;
  /** A seeded share of 0..processingSpreadMs added to each process's processing time. */
  processingSpreadMs: number;
  erroredShare: number;
  retainPayloads: boolean;
}

export class ProcessStore {
  readonly suppliers = new Map<string, SupplierStatus>();
  readonly #bySupplier = new Map<string, Map<string, ProcessRecord>>();
  readonly #usedAccountNumbers = new Set<number>();
  readonly #toStart: FifoQueue | HeapQueue;
  readonly #toFinish: FifoQueue | HeapQueue;
  readonly #settings: StoreSettings;
  #count = 0;

  constructor(suppliers: Record<string, SupplierStatus>, settings: StoreSettings) {
    for (const [code, status] of Object.entries(suppliers)) this.suppliers.set(code, status);
    this.#settings = settings;
    // Without a spread, due times grow with creation time: two FIFO queues are enough (and cheapest).
    const spread = settings.processingSpreadMs > 0;
    this.#toStart = spread ? new HeapQueue() : new FifoQueue();
    this.#toFinish = spread ? new HeapQueue() : new FifoQueue();
  }

  get size(): number {
    return this.#count;
  }

  get(supplier: string, externalAccountNumber: string, now: number): ProcessRecord | undefined {
    this.advance(now);
    return this.#bySupplier.get(supplier)?.get(externalAccountNumber);
  }

  /** Every process of a supplier, in the order they were first created. */
  list(supplier: string, now: number): ProcessRecord[] {
    this.advance(now);
    return [...(this.#bySupplier.get(supplier)?.values() ?? [])];
  }

  supplierCodes(): string[] {
    return [...this.#bySupplier.keys()];
  }

  /** Schedules a new process for the pair (or replaces an ERRORED/CANCELLED one). */
  schedule(supplier: string, externalAccountNumber: string, payload: unknown, now: number): ProcessRecord {
    const record = this.#recordOf(supplier, externalAccountNumber, now);
    record.generation++;
    record.createRequestsAccepted++;
    Object.assign(record, { status: 'PENDING', createdAt: now, modifiedAt: now, latestError: null });
    record.payload = this.#settings.retainPayloads ? payload : undefined;
    record.fate = this.#fateOf(record);
    const { seed, processingSpreadMs } = this.#settings;
    const spread =
      processingSpreadMs > 0
        ? hashShare(seed, 'processing', supplier, externalAccountNumber, record.createRequestsAccepted)
        : 0;
    const processingMs = this.#settings.processingMs + Math.floor(spread * processingSpreadMs);
    if (processingMs <= 0) this.#finish(record, now);
    else {
      this.#toStart.push({ record, generation: record.generation, at: now + processingMs / 2 });
      this.#toFinish.push({ record, generation: record.generation, at: now + processingMs });
    }
    return record;
  }

  /**
   * An imported account (PROCESSED, with its account number) without a create request, for tests and benchmarks that
   * need a supplier with many accounts; a pair that has a process already is left as it is. Returns whether it was
   * added.
   */
  seedImported(supplier: string, externalAccountNumber: string, now: number): boolean {
    if (this.#bySupplier.get(supplier)?.has(externalAccountNumber)) return false;
    const record = this.#recordOf(supplier, externalAccountNumber, now);
    record.generation++;
    record.createRequestsAccepted++;
    this.#finish(record, now);
    return true;
  }

  /** The pair's process, created PENDING (no fate, nothing scheduled) when it has none. */
  #recordOf(supplier: string, externalAccountNumber: string, now: number): ProcessRecord {
    let processes = this.#bySupplier.get(supplier);
    if (!processes) this.#bySupplier.set(supplier, (processes = new Map<string, ProcessRecord>()));
    let record = processes.get(externalAccountNumber);
    if (!record) {
      record = {
        supplier,
        externalAccountNumber,
        status: 'PENDING',
        createdAt: now,
        modifiedAt: now,
        generation: 0,
        fate: null,
        latestError: null,
        accountNumber: null,
        accountCreatedAt: null,
        createRequestsAccepted: 0,
        payload: undefined,
        post: undefined,
      };
      processes.set(externalAccountNumber, record);
      this.#count++;
    }
    return record;
  }

  #fateOf(record: ProcessRecord): LatestError | 'CANCELLED' | null {
    if (record.externalAccountNumber.startsWith('ERR-')) return FORCED_ERROR;
    if (record.externalAccountNumber.startsWith('CANCEL-')) return 'CANCELLED';
    const share = hashShare(
      this.#settings.seed,
      'errored',
      record.supplier,
      record.externalAccountNumber,
      record.createRequestsAccepted,
    );
    return share < this.#settings.erroredShare ? RANDOM_ERROR : null;
  }

  /** Moves every due process on; cheap when nothing is due (looks at the queue heads only). */
  advance(now: number): void {
    for (const entry of this.#toStart.takeDue(now)) {
      if (entry.generation === entry.record.generation && entry.record.status === 'PENDING') {
        entry.record.status = 'IN_PROGRESS';
        entry.record.modifiedAt = entry.at;
      }
    }
    for (const entry of this.#toFinish.takeDue(now)) {
      if (entry.generation === entry.record.generation) this.#finish(entry.record, entry.at);
    }
  }

  /** Finishes every PENDING and IN_PROGRESS process now (control, for tests). */
  settleAll(now: number): number {
    this.advance(now);
    let settled = 0;
    for (const processes of this.#bySupplier.values()) {
      for (const record of processes.values()) {
        if (record.status === 'PENDING' || record.status === 'IN_PROGRESS') {
          this.#finish(record, now);
          settled++;
        }
      }
    }
    return settled;
  }

  #finish(record: ProcessRecord, at: number): void {
    if (record.status !== 'PENDING' && record.status !== 'IN_PROGRESS') return;
    record.modifiedAt = at;
    if (record.fate === 'CANCELLED') {
      record.status = 'CANCELLED';
      return;
    }
    if (record.fate) {
      record.status = 'ERRORED';
      record.latestError = record.fate;
      return;
    }
    record.status = 'PROCESSED';
    record.accountNumber = this.#newAccountNumber(record);
    record.accountCreatedAt = at;
  }

  /** Deterministic from the seed and the pair; probes on the rare collision so numbers stay unique. */
  #newAccountNumber(record: ProcessRecord): number {
    for (let probe = 0; ; probe++) {
      const value =
        hash53(`${record.supplier}\u0000${record.externalAccountNumber}\u0000${probe}`, this.#settings.seed) %
        4294967296;
      if (!this.#usedAccountNumbers.has(value)) {
        this.#usedAccountNumbers.add(value);
        return value;
      }
    }
  }

  postImport(record: ProcessRecord): PostImportData {
    record.post ??= {};
    return record.post;
  }
}

export function accountNumberOf(record: ProcessRecord): string | null {
  return record.accountNumber === null ? null : formatAccountNumber(record.accountNumber);
}

/** The platform's internal identifier (spec: platform_identifier), derived from the account number. */
export function platformIdentifierOf(record: ProcessRecord): string | null {
  return record.accountNumber === null ? null : String(100_000_000 + record.accountNumber);
}
