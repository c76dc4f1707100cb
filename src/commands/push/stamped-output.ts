// Cron mail with time: when push's output is not a terminal (cron, a pipe, a log file), every line it prints starts
// with the time and the run's id (`2026-11-27T04:20:00.000Z run 12 `), so that five runs appended to one file can be
// told apart, and a line read on its own says when and by which run. A terminal gets the lines as they are, and so
// does a JSON document on stdout (--json), which stays one parseable document. MIGRATE_TIMESTAMPS=0 turns the
// stamps off where the log collector adds its own (journald, a container runtime).

type Writable = Pick<NodeJS.WriteStream, 'write'> & { isTTY?: boolean };

let runId: number | undefined;

export function stampsWanted(env: NodeJS.ProcessEnv): boolean {
  return env['MIGRATE_TIMESTAMPS'] !== '0';
}

/** The run's id, from the moment the ledger has given it: the lines before it say `run -`. */
export function stampRunId(id: number): void {
  runId = id;
}

/** Prefixes every line written to `stream` from now on (if it is not a terminal) with the time and the run's id. */
export function stampLines(stream: Writable, now: () => Date = () => new Date()): void {
  if (stream.isTTY === true) return;
  const write = stream.write.bind(stream) as (chunk: string | Uint8Array, ...rest: unknown[]) => boolean;
  let atLineStart = true;
  const stamped = (chunk: string | Uint8Array, ...rest: unknown[]): boolean => {
    const text = typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
    const prefix = `${now().toISOString()} run ${runId ?? '-'} `;
    let out = '';
    for (const piece of text.split(/(?<=\n)/)) {
      if (piece === '') continue;
      // An empty line stays empty: it separates a summary's sections, and says nothing to stamp.
      out += atLineStart && piece !== '\n' ? prefix + piece : piece;
      atLineStart = piece.endsWith('\n');
    }
    return write(out, ...rest);
  };
  stream.write = stamped;
}
