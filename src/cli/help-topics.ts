import type { Command } from 'commander';
import { ExitCode, UsageError } from '../errors.js';

// `migrate help <topic>`: what a command's --help has no room for, as gh's `help environment` and `help exit-codes`
// do. Each topic is one table, printed as aligned text; `migrate help COMMAND` still prints that command's help.

interface Topic {
  summary: string;
  rows: ReadonlyArray<readonly [name: string, meaning: string]>;
  after?: string;
}

const EXIT_CODE_MEANINGS: Record<keyof typeof ExitCode, string> = {
  ok: 'done: every account and record of the export settled (status: nothing left to do)',
  unfinished:
    'not finished, nothing for a person: what is left a later run takes up by itself (accounts not sent yet or ' +
    'waiting for processing on the service, records waiting to be sent); run again later',
  usage: 'nothing was sent or written: a bad flag, mapping file, export directory or input file; the message names it',
  fatal:
    'the run stopped: authentication failed, the supplier is not accepting migrations, the service is unreachable or ' +
    'answers as no service would, or the ledger cannot be written; what was sent is in the ledger, rerun when mended',
  locked:
    'another run holds this cohort\u2019s ledger (its lock): wait for it to end; never start a second one beside it',
  needsPerson:
    'a person must act, whatever else waits: invalid data, ERRORED accounts, records refused or of unknown outcome ' +
    '(validate: invalid accounts or rows in the export); the summary, `migrate status` and `migrate report` say ' +
    'which and what to do',
  interrupted:
    'stopped by SIGINT, SIGTERM or SIGHUP; in-flight requests were given time to finish and the ledger is ' +
    'consistent: rerun to go on',
};

/** Every environment variable migrate reads, its own and the standard ones. */
export const ENVIRONMENT: ReadonlyArray<readonly [name: string, meaning: string]> = [
  [
    'MIGRATE_API_KEY',
    'the API key for the token mutation (or --api-key-file FILE); never on the command line; also the key ' +
      '`migrate sandbox` accepts',
  ],
  ['MIGRATE_TOKEN', 'a token obtained beforehand, used as is (or --token-file FILE)'],
  ['MIGRATE_BASE_URL', 'the import service\u2019s base URL (--base-url)'],
  ['MIGRATE_TOKEN_FIELD', 'where the token is in the token mutation\u2019s answer (--token-field)'],
  ['MIGRATE_HEADER_FORM', 'how the token is sent in the Authorization header (--header-form)'],
  ['MIGRATE_DIALECT', 'the service\u2019s wire format (--dialect)'],
  ['MIGRATE_SUPPLIER', 'the import supplier code (--supplier); the mapping file\u2019s import_supplier otherwise'],
  [
    'MIGRATE_LEDGER_URL',
    'a PostgreSQL ledger, postgresql://USER@HOST:PORT/DATABASE without a password (--ledger); a state directory ' +
      'otherwise',
  ],
  ['MIGRATE_RUN_CONFIG', 'the cohort\u2019s run configuration file (--run-config); else ./migrate.run.json if any'],
  ['MIGRATE_SHAPE_MEMORY', 'the memory of the engine that shapes a legacy export (--shape-memory), e.g. 2GB'],
  ['MIGRATE_SHAPE_TEMP_LIMIT', 'the most its temporary files may take in TMPDIR (--shape-temp-limit), e.g. 20GB'],
  ['MIGRATE_DEBUG', 'set to 1: an internal error prints its stack trace'],
  [
    'MIGRATE_TIMESTAMPS',
    'set to 0: push\u2019s lines carry no time and run id when not on a terminal (the log collector adds its own)',
  ],
  ['MIGRATE_CSV_THREAD', 'set to 0: parse CSV on the main thread (no worker threads)'],
  ['MIGRATE_BUILD_COMMIT', 'at build time only: the commit --version names when the build has no git history'],
  ['PGPASSWORD, PGPASSFILE', 'the PostgreSQL ledger\u2019s password, or the pgpass file that holds it'],
  ['PGSSLMODE, PGSSLROOTCERT', 'and the other libpq variables: read for the PostgreSQL ledger\u2019s connection'],
  ['HTTPS_PROXY, HTTP_PROXY, NO_PROXY', 'the proxy to reach the service through, and the hosts reached directly'],
  ['TMPDIR', 'where sort files, the scratch join and the shape engine\u2019s spill files go'],
  ['NO_COLOR', 'set and not empty: no colour on a terminal'],
];

const TOPICS: Record<string, Topic> = {
  environment: {
    summary: 'Environment variables migrate reads (a flag, where there is one, wins over its variable).',
    rows: ENVIRONMENT,
  },
  'exit-codes': {
    summary: 'Exit codes of every command (push, validate, status, report, ledger, sandbox).',
    rows: (Object.keys(ExitCode) as Array<keyof typeof ExitCode>).map(
      (name) => [String(ExitCode[name]), EXIT_CODE_MEANINGS[name]] as const,
    ),
    after:
      'From cron: exit 0 and 1 need nobody (1: the next run goes on by itself); 2, 3 and 5 need a person (5: the ' +
      'data team, with `migrate report`); 4 means another run is at work (a person only when it lasts). Where ' +
      'something waits and something needs a person, the exit is 5.',
  },
};

export const HELP_TOPICS = Object.keys(TOPICS);

export function helpTopicText(name: string): string {
  const topic = TOPICS[name];
  if (topic === undefined) throw new UsageError(`no help topic ${name}; the topics are ${HELP_TOPICS.join(', ')}.`);
  const width = Math.max(...topic.rows.map(([key]) => key.length));
  const rows = topic.rows.map(([key, meaning]) => `  ${key.padEnd(width)}  ${meaning}`);
  return `${topic.summary}\n\n${rows.join('\n')}\n${topic.after === undefined ? '' : `\n${topic.after}\n`}`;
}

/** The exit codes, one per line, for the end of a command's --help. */
export function exitCodesHelp(): string {
  const rows = (Object.keys(ExitCode) as Array<keyof typeof ExitCode>).map(
    (name) => `  ${String(ExitCode[name]).padEnd(3)}  ${EXIT_CODE_MEANINGS[name].split(';')[0] ?? ''}`,
  );
  return `Exit codes (migrate help exit-codes):\n${rows.join('\n')}\n`;
}

/**
 * Replaces commander's `help [command]` with one that also knows the topics: `migrate help environment`,
 * `migrate help exit-codes`, and `migrate help push` as before.
 */
export function registerHelpCommand(program: Command): void {
  program.helpCommand(false);
  program
    .command('help [topic]')
    .description(`help for a command, or a topic: ${HELP_TOPICS.join(', ')}`)
    .action((topic: string | undefined) => {
      if (topic === undefined) return program.help();
      const command = program.commands.find((candidate) => candidate.name() === topic);
      if (command !== undefined) return command.help();
      process.stdout.write(helpTopicText(topic));
      return undefined;
    });
}
