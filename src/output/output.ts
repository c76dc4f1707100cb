// Writing a command's output to stdout with back-pressure, ending quietly when the reader goes
// away (`migrate status ... --json | head`): EPIPE is the reader's choice, not an error to
// print with a stack trace.

/** Thrown by `write` once stdout is closed by its reader; the command stops and exits 0. */
export class OutputClosed extends Error {
  constructor() {
    super('stdout closed by its reader');
    this.name = 'OutputClosed';
  }
}

export interface Output {
  write(text: string): Promise<void>;
  /** Removes the error listener; call when the command ends. */
  dispose(): void;
}

export function stdoutOutput(stream: NodeJS.WriteStream = process.stdout): Output {
  let closed = false;
  let failure: Error | undefined;
  const onError = (error: NodeJS.ErrnoException): void => {
    if (error.code === 'EPIPE') closed = true;
    else failure ??= error;
  };
  stream.on('error', onError);
  const check = (): void => {
    if (closed) throw new OutputClosed();
    if (failure !== undefined) throw failure;
  };
  return {
    write: async (text) => {
      check();
      const drained = stream.write(text)
        ? Promise.resolve()
        : new Promise<void>((resolve) => {
            const done = (): void => {
              stream.off('drain', done);
              stream.off('error', done);
              resolve();
            };
            stream.once('drain', done);
            stream.once('error', done);
          });
      await drained;
      // An EPIPE is reported asynchronously: let it arrive before the next write is accepted.
      await new Promise((resolve) => setImmediate(resolve));
      check();
    },
    dispose: () => {
      // Errors after the command (a late EPIPE) must not crash the process either.
      stream.off('error', onError);
      stream.on('error', () => undefined);
    },
  };
}

/** Whether colour is wanted: a terminal, and NO_COLOR (https://no-color.org) not set. */
export function colorWanted(stream: { isTTY?: boolean }, env: NodeJS.ProcessEnv): boolean {
  return stream.isTTY === true && (env['NO_COLOR'] === undefined || env['NO_COLOR'] === '');
}
