// A manual clock for the pure parts: sleep() resolves only when advance() passes its deadline.
export class FakeTime {
  now = 0;
  readonly #sleepers: Array<{ at: number; resolve: () => void }> = [];

  readonly clock = { now: (): number => this.now };

  readonly sleep = (ms: number): Promise<void> =>
    new Promise((resolve) => {
      this.#sleepers.push({ at: this.now + ms, resolve });
    });

  /** Moves time forward, waking sleepers in order and letting their continuations run. */
  async advance(ms: number): Promise<void> {
    const end = this.now + ms;
    for (;;) {
      this.#sleepers.sort((a, b) => a.at - b.at);
      const next = this.#sleepers[0];
      if (!next || next.at > end) break;
      this.#sleepers.shift();
      this.now = Math.max(this.now, next.at);
      next.resolve();
      await flush();
    }
    this.now = end;
    await flush();
  }

  get pendingSleeps(): number {
    return this.#sleepers.length;
  }
}

export async function flush(): Promise<void> {
  for (let index = 0; index < 5; index += 1) await Promise.resolve();
}
