/**
 * Sorted runs merged by their heads (a binary min-heap): the run whose head comes first is on top; when its head has
 * moved on it sinks to its place, and a run that has ended leaves the heap. Used by the sort on disk and by the rows
 * read at their places.
 */
export class MergeHeap<T> {
  readonly #items: T[] = [];
  readonly #before: (a: T, b: T) => boolean;

  /** `before(a, b)`: a's head comes before b's (ties broken by run order, so rows of one key keep file order). */
  constructor(runs: readonly T[], before: (a: T, b: T) => boolean) {
    this.#before = before;
    for (const run of runs) this.#push(run);
  }

  /** The run holding the next head, or undefined once every run has ended. */
  top(): T | undefined {
    return this.#items[0];
  }

  /** Call after the top run's head moved on; `ended`: it has no head left. */
  settleTop(ended: boolean): void {
    const items = this.#items;
    if (ended) {
      const last = items.pop() as T;
      if (items.length === 0) return;
      items[0] = last;
    }
    this.#down(0);
  }

  #push(run: T): void {
    const items = this.#items;
    items.push(run);
    for (let at = items.length - 1; at > 0;) {
      const parent = (at - 1) >> 1;
      if (!this.#before(items[at] as T, items[parent] as T)) break;
      [items[at], items[parent]] = [items[parent] as T, items[at] as T];
      at = parent;
    }
  }

  #down(start: number): void {
    const items = this.#items;
    for (let at = start; ;) {
      const left = 2 * at + 1;
      const right = left + 1;
      let least = at;
      if (left < items.length && this.#before(items[left] as T, items[least] as T)) least = left;
      if (right < items.length && this.#before(items[right] as T, items[least] as T)) least = right;
      if (least === at) return;
      [items[at], items[least]] = [items[least] as T, items[at] as T];
      at = least;
    }
  }
}
