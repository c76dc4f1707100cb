import { closeSync, fchmodSync, writeSync } from 'node:fs';
import { errorOf, limitDetail } from '../../errors.js';
import type { EngineEvent, EventSink } from '../../engine/events.js';
import type { AccountState } from '../../ledger/index.js';
import { openOutputFile } from '../../output/output-file.js';

// `push --log-file <path>`: one JSON line per engine event, for reading what a 3 a.m.
// cron run did (`jq`, `grep`). A line holds the time, the run id, the account's external
// account number, the step and its outcome or code: never the API key or a token (the engine's
// events carry none), and no personal data (no payload field, note body, name, e-mail or
// phone: only the fields chosen below are written, never a whole event or an error text).
// The file is 0600, appended to (one file may span many runs: the run id tells them apart). Each run's first line
// (`log_opened`) names the run configuration it read and the service URL it talks to.

export interface NdjsonLogOptions {
  /** The ledger's run id of this push. */
  runId: number;
  /** External account number of a ledger account id, for events that carry only the id. */
  accountNumberOf?: (accountId: number) => string | undefined;
  /** Time source (tests). */
  now?: () => Date;
  /** The run configuration read (null: none) and the service's URL: said by the first line. */
  origin?: { run_config: string | null; service_url: string | null };
}

export interface NdjsonLogSink extends EventSink {
  /** Writes what is buffered; called by close() and after each event batch. */
  flush(): void;
  /**
   * Writes the closing line (with the run's outcome and exit code when given: what a cron run
   * ended with), flushes and closes the file. Check `failure` afterwards.
   */
  close(end?: { outcome: string; exitCode: number }): void;
  /** The first write failure (disk full...): logging stopped, the run went on. */
  readonly failure: Error | undefined;
}

type LogLine = Record<string, string | number | boolean | Record<string, number> | null | undefined>;

/** The step an account's state change belongs to (architecture.md's state machine). */
export function stepOf(from: AccountState, to: AccountState): string {
  if (to === 'creating' || from === 'creating') return from === 'creating' && to === 'staged' ? 'reconcile' : 'create';
  if (from === 'scheduled') return 'poll';
  if (from === 'unresolved' || to === 'unresolved') return 'resolve';
  if (to === 'done') return 'post_import';
  if (from === 'errored' || from === 'invalid') return 'retry';
  return 'account';
}

/** The log line of an event: an explicit choice of fields, so nothing else can slip in. */
export function logLineOf(event: EngineEvent, accountNumberOf: (accountId: number) => string | undefined): LogLine {
  switch (event.type) {
    case 'staging':
      return { event: 'staging', accounts: event.accounts, orphans: event.orphans };
    case 'staged':
      return {
        event: 'staged',
        accounts: event.accounts,
        invalid: event.invalid,
        orphans: event.orphans,
        changed_after_import: event.changedAfterImport,
        records_changed_after_import: event.recordsChangedAfterImport,
      };
    case 'sorting':
      return { event: 'sorting', files: event.files.map((file) => file.file).join(', ') };
    case 'order':
      return { event: 'order', ms: Math.round(event.ms), files: event.files, out_of_order: event.outOfOrder };
    case 'reading':
      return { event: 'reading', file: event.file };
    case 'plan':
      return { event: 'plan', to_create: event.toCreate, to_process: event.toProcess, items: { ...event.items } };
    case 'account':
      return {
        event: 'account',
        account: event.externalAccountNumber,
        step: stepOf(event.from, event.to),
        from: event.from,
        outcome: event.to,
        code: event.code,
      };
    case 'invalid':
      // Local validation, while staging: the account is held back; its first problem names file and line.
      return {
        event: 'account',
        account: event.externalAccountNumber,
        step: 'validate',
        outcome: 'invalid',
        code: event.code,
        file: event.file,
        line: event.line,
        issues: event.issues,
      };
    case 'items': {
      const outcome = event.failed > 0 ? 'failed' : event.unknown > 0 ? 'unknown' : 'done';
      return {
        event: 'items',
        account: accountNumberOf(event.accountId),
        step: event.kind,
        outcome,
        done: event.done,
        failed: event.failed,
        unknown: event.unknown,
        code: event.code,
      };
    }
    case 'retrying':
      return { event: 'retrying', code: event.code };
    case 'status_word':
      return { event: 'status_word', step: event.endpoint, word: event.word };
    case 'stopping':
      // `detail` is free text (it may quote the service): the reason and the fatal code are enough to act on.
      return { event: 'stopping', outcome: event.reason, code: event.code };
  }
}

/** The line with every text bounded (docs/limits.md): a code may come from the service. */
function bounded(line: LogLine): LogLine {
  const kept: LogLine = {};
  for (const [key, value] of Object.entries(line)) kept[key] = typeof value === 'string' ? limitDetail(value) : value;
  return kept;
}

/** How many account numbers are remembered from account events (bounded memory on long runs). */
const REMEMBERED = 10_000;
const FLUSH_BYTES = 64 * 1024;

/** Opens (creates 0600, or appends to and tightens) the log file and returns the sink. */
export function createNdjsonLogSink(path: string, options: NdjsonLogOptions): NdjsonLogSink {
  // Not through a planted link, not into another user's file (output-file.ts): exit 2 saying why.
  let fd: number | undefined = openOutputFile('--log-file', path, 'append');
  fchmodSync(fd, 0o600);
  const now = options.now ?? (() => new Date());
  const numbers = new Map<number, string>();
  const lookup = (accountId: number): string | undefined =>
    numbers.get(accountId) ?? options.accountNumberOf?.(accountId);
  let buffer: string[] = [];
  let size = 0;
  let scheduled = false;
  let failure: Error | undefined;
  const flush = (): void => {
    scheduled = false;
    if (buffer.length === 0 || fd === undefined) return;
    const text = buffer.join('');
    buffer = [];
    size = 0;
    if (failure !== undefined) return;
    try {
      writeSync(fd, text);
    } catch (error) {
      failure = errorOf(error);
    }
  };
  const write = (line: LogLine): void => {
    const text = `${JSON.stringify({ time: now().toISOString(), run: options.runId, ...bounded(line) })}\n`;
    buffer.push(text);
    size += text.length;
    if (size >= FLUSH_BYTES) flush();
    else if (!scheduled) {
      // Lines of one turn of the event loop go out together, soon after: a crash loses at most that turn.
      scheduled = true;
      setImmediate(flush);
    }
  };
  write({ event: 'log_opened', ...options.origin });
  return {
    emit: (event) => {
      if (event.type === 'account') {
        numbers.delete(event.accountId);
        numbers.set(event.accountId, event.externalAccountNumber);
        if (numbers.size > REMEMBERED) numbers.delete(numbers.keys().next().value as number);
      }
      write(logLineOf(event, lookup));
    },
    flush,
    close: (end) => {
      if (fd === undefined) return;
      write({ event: 'log_closed', ...(end === undefined ? {} : { outcome: end.outcome, exit_code: end.exitCode }) });
      flush();
      if (fd !== undefined) closeSync(fd);
      fd = undefined;
    },
    get failure() {
      return failure;
    },
  };
}
