import type { AccountRow, AccountState } from '../ledger/index.js';
import { STATE_FACTS } from './account-states.js';

/**
 * The accounts a filtered run may touch (--limit, --accounts: the plan's selection), with the
 * next status check of those parked (scheduled, or a create being reconciled). A filtered run
 * polls from here rather than from the ledger's due checks: other parked accounts (left by an
 * earlier --no-wait run) are due too, and must neither be touched nor keep the run waiting.
 */
export class Selection {
  readonly #entries: Map<number, { state: AccountState; nextCheckAt: number | null }>;

  constructor(entries: ReadonlyMap<number, { state: AccountState; nextCheckAt: number | null }>) {
    this.#entries = new Map(
      [...entries].map(([id, entry]) => [
        id,
        { state: entry.state, nextCheckAt: STATE_FACTS[entry.state].waiting ? entry.nextCheckAt : null },
      ]),
    );
  }

  get size(): number {
    return this.#entries.size;
  }

  has(id: number): boolean {
    return this.#entries.has(id);
  }

  /** Where a chain of work left the account. */
  update(row: Pick<AccountRow, 'id' | 'state' | 'nextCheckAt'>): void {
    if (!this.#entries.has(row.id)) return;
    this.#entries.set(row.id, {
      state: row.state,
      nextCheckAt: STATE_FACTS[row.state].waiting ? row.nextCheckAt : null,
    });
  }

  /** Ids whose status check is due, earliest first. */
  due(now: number, limit: number): number[] {
    const due: Array<[number, number]> = [];
    for (const [id, entry] of this.#entries)
      if (entry.nextCheckAt !== null && entry.nextCheckAt <= now) due.push([id, entry.nextCheckAt]);
    return due
      .sort((a, b) => a[1] - b[1])
      .slice(0, limit)
      .map(([id]) => id);
  }

  nextCheckAt(): number | null {
    let next: number | null = null;
    for (const entry of this.#entries.values())
      if (entry.nextCheckAt !== null && (next === null || entry.nextCheckAt < next)) next = entry.nextCheckAt;
    return next;
  }

  countInState(state: AccountState): number {
    let count = 0;
    for (const entry of this.#entries.values()) if (entry.state === state) count += 1;
    return count;
  }
}
