import { compareKeys } from '../intake/index.js';

/**
 * How far staging has come in a run whose export is staged while accounts are sent (docs/complete-or-not.md
 * "Sending while the export is read"). The export is read in external account number order, so
 * once staging has committed the account numbered N, every account numbered up to N has all its
 * rows of this export in the ledger: the executor takes only those (pages, status checks, list
 * answers), and staging never touches an account the executor works on.
 *
 * `finish()`: the whole export is staged (or the run stages nothing, or staged it before sending):
 * every account has passed.
 */
export class StagingGate {
  /** Highest number staged in this read; '' before the first; null: every account has passed. */
  #upTo: string | null = '';
  /** Counts finishes after hold(): the executor's pages start again from the first account. */
  #read = 0;
  #waiting: Array<() => void> = [];
  #held = false;
  /** Accounts staging made ready to create in this run, and how many of them the executor has taken. */
  #ready = 0;
  #taken = 0;
  #wantMore: (() => void) | undefined;
  /** Accounts to create that staging may have ready ahead of the executor (Infinity: no pacing). */
  readonly #lead: number;

  constructor(lead = Infinity) {
    this.#lead = lead;
  }

  /** A gate that every account has passed: the run sends what the ledger holds, with nothing staged meanwhile. */
  static open(): StagingGate {
    const gate = new StagingGate();
    gate.finish();
    return gate;
  }

  /** The highest external account number staging has passed; null: all of them. */
  get upTo(): string | null {
    return this.#upTo;
  }

  get finished(): boolean {
    return this.#upTo === null;
  }

  get read(): number {
    return this.#read;
  }

  passed(externalAccountNumber: string): boolean {
    return this.#upTo === null || compareKeys(externalAccountNumber, this.#upTo) <= 0;
  }

  /** Staging has committed `total` accounts to create in this run so far (the executor takes them in number order). */
  readyToCreate(total: number): void {
    this.#ready = total;
  }

  /** The executor took an account to create. */
  took(): void {
    this.#taken += 1;
    // Woken at half the lead, so that staging reads on in slices of some size.
    if (this.#ready - this.#taken < this.#lead / 2) this.#wakeStaging();
  }

  /**
   * Resolves once fewer than `lead` accounts staged to create wait for the executor (at once
   * while the gate holds: the executor cannot take what the gate has not passed). Staging reads
   * on only that far ahead of the executor: racing through the export, it took every core of a
   * small machine for its first seconds, and requests in flight then came back at two to three
   * times the service's latency; paced, it reads while requests are in flight.
   */
  roomAhead(signal?: AbortSignal): Promise<void> {
    if (this.#held || this.#upTo === null || this.#ready - this.#taken < this.#lead || signal?.aborted)
      return Promise.resolve();
    return new Promise((resolve) => {
      const done = (): void => {
        signal?.removeEventListener('abort', done);
        this.#wantMore = undefined;
        resolve();
      };
      signal?.addEventListener('abort', done, { once: true });
      this.#wantMore = done;
    });
  }

  #wakeStaging(): void {
    this.#wantMore?.();
  }

  /** Staging committed every account up to this number. */
  advance(externalAccountNumber: string): void {
    if (this.#held || this.#upTo === null || compareKeys(externalAccountNumber, this.#upTo) <= 0) return;
    this.#upTo = externalAccountNumber;
    this.#wake();
  }

  /**
   * Entries came out of number order (a source that does not sort): accounts up to the gate may
   * still come, so it stays where it is until finish(), which then starts the executor's pages over.
   */
  hold(): void {
    this.#held = true;
    this.#wakeStaging();
  }

  finish(): void {
    this.#upTo = null;
    if (this.#held) this.#read += 1;
    this.#held = false;
    this.#wake();
  }

  /**
   * Accounts came in below the gate (a shared ledger's lease of an account whose runner is gone, engine/shared-
   * feed.ts):
   * the executor's pages start over from the first account.
   */
  restart(): void {
    this.#read += 1;
    this.#wake();
  }

  /** Resolves at the next advance, restart or finish. */
  changed(): Promise<void> {
    if (this.#upTo === null) return Promise.resolve();
    return new Promise((resolve) => this.#waiting.push(resolve));
  }

  #wake(): void {
    const waiting = this.#waiting;
    this.#waiting = [];
    for (const resolve of waiting) resolve();
  }
}
