import { Chalk } from 'chalk';
import { STATE_FACTS } from '../../engine/index.js';
import type { LedgerCounts } from '../../ledger/index.js';
import { ACCOUNT_STATES, ITEM_KINDS, ITEM_STATES } from '../../ledger/index.js';
import type { NotRead } from '../../sources/index.js';
import { duplicateNotesLine, shownName } from '../common/export-entries.js';
import { KIND_LABELS, STATE_LABELS } from '../common/labels.js';
import { leftOverLine, leftOverOf, type LeftOver, type RecordsBehind } from './left-over.js';
import { monotonicNow } from '../../clock.js';
import { colorWanted } from '../../output/output.js';
import { snakeCaseKeys } from './json-keys.js';
import { visibleJson, visibleStrings } from '../../errors.js';
import { openPeriodLines } from '../common/open-period-lines.js';

/** What the final summary of a push shows; also the `--json` document (one object on stdout, keys in snake_case). */
export interface PushSummary {
  /** The run configuration the run read (null: none) and the service's URL it talked to (`--json` only). */
  runConfig?: string | null;
  serviceUrl?: string | null;
  result: 'finished' | 'interrupted' | 'fatal' | 'wait_timeout' | 'max_errors';
  exitCode: number;
  fatal?: { code: string; detail: string };
  durationSeconds: number;
  stateDir: string;
  staged?: {
    accounts: number;
    invalid: number;
    orphans: number;
    changedAfterImport: number;
    duplicateNotes?: number;
    omittedValues?: number;
  };
  accounts: LedgerCounts['accounts'];
  items: LedgerCounts['items'];
  changedAfterImport: number;
  /** Records whose export data changed after they were sent, per kind: reported, never resent (no update endpoint). */
  recordsChangedAfterImport: LedgerCounts['recordsChangedAfterImport'];
  /** Transactions refused for, or moved into, the service's open statement period (absent when none were). */
  openPeriod?: LedgerCounts['openPeriod'];
  topErrors: Array<{ code: string; count: number }>;
  /** Accounts that reached processed in this run, per second. */
  accountsPerSecond: number;
  /** Accounts created (answered 201 or already imported) in this run, per second: the rate of a --no-wait run. */
  accountsCreatedPerSecond: number;
  /** The rate the human summary shows: accounts processed per second, or created per second with --no-wait. */
  rateShown: 'processed' | 'created';
  /** --accounts numbers neither the export nor the ledger holds. */
  unknownAccounts?: string[];
  /** --max-errors: failures this run tolerated. */
  maxErrors?: number;
  /** What the ledger holds that is not done, each with the `migrate report` file listing it; empty when all is done. */
  left: LeftOver[];
  /** Entries of the export directory that are not export files, not read (each also told as the run started). */
  notRead?: NotRead[];
  /**
   * About how many accounts of the export a run that stopped while reading it never read (the accounts file's lines
   * less what was read): they are not in the ledger, and the next push reads them.
   */
  neverRead?: number;
}

/** Maps of the summary whose keys are data (account states, record kinds): kept as they are in `--json`. */
const SUMMARY_DATA_MAPS: ReadonlySet<string> = new Set(['accounts', 'items', 'recordsChangedAfterImport']);

/** The `--json` document of a push: the summary with its keys in snake_case (`exit_code`, `state_dir`, ...). */
export function pushSummaryJson(summary: PushSummary): string {
  return JSON.stringify(snakeCaseKeys(summary, SUMMARY_DATA_MAPS), null, 2);
}

/**
 * The human summary table: counts per state, items per kind and state, the most frequent error codes, and what to do
 * next.
 */
export function renderSummary(summary: PushSummary, color: boolean): string {
  const c = new Chalk({ level: color ? 1 : 0 });
  const lines: string[] = [];
  const headline = headlineOf(summary, c);
  lines.push('', c.bold(headline) + ` (${summary.durationSeconds.toFixed(1)}s${rateOf(summary)})`);
  if (summary.fatal) lines.push(c.red(`  ${summary.fatal.code}: ${summary.fatal.detail}`));
  if (summary.staged)
    lines.push(
      `  export: ${summary.staged.accounts} accounts (${summary.staged.invalid} invalid), ` +
        `${summary.staged.orphans} accounts with records only`,
    );
  if (summary.staged?.duplicateNotes) lines.push(`  ${duplicateNotesLine(summary.staged.duplicateNotes)}`);
  if ((summary.staged?.omittedValues ?? 0) > 0)
    lines.push(
      c.yellow(
        `  ${summary.staged?.omittedValues} invalid values omitted under the mapping file's on_invalid, their ` +
          'accounts sent without them (migrate validate lists each: file, line, value, why)',
      ),
    );
  if (summary.neverRead !== undefined && summary.neverRead > 0)
    lines.push(
      c.yellow(
        `  export: about ${summary.neverRead.toLocaleString('en-GB')} accounts never read (the run stopped while ` +
          'reading the export; the next push reads them)',
      ),
    );
  if (summary.notRead !== undefined && summary.notRead.length > 0)
    lines.push(c.yellow(`  not read (not export files): ${notReadNames(summary.notRead)}`));
  lines.push('', c.bold('  accounts'));
  for (const state of ACCOUNT_STATES) {
    const count = summary.accounts[state];
    if (!count) continue;
    const label = STATE_LABELS[state].padEnd(32);
    const text = `    ${label}${String(count).padStart(9)}`;
    lines.push(state === 'done' ? c.green(text) : STATE_FACTS[state].needsPerson ? c.red(text) : c.yellow(text));
  }
  const itemLines = ITEM_KINDS.flatMap((kind) => {
    const states = summary.items[kind];
    if (!states) return [];
    const parts = ITEM_STATES.filter((state) => states[state]).map((state) => `${states[state]} ${state}`);
    return [`    ${KIND_LABELS[kind].padEnd(32)}${parts.join(', ')}`];
  });
  if (itemLines.length > 0) lines.push('', c.bold('  post-import records'), ...itemLines);
  for (const line of openPeriodLines(summary.openPeriod)) lines.push(c.yellow(`  ${line}`));
  lines.push(...changedLines(summary, c));
  if (summary.topErrors.length > 0) {
    lines.push('', c.bold('  most frequent errors'));
    for (const error of summary.topErrors) lines.push(`    ${error.code.padEnd(48)}${String(error.count).padStart(9)}`);
  }
  if (summary.unknownAccounts)
    lines.push(
      '',
      c.yellow(
        `  --accounts not in the export or the ledger (${summary.unknownAccounts.length}): ` +
          `${summary.unknownAccounts.slice(0, 20).join(', ')}`,
      ),
    );
  lines.push('', `  ledger: ${summary.stateDir}`, '');
  return lines.join('\n');
}

/** Accounts and records the export changed after they were sent: reported, never resent. */
function changedLines(summary: PushSummary, c: InstanceType<typeof Chalk>): string[] {
  const lines: string[] = [];
  if (summary.changedAfterImport > 0)
    lines.push(
      c.yellow(
        `  ${summary.changedAfterImport} accounts changed in the export after they were imported; the service ` +
          `cannot update them (see the report: accounts.csv, changed_after_import).`,
      ),
    );
  const records = ITEM_KINDS.flatMap((kind) => {
    const count = summary.recordsChangedAfterImport[kind] ?? 0;
    return count > 0 ? [`${KIND_LABELS[kind]} ${count}`] : [];
  });
  const total = Object.values(summary.recordsChangedAfterImport).reduce((sum, count) => sum + (count ?? 0), 0);
  if (total > 0)
    lines.push(
      c.yellow(
        `  ${total} ${total === 1 ? 'record' : 'records'} changed in the export after ${it(total, 'was')} sent ` +
          `(${records.join(', ')}); the service cannot update ${it(total, 'them')} and keeps what was sent: ` +
          `${it(total, 'are')} not sent again (see the report: records.csv, changed_after_import).`,
      ),
    );
  return lines.length === 0 ? [] : ['', ...lines];
}

/** "it was" / "they were", "it" / "them", "it is" / "they are". */
function it(count: number, form: 'was' | 'them' | 'are'): string {
  const one = { was: 'it was', them: 'it', are: 'it is' }[form];
  const many = { was: 'they were', them: 'them', are: 'they are' }[form];
  return count === 1 ? one : many;
}

function notReadNames(notRead: readonly NotRead[]): string {
  const names = notRead.slice(0, 5).map((entry) => shownName(entry.name));
  return `${names.join(', ')}${notRead.length > 5 ? `, ... (${notRead.length} in all)` : ''}`;
}

/** `, 46.9 accounts/s` or `, 20.1 accounts created/s` (--no-wait); nothing when the run moved no account. */
function rateOf(summary: PushSummary): string {
  const created = summary.rateShown === 'created';
  const rate = created ? summary.accountsCreatedPerSecond : summary.accountsPerSecond;
  return rate > 0 ? `, ${rate.toFixed(1)} accounts${created ? ' created' : ''}/s` : '';
}

/**
 * "everything done" only when the ledger holds nothing else; otherwise the line says what is
 * left and which `migrate report` file lists it.
 */
function headlineOf(summary: PushSummary, c: InstanceType<typeof Chalk>): string {
  const unread = summary.neverRead ? [`about ${summary.neverRead.toLocaleString('en-GB')} accounts never read`] : [];
  const left = [leftOverLine(summary.left), ...unread].filter((part) => part !== '').join('; ');
  const report = summary.left.some((part) => part.file !== undefined) ? '; see `migrate report`' : '';
  if (summary.left.length === 0 && summary.exitCode === 0)
    return c.green('push finished: everything done (every account and record settled)');
  if (summary.exitCode === 0) return c.green(`push finished this run's work; left for later runs: ${left}${report}`);
  // Accounts still processing on the service (--no-wait), records of accounts not yet imported, and no error: exit 1,
  // as `status` says, but nothing for a person to do; the next run (cron's) takes them up.
  if (summary.result === 'finished' && summary.topErrors.length === 0 && !summary.left.some(needsPerson))
    return c.yellow(`push finished this run's work, not the migration: ${left}; the next push takes them up`);
  if (summary.result === 'finished') return c.yellow(`push finished, not everything is done: ${left}${report}`);
  if (summary.result === 'max_errors')
    return c.red(
      `push stopped: more failures than --max-errors allows; left: ${left}${report}, then run push again to continue`,
    );
  return c.red(`push stopped: ${summary.result}${left ? `; left: ${left}${report}` : ''}`);
}

/**
 * Whether the summary has something to say beyond its counts (records changed after they were sent, values omitted,
 * rows collapsed, parts of the export not read): then it is printed whole, even by a run that changed nothing.
 */
export function hasNotices(summary: PushSummary): boolean {
  return (
    changedLines(summary, new Chalk({ level: 0 })).length > 0 ||
    (summary.staged?.omittedValues ?? 0) > 0 ||
    (summary.staged?.duplicateNotes ?? 0) > 0 ||
    (summary.neverRead ?? 0) > 0 ||
    (summary.notRead?.length ?? 0) > 0 ||
    openPeriodLines(summary.openPeriod).length > 0
  );
}

/** Whether a run changed no account's and no record's state: the ledger's counts per state are as they were. */
export function countsUnchanged(before: LedgerCounts, after: LedgerCounts): boolean {
  const same = (a: object, b: object): boolean => JSON.stringify(sorted(a)) === JSON.stringify(sorted(b));
  return same(before.accounts, after.accounts) && same(before.items, after.items);
}

function sorted(value: object): unknown {
  return Object.fromEntries(
    Object.entries(value)
      .filter(([, v]) => v !== 0 && v !== undefined)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([k, v]) => [k, typeof v === 'object' && v !== null ? sorted(v as object) : v]),
  );
}

/**
 * The one line of a finished run that changed nothing in the ledger (a cron run between the service's processing):
 * what is left, and the next step, instead of the whole table.
 */
export function renderUnchanged(summary: PushSummary, color: boolean, commands: NextCommands = PLACEHOLDERS): string {
  const c = new Chalk({ level: color ? 1 : 0 });
  if (summary.left.length === 0)
    return `${c.green('push changed nothing in the ledger: everything done (every account and record settled)')}\n`;
  const next = summary.left.some(needsPerson)
    ? `next: ${commands.status} (what needs a person first), ${commands.report}`
    : 'next: nothing to do, the next push takes them up';
  return `${c.yellow(`push changed nothing in the ledger; left: ${leftOverLine(summary.left)}; ${next}`)}\n`;
}

/** The commands a hint names, with the values the run knows (its supplier, its ledger's flag). */
export interface NextCommands {
  status: string;
  report: string;
}

const PLACEHOLDERS: NextCommands = { status: 'migrate status SUPPLIER', report: 'migrate report --out DIR' };

/** What only a person can settle: data to fix, records to check by hand. */
function needsPerson(part: LeftOver): boolean {
  return part.file === 'fix-data.csv' || part.file === 'unknown-outcome.csv';
}

/** Builds the summary of a finished push from the engine's result and the ledger's error codes. */
export function buildPushSummary(input: {
  result: {
    reason: PushSummary['result'];
    exitCode: number;
    fatal?: { code: string; detail: string };
    counts: LedgerCounts;
    staged?: PushSummary['staged'] | undefined;
  };
  topErrors: PushSummary['topErrors'];
  startedAt: number;
  /** The state directory, or the PostgreSQL ledger's URL without its password (the summary's `stateDir`). */
  ledgerLabel: string;
  processedThisRun: number;
  createdThisRun?: number;
  /** false with --no-wait: the summary shows the rate of creates. */
  wait?: boolean;
  unknownAccounts?: string[];
  maxErrors?: number;
  notRead?: NotRead[];
  /** About how many accounts of the export were never read: the run stopped while reading it. */
  neverRead?: number | undefined;
  /** Records waiting for invalid or ERRORED accounts: said with those accounts. */
  behind?: RecordsBehind;
}): PushSummary {
  const { result } = input;
  const durationSeconds = (monotonicNow() - input.startedAt) / 1000;
  return {
    result: result.reason,
    exitCode: result.exitCode,
    ...(result.fatal ? { fatal: { code: result.fatal.code, detail: result.fatal.detail } } : {}),
    durationSeconds,
    stateDir: input.ledgerLabel,
    ...(result.staged ? { staged: result.staged } : {}),
    accounts: result.counts.accounts,
    items: result.counts.items,
    changedAfterImport: result.counts.changedAfterImport,
    recordsChangedAfterImport: result.counts.recordsChangedAfterImport,
    ...(result.counts.openPeriod === undefined ? {} : { openPeriod: result.counts.openPeriod }),
    topErrors: input.topErrors,
    accountsPerSecond: input.processedThisRun / Math.max(0.001, durationSeconds),
    accountsCreatedPerSecond: (input.createdThisRun ?? 0) / Math.max(0.001, durationSeconds),
    rateShown: input.wait === false ? 'created' : 'processed',
    ...(input.unknownAccounts && input.unknownAccounts.length > 0 ? { unknownAccounts: input.unknownAccounts } : {}),
    ...(input.maxErrors === undefined ? {} : { maxErrors: input.maxErrors }),
    left: leftOverOf(result.counts, input.behind),
    ...(input.notRead && input.notRead.length > 0 ? { notRead: input.notRead } : {}),
    ...(input.neverRead ? { neverRead: input.neverRead } : {}),
  };
}

/** The summary on stdout: one JSON document (--json), one line when the run changed nothing, else the table. */
export function printPushSummary(
  summary: PushSummary,
  how: { json: boolean; unchanged: boolean; commands?: NextCommands },
): void {
  const color = colorWanted(process.stdout, process.env);
  if (how.json) process.stdout.write(`${visibleJson(pushSummaryJson(summary))}\n`);
  else if (how.unchanged && !hasNotices(summary))
    process.stdout.write(renderUnchanged(visibleStrings(summary), color, how.commands));
  else process.stdout.write(renderSummary(visibleStrings(summary), color));
}
