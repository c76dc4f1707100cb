import type { Command } from 'commander';
import { exitCodesHelp } from './help-topics.js';

// What every command's --help teaches: a one-line purpose first, options grouped by what they
// are for (commander's Option.helpGroup), and real examples last. Kept in one table, applied
// after the commands are registered, so that a command file adding an option only has to name
// its group here (an option named nowhere stays under "Options:"). push's own options carry their group in its flags
// table (src/commands/push/flags.ts).

type Group = 'Service' | 'Selection' | 'Output' | 'Tuning';

const GROUPS: Record<Group, readonly string[]> = {
  Service: [
    '--base-url',
    '--api-key-file',
    '--token-file',
    '--token-field',
    '--header-form',
    '--dialect',
    '--contract',
    '--sandbox',
    '--run-config',
  ],
  Selection: ['--supplier', '--state', '--ledger', '--to', '--config', '--allow-no-accounts'],
  Output: ['--json', '--out', '--html', '--max-rows', '--verbose', '--no-request-log'],
  Tuning: ['--concurrency', '--rate'],
};

interface Teaching {
  purpose: string;
  /** The exit codes after the examples: for the commands cron runs. */
  exitCodes?: boolean;
  examples: ReadonlyArray<readonly [command: string, what: string]>;
}

/** The purpose line and examples of each command; `help.test.ts` parses every example with the real program. */
export const TEACHING: Record<string, Teaching> = {
  validate: {
    purpose: 'Check an export directory against the mapping file and the service rules; sends nothing.',
    examples: [
      ['migrate validate exports/', 'check every file; problems by file and line'],
      ['migrate validate exports/ --errors-csv errors.csv', 'also every problem as a CSV row for the data team'],
      ['migrate validate exports/ --remote --sandbox', "also ask the sandbox's validation endpoint"],
      ['migrate validate exports/ --dialect kraken --contract tenant.yaml', "also check against the tenant's document"],
    ],
  },
  push: {
    purpose: 'Migrate the accounts of an export into the platform, resuming where the last run stopped.',
    exitCodes: true,
    examples: [
      ['migrate push exports/ --dry-run', 'stage and validate, then say what would be sent'],
      ['migrate push exports/ --limit 20', 'a canary of the first 20 accounts'],
      ['migrate push exports/ --retry-errored --log-file push.ndjson', 'create ERRORED accounts again, log each step'],
      ['migrate push fixtures/sample --sandbox', 'rehearse on the built-in sandbox'],
      [
        'migrate push exports/ --ledger postgresql://migrate@db:5432/acme',
        'the ledger in PostgreSQL (the password from PGPASSWORD), shared by every runner of the cohort',
      ],
      [
        'migrate push exports/ --no-wait --quiet --metrics-file migrate.prom',
        'from cron: take up what earlier runs left, end without waiting; the summary only, and metrics',
      ],
    ],
  },
  status: {
    purpose: "Where a supplier's migration stands, what to do next (exit 0 done, 1 not yet, 5 a person must act).",
    exitCodes: true,
    examples: [
      ['migrate status ACME', 'service and ledger side by side, the next step first'],
      ['migrate status ACME --offline', 'the ledger only, no credentials needed'],
      ['migrate status ACME --json | jq .next_steps', 'the machine interface (same exit codes)'],
      ['migrate status ACME --account ERR-0001', "one account's whole story"],
      [
        'migrate status ACME --offline --ledger postgresql://migrate@db/acme',
        'a PostgreSQL ledger, from outside the pods',
      ],
    ],
  },
  report: {
    purpose: 'Write the ledger as CSV files for the data team, a summary, and an HTML report.',
    examples: [
      ['migrate report --out report/', 'accounts.csv, fix-data.csv, retry.csv, unknown-outcome.csv, summary.json'],
      ['migrate report --out report/ --html', 'also report.html: one self-contained page to send to the project board'],
      ['migrate report --supplier ACME --json', 'print summary.json on stdout'],
    ],
  },
  sandbox: {
    purpose: 'Run a local simulator of the import service to rehearse against.',
    examples: [
      ['migrate sandbox', 'listen on a free port of 127.0.0.1 (its URL printed) with key sandbox-api-key'],
      ['migrate sandbox --port 9000 --errored-share 0.1', 'one account in ten ends ERRORED'],
      [
        'migrate sandbox --api-key-file rehearsal.key',
        'a key of your own, out of the process list (or MIGRATE_API_KEY)',
      ],
      ['migrate sandbox --fail-rate 0.05 --latency-ms 200', 'rehearse with faults and a slow service'],
      ['migrate sandbox --dialect kraken --contract tenant.yaml', 'rehearse a tenant: requests judged by its document'],
    ],
  },
};

const groupOf = new Map<string, Group>(
  Object.entries(GROUPS).flatMap(([group, flags]) => flags.map((flag) => [flag, group as Group] as const)),
);

/**
 * The sandbox's own groups: what a rehearsal sets (where it listens, how the service behaves, the faults a real
 * service has) apart from the switches that exist for the project's tests (a service misbehaving on purpose).
 */
const SANDBOX_GROUPS: Record<string, readonly string[]> = {
  Listening: ['--port', '--host', '--public', '--api-key-file', '--api-key', '--suppliers'],
  Service: ['--dialect', '--contract'],
  Behaviour: [
    '--processing-ms',
    '--processing-spread-ms',
    '--errored-share',
    '--open-period-start',
    '--today',
    '--token-ttl',
    '--seed',
    '--max-body-bytes',
    '--multiple-payment-instructions',
    '--transfer-status-word',
    '--processing-status-word',
  ],
  'Faults (rehearsals)': [
    '--latency-ms',
    '--jitter-ms',
    '--fail-rate',
    '--rate-limit-rate',
    '--retry-after',
    '--drop-rate',
    '--ambiguous-rate',
    '--max-rps',
    '--fault-token-issue',
    '--throttle-token-requests',
    '--throttle-token-ms',
    '--throttle-token-status',
    '--lost-create-share',
    '--lost-create-once',
  ],
  'Test-only switches (a service misbehaving on purpose)': [
    '--html-rate',
    '--echo-credentials',
    '--error-detail-chars',
    '--trickle-ms',
    '--lost-answer-ms',
    '--flaky-attempts',
    '--no-retain-payloads',
    '--no-request-log',
  ],
  Output: ['--verbose'],
};
const sandboxGroupOf = new Map<string, string>(
  Object.entries(SANDBOX_GROUPS).flatMap(([group, flags]) => flags.map((flag) => [flag, group] as const)),
);

/** Puts each command's purpose first, its options in groups and its examples last. */
export function teachHelp(program: Command): void {
  for (const command of program.commands) {
    const teaching = TEACHING[command.name()];
    if (teaching === undefined) continue;
    command.summary(teaching.purpose).addHelpText('before', `${teaching.purpose}\n`);
    const groups: ReadonlyMap<string, string> = command.name() === 'sandbox' ? sandboxGroupOf : groupOf;
    for (const option of command.options) {
      const group = groups.get(option.long ?? '');
      if (group !== undefined) option.helpGroup(`${group}:`);
    }
    const width = Math.max(...teaching.examples.map(([example]) => example.length));
    const examples = teaching.examples.map(([example, what]) => `  ${example.padEnd(width)}  # ${what}`);
    if (teaching.exitCodes === true) command.addHelpText('after', `\n${exitCodesHelp()}`);
    command.addHelpText('after', `\nExamples:\n${examples.join('\n')}\n`);
  }
}
