import type { Command } from 'commander';
import { MOVE_FLAG } from '../config/ledger-service.js';
import { DEFAULT_ENGINE_SETTINGS } from '../engine/index.js';
import { RUN_DEFAULTS } from '../defaults.js';
import { ALLOW_NO_ACCOUNTS } from '../intake/accounts-present.js';
import { DEFAULT_UNREACHABLE_SECONDS } from '../ledger/postgres/index.js';
import { registerMappingOptions } from './mapping-options.js';
import { parseCodes, parseMaxErrors, parseSteps, positiveInt } from './push-options.js';

// The flags of `migrate push`, in the order --help lists them: how the run goes, what it takes on, what it says.

/** How the run goes: where its ledger is, what it sends and how fast, how long it waits. */
export function registerRunFlags(command: Command): Command {
  return registerMappingOptions(command)
    .option(
      '--state <dir>',
      'state directory holding the results ledger (one per migration cohort)',
      RUN_DEFAULTS.stateDir,
    )
    .option(
      '--ledger <url>',
      'the results ledger in PostgreSQL (postgresql://...; else MIGRATE_LEDGER_URL) instead of --state',
    )
    .option(
      '--ledger-timeout <seconds>',
      `stop (exit 3) when the PostgreSQL ledger stays unreachable this long (default ${DEFAULT_UNREACHABLE_SECONDS})`,
      positiveInt('--ledger-timeout', 86_400),
    )
    .option(
      '--concurrency <n>',
      'requests in flight at most',
      positiveInt('--concurrency', 1024),
      DEFAULT_ENGINE_SETTINGS.concurrency,
    )
    .option(
      '--batch-bytes <n>',
      'most bytes of records in one post-import request (a 413 still splits it)',
      positiveInt('--batch-bytes', 256 * 1024 * 1024),
      RUN_DEFAULTS.batchBytes,
    )
    .option('--rate <n>', 'requests per second at most (default: no cap)', positiveInt('--rate', 100_000))
    .option('--retry-errored', 'create again accounts the platform ERRORED, even if their data did not change')
    .option('--no-wait', 'schedule accounts only; a later run polls them and pushes their records')
    .option(
      '--wait-timeout <seconds>',
      'stop waiting when no account has progressed for this long',
      positiveInt('--wait-timeout', 7 * 86_400),
      RUN_DEFAULTS.waitTimeoutSeconds,
    )
    .option(
      '--lost-create-checks <n>',
      'status checks finding no import process after a create answered 201 before it is sent again',
      positiveInt('--lost-create-checks', 1000),
      RUN_DEFAULTS.lostCreateChecks,
    )
    .option(
      '--first-answer-timeout <seconds>',
      'stop the run when a request has no whole answer within this long before the service has answered any',
      positiveInt('--first-answer-timeout', 86_400),
      RUN_DEFAULTS.firstAnswerSeconds,
    )
    .option(
      '--no-check-previously-added',
      'transactions: do not ask the service to skip transactions added before (then a transaction whose outcome ' +
        'is unknown is never resent)',
    )
    .option(
      '--no-force-add-to-current-statement',
      'transactions: fail those outside the open statement period instead of moving them into it',
    )
    .option('--sandbox', 'start the built-in sandbox (a local simulator of the service) and push there');
}

/** What the run takes on: a plan only, a canary, some accounts or steps, an error budget, a moved ledger. */
export function registerSelectionFlags(command: Command): Command {
  return command
    .option(
      '--dry-run',
      'stage and validate, then print the plan (requests per step, why each account is or is not in it); sends ' +
        'nothing, changes no ledger',
    )
    .option(
      '--limit <n>',
      "canary: only the first N accounts still to do (in the ledger's order)",
      positiveInt('--limit', 100_000_000),
    )
    .option('--accounts <list>', 'only these external account numbers: A,B,C or @file (one per line)')
    .option(
      ALLOW_NO_ACCOUNTS,
      'the accounts file may hold no account: the export only adds post-import records to accounts imported earlier',
    )
    .option(
      '--only <steps>',
      'only these steps: comma-separated create,notes,transactions,statements,payment_instructions',
      parseSteps,
    )
    .option(
      '--max-errors <n>',
      "stop taking new work once more than N (or N% of the run's accounts and records) failed in this run; exit 1",
      parseMaxErrors,
    )
    .option(
      '--retry-invalid <codes>',
      'send again accounts the service refused with these error codes (comma-separated), e.g. ' +
        'invalid_import_supplier once the supplier is set up',
      parseCodes,
    )
    .option(
      MOVE_FLAG,
      'the state directory was used with another service URL, dialect or supplier code (a DNS change): record this ' +
        "run's service as its service from now on",
    );
}

/** What the run says: the summary's form, the log, the progress display, the metrics file. */
export function registerOutputFlags(command: Command): Command {
  return command
    .option('--json', 'print one JSON summary document on stdout (with --dry-run: the plan, every account)')
    .option(
      '--log-file <path>',
      'append one JSON line per event (run id, account, step, outcome, code; no secret, no personal data) to this ' +
        'file (0600)',
    )
    .option('--quiet', 'no progress display: the summary only (warnings and errors still go to stderr)')
    .option(
      '--progress-interval <seconds>',
      `seconds between progress lines when stderr is not a terminal (default ${RUN_DEFAULTS.progressIntervalSeconds})`,
      positiveInt('--progress-interval', 86_400),
    )
    .option(
      '--metrics-file <file>',
      "write Prometheus metrics (ledger counts, requests, 429s, retries, the runs' end and exit code) to this file, " +
        "for node_exporter's textfile collector (name it *.prom)",
    )
    .option(
      '--metrics-interval <seconds>',
      'seconds between writes of --metrics-file (it is also written at the start and at the end)',
      positiveInt('--metrics-interval', 86_400),
      RUN_DEFAULTS.metricsIntervalSeconds,
    );
}
