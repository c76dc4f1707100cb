/**
 * Exit codes shared by every command (README "Exit codes"). Only src/cli/main.ts sets the
 * process exit code; everything else returns a value or throws a MigrateError.
 */
export const ExitCode = {
  ok: 0,
  /** Finished what it could; what is left a later run takes up by itself (waiting on the service, not sent yet). */
  unfinished: 1,
  /** Bad flag, unreadable directory, bad mapping file, unparseable input file: nothing was written. */
  usage: 2,
  /** Authentication failed, supplier not accepting migrations, service unreachable after retries. */
  fatal: 3,
  /** Another run holds the state directory's lock. */
  locked: 4,
  /** Finished what it could; what is left needs a person (data to fix, ERRORED accounts, refused records). */
  needsPerson: 5,
  /** Stopped by SIGINT/SIGTERM; the ledger is consistent. */
  interrupted: 130,
} as const;

export type ExitCodeValue = (typeof ExitCode)[keyof typeof ExitCode];

/** What a command leaves when it finished what it could: for a person to act on, for a later run to take up. */
export interface Left {
  forPerson: number;
  forLaterRun: number;
}

/**
 * The exit code of a command that finished what it could (README "Exit codes"), the one rule of push, status and
 * validate: 5 when anything left needs a person, even while other work waits; else 1 when a later run progresses what
 * is left by itself; else 0.
 */
export function exitCodeOfLeft(left: Left): ExitCodeValue {
  if (left.forPerson > 0) return ExitCode.needsPerson;
  return left.forLaterRun > 0 ? ExitCode.unfinished : ExitCode.ok;
}

/**
 * An error the user can act on: printed as its message alone (no stack trace), then the
 * process exits with `exitCode`. `code` is stable and machine-readable.
 */
export class MigrateError extends Error {
  readonly code: string;
  readonly exitCode: ExitCodeValue;

  constructor(message: string, options: { code: string; exitCode: ExitCodeValue; cause?: unknown }) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = options.code;
    this.exitCode = options.exitCode;
  }
}

/** Raised for a bad flag, option, configuration or mapping file: exit 2. */
export class UsageError extends MigrateError {
  constructor(message: string, code = 'usage', cause?: unknown) {
    super(message, { code, exitCode: ExitCode.usage, cause });
  }
}

/** Raised for an input file that cannot be read or parsed at all; names the file and line: exit 2. */
export class InputError extends MigrateError {
  readonly file: string;
  readonly line: number | undefined;

  constructor(file: string, line: number | undefined, message: string, code = 'input_unreadable', cause?: unknown) {
    const at = visibleValue(file);
    super(`${line === undefined ? at : `${at}:${line}`}: ${message}`, { code, exitCode: ExitCode.usage, cause });
    this.file = file;
    this.line = line;
  }
}

/** Raised when SIGINT, SIGTERM or SIGHUP stopped a command before it had anything to finish: exit 130. */
export class InterruptedError extends MigrateError {
  constructor(when: string, next = 'the ledger is consistent: run the same command again to go on') {
    super(`interrupted ${when}; ${next}.`, {
      code: 'interrupted',
      exitCode: ExitCode.interrupted,
    });
  }
}

/** Raised when the run cannot go on (authentication, supplier not ongoing, service unreachable): exit 3. */
export class FatalError extends MigrateError {
  constructor(message: string, code = 'fatal', cause?: unknown) {
    super(message, { code, exitCode: ExitCode.fatal, cause });
  }
}

/**
 * How long an error detail may be where it is kept or shown: the ledger, the NDJSON log, reports, printed messages
 * (docs/limits.md "Limits on what the service answers"). A service may send megabytes in one error; a person needs
 * its start, and how long it was.
 */
export const DETAIL_LIMIT = 2_000;
/** Codes (the service's or the tool's) are identifiers: longer ones are cut as details are. */
export const CODE_LIMIT = 100;

const STATED_LENGTH = /\.\.\. \([\d,]{1,20} characters in all\)$/;

/**
 * `text` itself, or its first `limit` characters followed by `... (10,485,760 characters in all)`. A text limited
 * before (a ledger row a report shows) is kept as it is: its length stated is the original's.
 */
export function limitDetail(text: string, limit = DETAIL_LIMIT): string {
  if (text.length <= limit) return text;
  const stated = STATED_LENGTH.exec(text);
  if (stated !== null && stated.index <= limit) return text;
  // Never half of a surrogate pair.
  const end = /[\uD800-\uDBFF]/.test(text.charAt(limit - 1)) ? limit - 1 : limit;
  return `${text.slice(0, end)}... (${text.length.toLocaleString('en-GB')} characters in all)`;
}

/**
 * Control characters a terminal would obey, shown instead (docs/operators-guide.md "What reaches your terminal"): C0
 * controls but tab and line feed, DEL, the C1 controls (U+0080-U+009F, which some terminals take as ESC [ and
 * others), and the bidirectional overrides that reorder what is shown. A service's message, an error stored in the
 * ledger, an export cell or a file name cannot then move the cursor, retitle the window or write the clipboard (OSC
 * 52): ESC is shown as \x1b. Used at every edge that prints text from outside.
 */
// eslint-disable-next-line no-control-regex -- control characters are what this finds
const INVISIBLE = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

export function visibleText(text: string): string {
  return text.replace(INVISIBLE, (char) => {
    const code = char.charCodeAt(0);
    return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
  });
}

/**
 * JSON text with those characters written as JSON escapes (\u009b): the same value for a program, nothing a terminal
 * obeys when a person reads it there. JSON.stringify escapes C0 controls but leaves DEL, C1 and the overrides raw.
 */
export function visibleJson(json: string): string {
  return json.replace(INVISIBLE, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/**
 * A file name or value shown inside a line of the tool's text: every control character escaped as `visibleText`
 * does, and line breaks and tabs too (`\n`, `\t`), which the tool's own layout keeps. A legacy file named with a line
 * break then cannot forge a line of the output, such as a stamped "push finished: everything done".
 */
export function visibleValue(text: string): string {
  return visibleText(text).replace(/[\t\n]/g, (char) => (char === '\n' ? '\\n' : '\\t'));
}

/** `value` with every string in it (deeply: arrays and plain objects) shown as `visibleValue` shows one. */
export function visibleStrings<T>(value: T): T {
  if (typeof value === 'string') return visibleValue(value) as T;
  if (Array.isArray(value)) return value.map((entry: unknown) => visibleStrings(entry)) as T;
  if (value === null || typeof value !== 'object' || Object.getPrototypeOf(value) !== Object.prototype) return value;
  return Object.fromEntries(Object.entries(value).map(([key, entry]) => [key, visibleStrings(entry)])) as T;
}

/** What was thrown, said in words: an Error's message, anything else as a string. */
export function messageOf(thrown: unknown): string {
  return thrown instanceof Error ? thrown.message : String(thrown);
}

/** The errno code of a failed system call or SQLite statement (ENOENT, SQLITE_FULL, ...); undefined: none. */
export function errnoOf(thrown: unknown): string | undefined {
  return typeof thrown === 'object' && thrown !== null && 'code' in thrown && typeof thrown.code === 'string'
    ? thrown.code
    : undefined;
}

/** What was thrown, as an Error (anything else wrapped, its text the message). */
export function errorOf(thrown: unknown): Error {
  return thrown instanceof Error ? thrown : new Error(String(thrown));
}
