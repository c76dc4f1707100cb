import cliProgress from 'cli-progress';

/**
 * A progress bar on a terminal only: bytes while reading (and, streaming, validating), then accounts while validating
 * staged records.
 */
export class ValidateProgress {
  #bar: cliProgress.SingleBar | undefined;
  #counting = false;

  reading(join: 'scratch' | 'streaming', bytes: number, total: number): void {
    if (!this.#bar) {
      const label = join === 'streaming' ? 'validating' : 'reading   ';
      this.#bar = new cliProgress.SingleBar(
        { stream: process.stderr, format: `${label} [{bar}] {percentage}%`, hideCursor: true, clearOnComplete: true },
        cliProgress.Presets.shades_classic,
      );
      this.#bar.start(Math.max(total, 1), 0);
    }
    this.#bar.update(bytes);
  }

  joining(total: number): void {
    this.#bar?.stop();
    this.#counting = true;
    this.#bar = new cliProgress.SingleBar(
      {
        stream: process.stderr,
        format: 'validating [{bar}] {value}/{total} accounts',
        hideCursor: true,
        clearOnComplete: true,
      },
      cliProgress.Presets.shades_classic,
    );
    this.#bar.start(Math.max(total, 1), 0);
  }

  tick(): void {
    if (this.#counting) this.#bar?.increment();
  }

  stop(): void {
    this.#bar?.stop();
    this.#bar = undefined;
    this.#counting = false;
  }
}
