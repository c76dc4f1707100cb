import { InvalidArgumentError, Option, type Command } from 'commander';
import { MOVE_FLAG } from '../../config/ledger-service.js';
import { registerServiceOptions, type ServiceFlags } from '../../config/service.js';
import { RUN_DEFAULTS } from '../../defaults.js';
import { STEP_NAMES, type PushStep } from '../../engine/index.js';
import { ALLOW_NO_ACCOUNTS } from '../../intake/accounts-present.js';
import { DEFAULT_UNREACHABLE_SECONDS } from '../../ledger/postgres/index.js';
import { registerContractOption, registerMappingOptions } from '../../cli/mapping-options.js';

// push's options in one table, in the order --help lists them (after --supplier and --config, before --contract and
// the service's options, which validate shares): how the run goes, what it takes on, what it says. Commander's
// registration, --help and the shell completion (cli/completion.ts reads the registered options) come from it.

/** The options of `migrate push <dir>` as commander parses them (read only by resolve.ts). */
export interface PushFlags extends ServiceFlags {
  dir: string;
  state: string;
  supplier?: string;
  config?: string;
  contract?: string;
  concurrency: number;
  rate?: number;
  retryErrored?: boolean;
  wait: boolean;
  waitTimeout: number;
  lostCreateChecks: number;
  batchBytes: number;
  firstAnswerTimeout: number;
  checkPreviouslyAdded: boolean;
  forceAddToCurrentStatement: boolean;
  sandbox?: boolean;
  json?: boolean;
  dryRun?: boolean;
  limit?: number;
  accounts?: string;
  only?: ReadonlySet<PushStep>;
  maxErrors?: MaxErrors;
  logFile?: string;
  moveLedgerToService?: boolean;
  retryInvalid?: readonly string[];
  quiet?: boolean;
  progressInterval?: number;
  metricsFile?: string;
  metricsInterval: number;
  allowNoAccounts?: boolean;
  ledger?: string;
  ledgerTimeout?: number;
}

export type MaxErrors = { count: number } | { percent: number };

interface Flag {
  flags: string;
  group: 'run' | 'selection' | 'output';
  help: string;
  parse?: (value: string) => unknown;
  default?: unknown;
}

const whole = (name: string, max: number) => (value: string) => positiveInt(name, max, value);

// prettier-ignore
export const PUSH_FLAGS: readonly Flag[] = [
  // How the run goes: where its ledger is, what it sends and how fast, how long it waits.
  { group: 'run', flags: '--state <dir>', default: RUN_DEFAULTS.stateDir,
    help: 'state directory holding the results ledger (one per migration cohort)' },
  { group: 'run', flags: '--ledger <url>',
    help: 'the results ledger in PostgreSQL (postgresql://...; else MIGRATE_LEDGER_URL) instead of --state' },
  { group: 'run', flags: '--ledger-timeout <seconds>', parse: whole('--ledger-timeout', 86_400),
    help: 'stop (exit 3) when the PostgreSQL ledger stays unreachable this long ' +
      `(default ${DEFAULT_UNREACHABLE_SECONDS})` },
  { group: 'run', flags: '--concurrency <n>', parse: whole('--concurrency', 1024), default: RUN_DEFAULTS.concurrency,
    help: 'requests in flight at most' },
  { group: 'run', flags: '--batch-bytes <n>', parse: whole('--batch-bytes', 256 * 1024 * 1024),
    default: RUN_DEFAULTS.batchBytes,
    help: 'most bytes of records in one post-import request (a 413 still splits it)' },
  { group: 'run', flags: '--rate <n>', parse: whole('--rate', 100_000),
    help: 'requests per second at most (default: no cap)' },
  { group: 'run', flags: '--retry-errored',
    help: 'create again accounts the platform ERRORED, even if their data did not change' },
  { group: 'run', flags: '--no-wait',
    help: 'schedule accounts only; a later run polls them and pushes their records' },
  { group: 'run', flags: '--wait-timeout <seconds>', parse: whole('--wait-timeout', 7 * 86_400),
    default: RUN_DEFAULTS.waitTimeoutSeconds, help: 'stop waiting when no account has progressed for this long' },
  { group: 'run', flags: '--lost-create-checks <n>', parse: whole('--lost-create-checks', 1000),
    default: RUN_DEFAULTS.lostCreateChecks,
    help: 'status checks finding no import process after a create answered 201 before it is sent again' },
  { group: 'run', flags: '--first-answer-timeout <seconds>', parse: whole('--first-answer-timeout', 86_400),
    default: RUN_DEFAULTS.firstAnswerSeconds,
    help: 'stop the run when a request has no whole answer within this long before the service has answered any' },
  { group: 'run', flags: '--no-check-previously-added',
    help: 'transactions: do not ask the service to skip transactions added before (then a transaction whose ' +
      'outcome is unknown is never resent)' },
  { group: 'run', flags: '--no-force-add-to-current-statement',
    help: 'transactions: fail those outside the open statement period instead of moving them into it' },
  { group: 'run', flags: '--sandbox',
    help: 'start the built-in sandbox (a local simulator of the service) and push there' },
  // What the run takes on: a plan only, a canary, some accounts or steps, an error budget, a moved ledger.
  { group: 'selection', flags: '--dry-run',
    help: 'stage and validate, then print the plan (requests per step, why each account is or is not in it); ' +
      'sends nothing, changes no ledger' },
  { group: 'selection', flags: '--limit <n>', parse: whole('--limit', 100_000_000),
    help: "canary: only the first N accounts still to do (in the ledger's order)" },
  { group: 'selection', flags: '--accounts <list>',
    help: 'only these external account numbers: A,B,C or @file (one per line)' },
  { group: 'selection', flags: ALLOW_NO_ACCOUNTS,
    help: 'the accounts file may hold no account: the export only adds post-import records to accounts imported ' +
      'earlier' },
  { group: 'selection', flags: '--only <steps>', parse: parseSteps,
    help: 'only these steps: comma-separated create,notes,transactions,statements,payment_instructions' },
  { group: 'selection', flags: '--max-errors <n>', parse: parseMaxErrors,
    help: "stop taking new work once more than N (or N% of the run's accounts and records) failed in this run; " +
      'exit 1' },
  { group: 'selection', flags: '--retry-invalid <codes>', parse: parseCodes,
    help: 'send again accounts the service refused with these error codes (comma-separated), e.g. ' +
      'invalid_import_supplier once the supplier is set up' },
  { group: 'selection', flags: MOVE_FLAG,
    help: 'the state directory was used with another service URL, dialect or supplier code (a DNS change): record ' +
      "this run's service as its service from now on" },
  // What the run says: the summary's form, the log, the progress display, the metrics file.
  { group: 'output', flags: '--json',
    help: 'print one JSON summary document on stdout (with --dry-run: the plan, every account)' },
  { group: 'output', flags: '--log-file <path>',
    help: 'append one JSON line per event (run id, account, step, outcome, code; no secret, no personal data) to ' +
      'this file (0600)' },
  { group: 'output', flags: '--quiet',
    help: 'no progress display: the summary only (warnings and errors still go to stderr)' },
  { group: 'output', flags: '--progress-interval <seconds>', parse: whole('--progress-interval', 86_400),
    help: 'seconds between progress lines when stderr is not a terminal ' +
      `(default ${RUN_DEFAULTS.progressIntervalSeconds})` },
  { group: 'output', flags: '--metrics-file <file>',
    help: "write Prometheus metrics (ledger counts, requests, 429s, retries, the runs' end and exit code) to this " +
      "file, for node_exporter's textfile collector (name it *.prom)" },
  { group: 'output', flags: '--metrics-interval <seconds>', parse: whole('--metrics-interval', 86_400),
    default: RUN_DEFAULTS.metricsIntervalSeconds,
    help: 'seconds between writes of --metrics-file (it is also written at the start and at the end)' },
];

/** push's options on `command`: the mapping file's, the table's, the contract's and the service's. */
export function registerPushFlags(command: Command): Command {
  registerMappingOptions(command);
  for (const flag of PUSH_FLAGS) {
    const option = new Option(flag.flags, flag.help);
    if (flag.parse) option.argParser(flag.parse);
    if (flag.default !== undefined) option.default(flag.default);
    command.addOption(option);
  }
  return registerServiceOptions(registerContractOption(command));
}

function positiveInt(name: string, max: number, value: string): number {
  const number = Number(value);
  if (!Number.isInteger(number) || number < 1 || number > max)
    throw new InvalidArgumentError(`${name} must be a whole number from 1 to ${max} (got "${value}").`);
  return number;
}

/** --only create,notes,...: the steps of the run. */
function parseSteps(value: string): ReadonlySet<PushStep> {
  const names = listOf(value);
  if (names.length === 0 || names.some((name) => STEP_NAMES[name] === undefined))
    throw new InvalidArgumentError(
      `--only takes a comma-separated list of ${Object.keys(STEP_NAMES).join(', ')} (got "${value}").`,
    );
  return new Set(names.map((name) => STEP_NAMES[name] as PushStep));
}

/** --retry-invalid CODE[,CODE...]: the service's error codes (letters, digits, _ . -). */
function parseCodes(value: string): readonly string[] {
  const codes = listOf(value);
  if (codes.length === 0 || codes.some((code) => !/^[A-Za-z0-9_.-]+$/.test(code)))
    throw new InvalidArgumentError(
      `--retry-invalid takes the service's error codes, comma-separated (e.g. invalid_import_supplier) (got ` +
        `"${value}").`,
    );
  return codes;
}

/** --max-errors N or N%: failures tolerated in this run. */
function parseMaxErrors(value: string): MaxErrors {
  const match = /^(\d+(?:\.\d+)?)(%?)$/.exec(value.trim());
  const number = Number(match?.[1]);
  if (match && match[2] === '%' && number <= 100) return { percent: number };
  if (match && match[2] === '' && Number.isInteger(number)) return { count: number };
  throw new InvalidArgumentError(
    `--max-errors takes a whole number of failures (e.g. 25) or a percentage from 0% to 100% (e.g. 2%) (got ` +
      `"${value}").`,
  );
}

/** A comma-separated list, its items trimmed, empty ones dropped. */
function listOf(value: string): string[] {
  return value
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '');
}
