// Cron mail with time: when push's output is not a terminal (cron, a pipe, a log file), every line it prints starts
// with the time and the run's id (`2026-11-27T04:20:00.000Z run 12 `), so that five runs appended to one file can be
// told apart, and a line read on its own says when and by which run. A terminal gets the lines as they are, and so
// does a JSON document on stdout (--json), which stays one parseable document. MIGRATE_TIMESTAMPS=0 turns the
// stamps off where the log collector adds its own (journald, a container runtime). A line that must be stamped
// wherever it goes (which run configuration and which service a command uses) is stamped on a terminal too.

type Writable = Pick<NodeJS.WriteStream, 'write'> & { isTTY?: boolean };

let runId: number | undefined;
/** The streams stampLines stamps already: a stamped line written to one of them is not stamped twice. */
const stamped = new WeakSet<object>();

/** `2026-11-27T04:20:00.000Z run 12 `: the time and the run's id (`-` before the ledger gives one, or with none). */
const stampOf = (now: Date): string => `${now.toISOString()} run ${runId ?? '-'} `;

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
  stamped.add(stream);
  const write = stream.write.bind(stream) as (chunk: string | Uint8Array, ...rest: unknown[]) => boolean;
  let atLineStart = true;
  const stampedWrite = (chunk: string | Uint8Array, ...rest: unknown[]): boolean => {
    const text = typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
    const prefix = stampOf(now());
    let out = '';
    for (const piece of text.split(/(?<=\n)/)) {
      if (piece === '') continue;
      // An empty line stays empty: it separates a summary's sections, and says nothing to stamp.
      out += atLineStart && piece !== '\n' ? prefix + piece : piece;
      atLineStart = piece.endsWith('\n');
    }
    return write(out, ...rest);
  };
  stream.write = stampedWrite;
}

/** One line on `stream`, stamped as stampLines stamps, on a terminal too (unless MIGRATE_TIMESTAMPS=0). */
export function writeStampedLine(
  stream: Writable,
  line: string,
  env: NodeJS.ProcessEnv,
  now: () => Date = () => new Date(),
): void {
  const prefix = stamped.has(stream) || !stampsWanted(env) ? '' : stampOf(now());
  stream.write(`${prefix}${line}\n`);
}
