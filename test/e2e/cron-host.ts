import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { expect } from 'vitest';
import { openLedgerReader, type RunRow } from '../../src/ledger/index.js';
import { ROOT } from './helpers.js';

// The cron recipe of docs/operators-guide.md section 3 ("Under cron"), as cron runs it: the crontab and the run
// configuration read from the guide, each job run by `sh -c` in an almost empty environment (the crontab's variables,
// cron's PATH and HOME, nothing of the test's own: no MIGRATE_TIMESTAMPS=0, which the suite sets), the key in a file.
// Which program stands for the installed `/opt/migrate/bin/migrate` is the caller's: this checkout's binary
// (test/e2e/cutover.test.ts) or the command the packed tarball installed (test/e2e/install.test.ts).

/** This checkout's binary, as the shell words that stand for `/opt/migrate/bin/migrate`. */
export const CHECKOUT_MIGRATE = `"${process.execPath}" "${join(ROOT, 'bin', 'migrate.js')}"`;

/** cron's PATH (/usr/bin:/bin), and the directory of this Node.js, which the installed command starts through env. */
const CRON_PATH = [...new Set([dirname(process.execPath), '/usr/bin', '/bin'])].join(':');

/**
 * A test run moved to another month's clock (test/docs/sample-month-clock.mjs) moves cron's jobs with it, as a machine
 * in that month would run them: the clock's settings and that one import, nothing else of the test's environment.
 */
function movedClock(): Record<string, string> {
  const anchor = process.env['SAMPLE_MONTH_ANCHOR'];
  if (anchor === undefined) return {};
  const hook = pathToFileURL(join(ROOT, 'test', 'docs', 'sample-month-clock.mjs')).href;
  return {
    SAMPLE_MONTH_NOW: anchor.split(' ')[0] ?? '',
    SAMPLE_MONTH_ANCHOR: anchor,
    NODE_OPTIONS: `--import ${hook}`,
  };
}

interface Crontab {
  /** The crontab's variable lines (NAME=value). */
  env: Record<string, string>;
  /** Each job's command, the five time fields cut. */
  jobs: string[];
}

function guide(): string {
  return readFileSync(join(ROOT, 'docs', 'operators-guide.md'), 'utf8');
}

/** The run configuration docs/operators-guide.md's crontab names, exactly as printed there. */
function guideRunConfig(): string {
  const text = guide();
  const section = text.slice(text.indexOf('## 3. Under cron'));
  const blocks = [...section.matchAll(/```json\n([\s\S]*?)```/g)].map((match) => match[1] ?? '');
  expect(blocks.length, 'a run configuration in the cron section').toBeGreaterThan(0);
  return blocks[0] ?? '';
}

/** The crontab of docs/operators-guide.md, exactly as printed there. */
function guideCrontab(): Crontab {
  const blocks = [...guide().matchAll(/```cron\n([\s\S]*?)```/g)].map((match) => match[1] ?? '');
  expect(blocks, 'one crontab in the guide').toHaveLength(1);
  const crontab: Crontab = { env: {}, jobs: [] };
  for (const line of (blocks[0] ?? '').split('\n').filter((text) => text.trim() !== '')) {
    const variable = /^([A-Z_]+)=(.*)$/.exec(line);
    if (variable) crontab.env[variable[1] ?? ''] = variable[2] ?? '';
    else crontab.jobs.push(line.replace(/^(\S+\s+){5}/, ''));
  }
  return crontab;
}

export interface CronHost {
  /** Runs the crontab's push job; resolves with its exit code. */
  push(): Promise<number | null>;
  /** Runs the crontab's status job (status, and the mail when status exits non-zero). */
  status(): Promise<number | null>;
  /** The subjects of the mails sent so far. */
  mails(): string[];
  /** The cohort's state directory. */
  state: string;
  /** A file of the crontab's log directory (/var/log/migrate). */
  log(name: string): string;
}

/**
 * A host for the crontab under `dir`: its paths (/srv/migrate, /etc/migrate/key, /var/log/migrate, /tmp) moved into
 * it, `migrate` (shell words) standing for `/opt/migrate/bin/migrate`, and `mail` a shell function that appends to
 * `dir`/mailbox.
 */
export function cronHost(dir: string, serviceUrl: string, apiKey: string, migrate: string): CronHost {
  const crontab = guideCrontab();
  for (const sub of ['log', 'tmp', 'etc']) mkdirSync(join(dir, sub), { recursive: true });
  const keyFile = join(dir, 'etc', 'key');
  writeFileSync(keyFile, `${apiKey}\n`, { mode: 0o600 });
  const moved: Record<string, string> = {
    '/opt/migrate/bin/migrate': migrate,
    '/srv/migrate': dir,
    '/etc/migrate/key': keyFile,
    '/var/log/migrate': join(dir, 'log'),
    '/tmp/': `${join(dir, 'tmp')}/`,
  };
  // One pass: a path moved into `dir` (itself under the system's /tmp) is not moved again.
  const local = (command: string): string =>
    command.replace(
      /\/opt\/migrate\/bin\/migrate|\/srv\/migrate|\/etc\/migrate\/key|\/var\/log\/migrate|\/tmp\//g,
      (path) => moved[path] ?? path,
    );
  // The run configuration the crontab names, at its place under `dir`, with the service's URL in it.
  const runConfig = local(guideRunConfig()).replace('https://<service host>', serviceUrl);
  const runConfigPath = local(crontab.env['MIGRATE_RUN_CONFIG'] ?? '');
  expect(runConfigPath.startsWith(dir), 'the crontab names the run configuration under /srv/migrate').toBe(true);
  writeFileSync(runConfigPath, runConfig);
  const mailbox = join(dir, 'mailbox');
  const mail = `mail() { printf 'Subject: %s\\n' "$2" >> "${mailbox}"; cat >> "${mailbox}"; }`;
  const env = { ...crontab.env, MIGRATE_RUN_CONFIG: runConfigPath, PATH: CRON_PATH, HOME: dir, ...movedClock() };
  const job = (pattern: RegExp): string => {
    const found = crontab.jobs.find((command) => pattern.test(command));
    expect(found, `the guide's crontab has a job matching ${pattern}`).toBeDefined();
    return `${mail}\n${local(found ?? '')}`;
  };
  const run = (command: string): Promise<number | null> =>
    new Promise((resolve) => spawn('sh', ['-c', command], { env, stdio: 'ignore' }).on('close', resolve));
  return {
    push: () => run(job(/bin\/migrate push /)),
    status: () => run(job(/bin\/migrate status /)),
    mails: (): string[] => (existsSync(mailbox) ? readFileSync(mailbox, 'utf8') : '').match(/^Subject: .*$/gm) ?? [],
    state: join(dir, 'cohort-1'),
    log: (name: string): string => readFileSync(join(dir, 'log', name), 'utf8'),
  };
}

/** The push job back to back, as a cron firing every few seconds would, until a run exits 0 or `most` have run. */
export async function pushUntilDone(cron: CronHost, most: number): Promise<Array<number | null>> {
  const codes: Array<number | null> = [];
  while (codes.length < most && codes.at(-1) !== 0) codes.push(await cron.push());
  return codes;
}

/** Accounts per state in a state directory's ledger. */
export function counts(state: string): Record<string, number> {
  const reader = openLedgerReader(state);
  try {
    return reader.read.counts().accounts;
  } finally {
    reader.close();
  }
}

/** The push runs a state directory's ledger recorded, oldest first. */
export function pushRuns(state: string): RunRow[] {
  const reader = openLedgerReader(state);
  try {
    return reader.read
      .runs()
      .filter((run) => run.command === 'push')
      .reverse();
  } finally {
    reader.close();
  }
}
