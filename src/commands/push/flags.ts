import type { Command } from 'commander';
import { MOVE_FLAG } from '../../config/ledger-service.js';
import { registerServiceOptions, type ServiceFlags } from '../../config/service.js';
import { RUN_DEFAULTS } from '../../defaults.js';
import type { PushStep } from '../../engine/index.js';
import { DEFAULT_UNREACHABLE_SECONDS } from '../../ledger/postgres/index.js';
import {
  registerContractOption,
  registerMappingOptions,
  registerOpenPeriodOptions,
  type MappingFlags,
} from '../common/mapping-options.js';
import {
  addOptions,
  ALLOW_NO_ACCOUNTS_OPTION,
  LEDGER_OPTION,
  STATE_OPTION,
  type OptionRow,
} from '../common/option-table.js';
import { parseCodes, parseMaxErrors, parseSteps, numberOption, type MaxErrors } from '../common/option-parsers.js';
import type { RunOrigin } from '../common/run-origin.js';
import { SHAPE_LIMIT_OPTIONS } from '../common/shape-limits.js';

// push's options in one table, in --help's order (between the mapping file's options and the contract's and service's,
// which validate shares), each with its --help heading: commander's registration, --help and the completion follow.

/** The options of `migrate push <dir>` as commander parses them (read only by resolve.ts). */
export interface PushFlags extends ServiceFlags, MappingFlags {
  state: string;
  concurrency: number;
  rate?: number;
  retryErrored?: boolean;
  wait: boolean;
  waitTimeout: number;
  lostCreateChecks: number;
  batchBytes: number;
  firstAnswerTimeout: number;
  checkPreviouslyAdded: boolean;
  sandbox?: boolean;
  json?: boolean;
  dryRun?: boolean;
  /** What the run's first line said: the run configuration and the service (set by the action, not a flag). */
  origin?: RunOrigin | undefined;
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

/** A whole number from 1 to `max`. */
const upTo = (name: string, max: number): ((value: string) => number) => numberOption(name, { min: 1, max });

// prettier-ignore
export const PUSH_FLAGS: readonly OptionRow[] = [
  STATE_OPTION,
  LEDGER_OPTION,
  { group: 'Tuning', flags: '--ledger-timeout <seconds>', parse: upTo('--ledger-timeout', 86_400),
    help: 'stop (exit 3) when the PostgreSQL ledger stays unreachable this long ' +
      `(default ${DEFAULT_UNREACHABLE_SECONDS})` },
  { group: 'Tuning', flags: '--concurrency <n>', parse: upTo('--concurrency', 1024),
    default: RUN_DEFAULTS.concurrency, help: 'requests in flight at most' },
  { group: 'Tuning', flags: '--batch-bytes <n>', parse: upTo('--batch-bytes', 256 * 1024 * 1024),
    default: RUN_DEFAULTS.batchBytes,
    help: 'most bytes of records in one post-import request (a 413 still splits it)' },
  { group: 'Tuning', flags: '--rate <n>', parse: upTo('--rate', 100_000),
    help: 'requests per second at most (default: no cap)' },
  { group: 'Selection', flags: '--retry-errored',
    help: 'create again accounts the platform ERRORED, even if their data did not change' },
  { group: 'Tuning', flags: '--no-wait',
    help: 'schedule accounts only; a later run polls them and pushes their records' },
  { group: 'Tuning', flags: '--wait-timeout <seconds>', parse: upTo('--wait-timeout', 7 * 86_400),
    default: RUN_DEFAULTS.waitTimeoutSeconds, help: 'stop waiting when no account has progressed for this long' },
  { group: 'Tuning', flags: '--lost-create-checks <n>', parse: upTo('--lost-create-checks', 1000),
    default: RUN_DEFAULTS.lostCreateChecks,
    help: 'status checks finding no import process after a create answered 201 before it is sent again' },
  { group: 'Tuning', flags: '--first-answer-timeout <seconds>', parse: upTo('--first-answer-timeout', 86_400),
    default: RUN_DEFAULTS.firstAnswerSeconds,
    help: 'stop the run when a request has no whole answer within this long before the service has answered any' },
  { group: 'Tuning', flags: '--no-check-previously-added',
    help: 'transactions: do not ask the service to skip transactions added before (then a transaction whose ' +
      'outcome is unknown is never resent)' },
  { group: 'Service', flags: '--sandbox',
    help: 'start the built-in sandbox (a local simulator of the service) and push there' },
  { group: 'Tuning', flags: '--dry-run',
    help: 'stage and validate, then print the plan (requests per step, why each account is or is not in it); ' +
      'sends nothing, changes no ledger' },
  { group: 'Selection', flags: '--limit <n>', parse: upTo('--limit', 100_000_000),
    help: "canary: only the first N accounts still to do (in the ledger's order)" },
  { group: 'Selection', flags: '--accounts <list>',
    help: 'only these external account numbers: A,B,C or @file (one per line)' },
  ALLOW_NO_ACCOUNTS_OPTION,
  { group: 'Selection', flags: '--only <steps>', parse: parseSteps,
    help: 'only these steps: comma-separated create,notes,transactions,statements,payment_instructions' },
  { group: 'Tuning', flags: '--max-errors <n>', parse: parseMaxErrors,
    help: "stop taking new work once more than N (or N% of the run's accounts and records) failed in this run; " +
      'exit 1, or 5 when what is left needs a person' },
  { group: 'Selection', flags: '--retry-invalid <codes>', parse: parseCodes,
    help: 'send again accounts the service refused with these error codes (comma-separated), e.g. ' +
      'invalid_import_supplier once the supplier is set up' },
  { group: 'Service', flags: MOVE_FLAG,
    help: 'the state directory was used with another service URL, dialect or supplier code (a DNS change): record ' +
      "this run's service as its service from now on" },
  { group: 'Output', flags: '--json',
    help: 'print one JSON summary document on stdout (with --dry-run: the plan, every account)' },
  { group: 'Output', flags: '--log-file <path>',
    help: 'append one JSON line per event (run id, account, step, outcome, code; no secret, no personal data) to ' +
      'this file (0600)' },
  { group: 'Output', flags: '--quiet',
    help: 'no progress display: the summary only (warnings and errors still go to stderr)' },
  { group: 'Output', flags: '--progress-interval <seconds>', parse: upTo('--progress-interval', 86_400),
    help: 'seconds between progress lines when stderr is not a terminal ' +
      `(default ${RUN_DEFAULTS.progressIntervalSeconds})` },
  { group: 'Output', flags: '--metrics-file <file>',
    help: "write Prometheus metrics (ledger counts, requests, 429s, retries, the runs' end and exit code) to this " +
      "file, for node_exporter's textfile collector (name it *.prom)" },
  { group: 'Output', flags: '--metrics-interval <seconds>', parse: upTo('--metrics-interval', 86_400),
    default: RUN_DEFAULTS.metricsIntervalSeconds,
    help: 'seconds between writes of --metrics-file (it is also written at the start and at the end)' },
  ...SHAPE_LIMIT_OPTIONS,
];

/** push's options on `command`: the mapping file's, the table's, the contract's and the service's. */
export function registerPushFlags(command: Command): Command {
  addOptions(registerOpenPeriodOptions(registerMappingOptions(command)), PUSH_FLAGS);
  return registerServiceOptions(registerContractOption(command));
}
