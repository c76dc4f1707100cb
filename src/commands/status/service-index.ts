import type { ListCollector } from '../../api/types.js';
import type { ListItem } from '../../schema/index.js';
import type { ServiceEntry } from './status-join.js';

// The v1 lists of `migrate status`, indexed by external account number in a compact form: the lists have no
// pagination (every process of the supplier, docs/service.md "Status and list endpoints") and are read whole so that
// the counts are complete, so what is kept per process is only what the join needs (the external and platform account
// numbers as UTF-8 bytes in one buffer, a flags byte), with an open-addressing hash table over it: at 1,000,000
// processes some 60 MB, where a Map of objects took several hundred.

const PENDING = 1;
/** Joined with a ledger row: what is left unclaimed afterwards is what only the service knows. */
const CLAIMED = 2;

export class ServiceIndex {
  #bytes = Buffer.alloc(1 << 16);
  #used = 0;
  /** Per entry: where its external number and its platform number ('' for none) start in #bytes, and their lengths. */
  #keyAt = new Uint32Array(1024);
  #keyLength = new Uint32Array(1024);
  #platformAt = new Uint32Array(1024);
  #platformLength = new Uint32Array(1024);
  #flags = new Uint8Array(1024);
  /** Entry index + 1 per slot (0: empty); at most half full. */
  #table = new Int32Array(2048);
  #size = 0;
  #pending = 0;
  #scratch = Buffer.alloc(256);

  get size(): number {
    return this.#size;
  }

  /** Entries marked pending (staged on the service, no account yet). */
  get pending(): number {
    return this.#pending;
  }

  /**
   * Adds a listed process, pending when it has no platform account number; a number listed again keeps its place and
   * takes the later values, as Map.set does.
   */
  add(item: ListItem): void {
    const number = item.external_account_number;
    const platform = item.platform_account_number ?? '';
    let entry = this.#find(number);
    if (entry < 0) {
      entry = this.#size;
      this.#grow();
      this.#keyAt[entry] = this.#used;
      this.#keyLength[entry] = this.#append(number);
      this.#size += 1;
      this.#insert(entry);
    } else if ((this.#flags[entry] ?? 0) & PENDING) this.#pending -= 1;
    this.#platformAt[entry] = this.#used;
    this.#platformLength[entry] = this.#append(platform);
    this.#flags[entry] = platform === '' ? PENDING : 0;
    if (platform === '') this.#pending += 1;
  }

  /**
   * The pending list's view added: its processes marked pending, and those missing from this (all) list added at the
   * end (lists read at different moments).
   */
  addPending(pending: ServiceIndex): void {
    for (let other = 0; other < pending.#size; other += 1) {
      const number = pending.#key(other);
      const entry = this.#find(number);
      if (entry < 0) {
        const platform = pending.#platform(other);
        this.add({ external_account_number: number, platform_account_number: platform, account_created_at: null });
        this.#markPending(this.#size - 1);
      } else this.#markPending(entry);
    }
  }

  /** The entry of a number, marked as joined with the ledger (unclaimed() leaves it out); undefined if not listed. */
  claim(number: string): ServiceEntry | undefined {
    const entry = this.#find(number);
    if (entry < 0) return undefined;
    this.#flags[entry] = (this.#flags[entry] ?? 0) | CLAIMED;
    return this.#entry(entry);
  }

  /** Entries not claimed, in list order. */
  *unclaimed(): Generator<[string, ServiceEntry]> {
    for (let entry = 0; entry < this.#size; entry += 1)
      if (((this.#flags[entry] ?? 0) & CLAIMED) === 0) yield [this.#key(entry), this.#entry(entry)];
  }

  /** The first `max` pending numbers, in list order. */
  pendingNumbers(max: number): string[] {
    const numbers: string[] = [];
    for (let entry = 0; entry < this.#size && numbers.length < max; entry += 1)
      if ((this.#flags[entry] ?? 0) & PENDING) numbers.push(this.#key(entry));
    return numbers;
  }

  #markPending(entry: number): void {
    const flags = this.#flags[entry] ?? 0;
    if (flags & PENDING) return;
    this.#flags[entry] = flags | PENDING;
    this.#pending += 1;
  }

  #entry(entry: number): ServiceEntry {
    const platform = this.#platform(entry);
    return {
      platformAccountNumber: platform === '' ? null : platform,
      pending: ((this.#flags[entry] ?? 0) & PENDING) !== 0,
    };
  }

  #key(entry: number): string {
    const at = this.#keyAt[entry] ?? 0;
    return this.#bytes.toString('utf8', at, at + (this.#keyLength[entry] ?? 0));
  }

  #platform(entry: number): string {
    const at = this.#platformAt[entry] ?? 0;
    return this.#bytes.toString('utf8', at, at + (this.#platformLength[entry] ?? 0));
  }

  /** Appends the UTF-8 bytes of `text` to the buffer; returns their length. */
  #append(text: string): number {
    const length = Buffer.byteLength(text);
    if (this.#used + length > this.#bytes.length) {
      const bigger = Buffer.alloc(Math.max(this.#bytes.length * 2, this.#used + length));
      this.#bytes.copy(bigger, 0, 0, this.#used);
      this.#bytes = bigger;
    }
    this.#bytes.write(text, this.#used);
    this.#used += length;
    return length;
  }

  #grow(): void {
    if (this.#size < this.#keyAt.length) return;
    const widen = <T extends Uint32Array | Uint8Array>(array: T, make: (length: number) => T): T => {
      const wider = make(array.length * 2);
      wider.set(array);
      return wider;
    };
    const uint32 = (length: number) => new Uint32Array(length);
    this.#keyAt = widen(this.#keyAt, uint32);
    this.#keyLength = widen(this.#keyLength, uint32);
    this.#platformAt = widen(this.#platformAt, uint32);
    this.#platformLength = widen(this.#platformLength, uint32);
    this.#flags = widen(this.#flags, (length) => new Uint8Array(length));
    if (this.#table.length < this.#keyAt.length * 2) this.#rehash(this.#keyAt.length * 2);
  }

  #rehash(slots: number): void {
    this.#table = new Int32Array(slots);
    for (let entry = 0; entry < this.#size; entry += 1) this.#insert(entry);
  }

  #insert(entry: number): void {
    const at = this.#keyAt[entry] ?? 0;
    const mask = this.#table.length - 1;
    let slot = hash(this.#bytes, at, at + (this.#keyLength[entry] ?? 0)) & mask;
    while (this.#table[slot] !== 0) slot = (slot + 1) & mask;
    this.#table[slot] = entry + 1;
  }

  #find(number: string): number {
    const length = Buffer.byteLength(number);
    if (length > this.#scratch.length) this.#scratch = Buffer.alloc(length * 2);
    this.#scratch.write(number);
    const mask = this.#table.length - 1;
    for (let slot = hash(this.#scratch, 0, length) & mask; ; slot = (slot + 1) & mask) {
      const stored = this.#table[slot] ?? 0;
      if (stored === 0) return -1;
      const entry = stored - 1;
      const at = this.#keyAt[entry] ?? 0;
      if (this.#keyLength[entry] === length && this.#scratch.compare(this.#bytes, at, at + length, 0, length) === 0)
        return entry;
    }
  }
}

/** FNV-1a over bytes [start, end). */
function hash(bytes: Buffer, start: number, end: number): number {
  let value = 0x811c9dc5;
  for (let index = start; index < end; index += 1) value = Math.imul(value ^ (bytes[index] ?? 0), 0x01000193);
  return value >>> 0;
}

/** A collector of one list into a fresh index (ListCollector: one per attempt). */
export function serviceIndexCollector(): ListCollector<ServiceIndex> {
  const index = new ServiceIndex();
  return { add: (item) => index.add(item), result: () => index };
}
