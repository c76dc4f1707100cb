/**
 * What a command opened, closed in the reverse order of opening. Every closer runs even if one fails (a full disk fails
 * the run's last ledger write, and an unreleased lock or a live timer would keep the process from exiting); the first
 * failure is kept for the caller. `Ending`: what the closers are told of how the command ended.
 */
export class Closers<Ending> {
  #closers: Array<(ending: Ending) => unknown> = [];

  add(close: (ending: Ending) => unknown): void {
    this.#closers.unshift(close);
  }

  /** Runs every closer once; returns the first failure (each is also given to `onError`). */
  async close(ending: Ending, onError: (error: unknown) => void): Promise<unknown> {
    let first: unknown;
    for (const close of this.#closers.splice(0)) {
      try {
        await close(ending);
      } catch (error) {
        first ??= error;
        onError(error);
      }
    }
    return first;
  }
}
