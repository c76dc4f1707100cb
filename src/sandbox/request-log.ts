import type { FaultName } from './faults.js';

// What the inspector reports about requests: one entry per request (never its headers, so
// never the Authorization header), and how many were in flight at once.

export interface RequestLogEntry {
  /** 1-based arrival order since the sandbox started (not reset by resetLog). */
  seq: number;
  method: string;
  /** The path without the query string, e.g. `/v2/data-import/accounts/`. */
  path: string;
  /** The query string without `?` ('' when none). */
  query: string;
  /** The status sent; null when the connection was destroyed without a response. */
  status: number | null;
  fault: FaultName | null;
  /** Epoch milliseconds (fractional) when the request arrived and when it ended. */
  startedAt: number;
  endedAt: number;
}

export class RequestLog {
  readonly #entries: RequestLogEntry[] = [];
  readonly #record: boolean;
  #seq = 0;
  #inFlight = 0;
  #maxInFlight = 0;
  #total = 0;

  constructor(record: boolean) {
    this.#record = record;
  }

  begin(): number {
    this.#inFlight++;
    this.#total++;
    if (this.#inFlight > this.#maxInFlight) this.#maxInFlight = this.#inFlight;
    return ++this.#seq;
  }

  end(entry: RequestLogEntry): void {
    this.#inFlight--;
    if (this.#record) this.#entries.push(entry);
  }

  entries(): RequestLogEntry[] {
    return this.#entries.map((entry) => ({ ...entry }));
  }

  get inFlight(): number {
    return this.#inFlight;
  }

  get maxInFlight(): number {
    return this.#maxInFlight;
  }

  /** Requests received since the last reset, recorded or not. */
  get total(): number {
    return this.#total;
  }

  /** Empties the log; the in-flight maximum restarts from the requests in flight now. */
  reset(): void {
    this.#entries.length = 0;
    this.#maxInFlight = this.#inFlight;
    this.#total = 0;
  }
}
