import { exitCodeOfLeft, limitDetail, type ExitCodeValue } from '../../errors.js';
import { leftIn, type PlanReason } from '../../engine/index.js';
import { shellWord, type KnownValues } from '../common/shell-word.js';
import type { ItemState } from '../../ledger/index.js';
import type { StatusSummary } from './status-gather.js';

// What `migrate status` concludes from what it gathered: the exit code cron and monitoring read,
// and the next steps, most urgent first, each with the command that acts on it. Pure.

const sum = (values: Iterable<number | undefined>): number => {
  let total = 0;
  for (const value of values) total += value ?? 0;
  return total;
};

const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`;
/** "1 account needs", "2 accounts need". */
const agree = (n: number, word: string, verb: string): string => `${plural(n, word)} ${n === 1 ? `${verb}s` : verb}`;

interface Tally {
  invalid: number;
  errored: number;
  unfinished: number;
  total: number;
  held: number;
  failed: number;
  unknown: number;
  waiting: number;
}

function tallyOf(summary: StatusSummary): Tally {
  const ledger = summary.counts.ledger ?? {};
  const items = Object.values(summary.counts.items_outstanding ?? {});
  const ofItems = (state: ItemState): number => sum(items.map((states) => states[state]));
  return {
    invalid: ledger.invalid ?? 0,
    errored: summary.counts.errored,
    unfinished: sum([ledger.staged, ledger.creating, ledger.scheduled, ledger.processed, ledger.unresolved]),
    total: sum(Object.values(ledger)),
    held: ofItems('held'),
    failed: ofItems('failed'),
    unknown: ofItems('unknown'),
    waiting: ofItems('pending') + ofItems('sending'),
  };
}

/**
 * The next steps, most urgent first: what stopped the last push, data fixes, accounts held back for the service's
 * configuration, ERRORED accounts, records of unknown outcome, refused records, disagreements with the service, then
 * what the next push would do (engine/plan.ts: only the work it takes on). `status` prints the first as `next:` and the
 * others below it as `then:`.
 */
export function nextSteps(summary: StatusSummary, known: KnownValues = {}): string[] {
  const t = tallyOf(summary);
  const words = commandsOf(known);
  const steps = [...fixSteps(summary, t, words), ...recordSteps(t, words)];
  const disagree = summary.counts.only_in_ledger + summary.counts.differs;
  if (disagree > 0)
    steps.push(
      `${plural(disagree, 'account')} the ledger and the service disagree on: migrate status ` +
        `${shellWord(summary.import_supplier)}${words.ledger} --json (rows with a mismatch)`,
    );
  const changed = changedStep(summary, words);
  if (changed !== undefined) steps.push(changed);
  const push = pushStep(summary.push_plan, summary.export?.never_read ?? 0, words);
  if (push !== undefined) steps.push(push);
  if (summary.counts.ledger === null) {
    const pending = (summary.counts.service?.pending ?? 0) - summary.counts.errored;
    if (pending > 0)
      steps.push(`${plural(pending, 'account')} pending on the service: wait, or give --state DIR to see the ledger`);
  }
  // While anything is left, why the last push stopped comes first: it says what to fix before a push can go on.
  const stopped = summary.last_push?.fatal;
  if (stopped && steps.length > 0)
    steps.unshift(
      `the last push (run ${summary.last_push?.id}, ${summary.last_push?.started_at}) stopped: ${stopped.code}: ` +
        `${oneLine(stopped.detail)}`,
    );
  if (steps.length === 0) steps.push(finalStep(summary, t, words));
  return steps;
}

/** The commands the hints print: `migrate push DIR --state X`, `migrate report --state X --out DIR`. */
interface Commands {
  push: string;
  report: string;
  /** The flag that reads this ledger, for `migrate status`. */
  ledger: string;
}

function commandsOf(known: KnownValues): Commands {
  const ledger = known.ledgerWords ?? '';
  const dir = known.exportDir === undefined ? 'EXPORT_DIR' : shellWord(known.exportDir);
  return { push: `migrate push ${dir}${ledger}`, report: `migrate report${ledger} --out DIR`, ledger };
}

/** With nothing left to do: all done, or no account on either side (never while the service lists accounts). */
function finalStep(summary: StatusSummary, t: Tally, words: Commands): string {
  if (t.total > 0) return `all ${plural(t.total, 'account')} done: nothing left to do`;
  const listed = summary.counts.service?.all ?? 0;
  if (summary.counts.ledger === null && listed > 0)
    return (
      `the service lists ${plural(listed, 'account')} of ${summary.import_supplier} and no ledger was read: ` +
      "give --state DIR (the directory of the migration's push runs) or --ledger URL"
    );
  return `no accounts yet: ${words.push}`;
}

/** Accounts (and records held) a person must act on: data fixes, a configuration put right, ERRORED accounts. */
function fixSteps(summary: StatusSummary, t: Tally, words: Commands): string[] {
  const plan = summary.push_plan;
  const behind = (reason: PlanReason): string => {
    const records = plan?.records[reason] ?? 0;
    return records > 0 ? ` (${agree(records, 'record', 'wait')} for them)` : '';
  };
  const steps: string[] = [];
  const heldCodes = Object.keys(summary.held_for_configuration).sort();
  const held = sum(Object.values(summary.held_for_configuration));
  const invalid = t.invalid - held;
  const dataFixes =
    invalid > 0 && t.held > 0
      ? `${plural(invalid, 'account')} and ${plural(t.held, 'record')} need`
      : invalid > 0
        ? agree(invalid, 'account', 'need')
        : agree(t.held, 'record', 'need');
  if (invalid + t.held > 0)
    steps.push(
      `${dataFixes} data fixes${invalid > 0 ? behind('invalid') : ''}: ${words.report} (fix-data.csv), ` +
        `fix the export, then ${words.push}`,
    );
  if (held > 0)
    steps.push(
      `${plural(held, 'account')} held back as invalid by an earlier version for the service's configuration ` +
        `(${heldCodes.join(', ')}), not for their data: once the configuration is right, ${words.push} ` +
        `--retry-invalid ${heldCodes.join(',')}`,
    );
  if (t.errored > 0)
    steps.push(
      `${plural(t.errored, 'account')} ERRORED on the platform${behind('errored')}: check them (migrate status ` +
        `${shellWord(summary.import_supplier)}${words.ledger} --account NUMBER), then ${words.push} --retry-errored`,
    );
  return steps;
}

/** Records a person must act on: of unknown outcome, refused by the service. */
function recordSteps(t: Tally, words: Commands): string[] {
  const steps: string[] = [];
  if (t.unknown > 0)
    steps.push(
      `${plural(t.unknown, 'record')} of unknown outcome: check them on the platform and add the missing ones ` +
        `by hand (${words.report}: unknown-outcome.csv); a push never resends them`,
    );
  if (t.failed > 0)
    steps.push(
      `${plural(t.failed, 'record')} refused by the service: ${words.report} (fix-data.csv), fix the ` +
        `export, then ${words.push} (a refused record is sent again once its data changes)`,
    );
  return steps;
}

/**
 * Accounts and records the export changed after they were sent: the service has no update endpoint, so the platform
 * keeps what was sent and a push never sends them again; a person decides whether the change must land.
 */
function changedStep(summary: StatusSummary, words: Commands): string | undefined {
  const changed = summary.changed_after_import;
  if (changed === null) return undefined;
  const records = sum(Object.values(changed.records));
  if (changed.accounts + records === 0) return undefined;
  const what = [
    ...(changed.accounts > 0 ? [plural(changed.accounts, 'account')] : []),
    ...(records > 0 ? [plural(records, 'record')] : []),
  ].join(' and ');
  const one = changed.accounts + records === 1;
  return (
    `${what} changed in the export after ${one ? 'it was' : 'they were'} sent: the platform keeps what was sent and ` +
    `a push never sends ${one ? 'it' : 'them'} again; check ${one ? 'it' : 'each'}, and correct it on the platform ` +
    `by hand where the change must land (${words.report}: changed_after_import in accounts.csv and ` +
    'records.csv)'
  );
}

/**
 * What the next plain push does, in the plan's words (engine/plan.ts), or undefined when it has nothing to do. The plan
 * knows the ledger's accounts only: what the export holds that no push has read comes first, said as push says it.
 */
function pushStep(plan: StatusSummary['push_plan'], neverRead: number, words: Commands): string | undefined {
  if (plan === null) return undefined;
  const n = (...reasons: PlanReason[]): number => sum(reasons.map((reason) => plan.accounts[reason]));
  const unread = neverRead > 0 ? [`reads about ${neverRead.toLocaleString('en-GB')} accounts never read`] : [];
  const parts = [
    [n('create', 'create_only'), 'creates', 'account', ' not sent yet'],
    [n('reconcile'), 'asks the service about', 'create', ' left unconfirmed (resent only if it never arrived)'],
    [n('wait'), 'checks', 'account', ' waiting for processing on the service (a push waits for them, --no-wait not)'],
    [n('resolve'), 'looks up', 'account', ' known only by records (not in the export)'],
    [n('post_import', 'finish'), 'finishes', 'imported account', ''],
  ] as const;
  const does = [
    ...unread,
    ...parts.filter(([count]) => count > 0).map(([count, verb, noun, rest]) => `${verb} ${plural(count, noun)}${rest}`),
  ];
  if (does.length === 0) return undefined;
  const records = (...reasons: PlanReason[]): number => sum(reasons.map((reason) => plan.records[reason]));
  const now = records('post_import', 'finish');
  const later = records('create', 'create_only', 'reconcile', 'wait', 'resolve');
  const imported = 'once their account is imported';
  const send =
    now > 0 && later > 0
      ? `, and sends ${plural(now, 'record')} now and ${later} ${imported}`
      : now > 0
        ? `, and sends ${plural(now, 'record')}`
        : later > 0
          ? `, and sends ${plural(later, 'record')} ${imported}`
          : '';
  return `not finished: the next ${words.push} ${does.join(', ')}${send}`;
}

/** A detail on one line, bounded (docs/limits.md): a service's text may be megabytes long. */
const oneLine = (text: string): string => limitDetail(text.replace(/\s+/g, ' ').trim());

/**
 * The exit code cron reads (README "Exit codes"): 0 when every account of the ledger is done and the last push read
 * the whole export (or, without a ledger, nothing is pending or ERRORED); 5 when anything needs a person (what a push
 * leaves for one, accounts ERRORED on the service, the ledger and the service disagreeing); else 1 while a later push
 * progresses what is left (accounts not sent or waiting for processing, records waiting, accounts never read).
 */
export function statusExit(summary: StatusSummary): ExitCodeValue {
  const { counts } = summary;
  const ledger = leftIn({ accounts: counts.ledger ?? {}, items: counts.items_outstanding ?? {} });
  // ERRORED on the service where the ledger does not say so yet (or no ledger was read).
  const erroredElsewhere = Math.max(0, counts.errored - (counts.ledger?.errored ?? 0));
  // ERRORED processes stay on the service's pending list: counted above.
  const pendingOnService = counts.ledger === null ? Math.max(0, (counts.service?.pending ?? 0) - counts.errored) : 0;
  return exitCodeOfLeft({
    forPerson: ledger.forPerson + erroredElsewhere + counts.only_in_ledger + counts.differs,
    forLaterRun: ledger.forLaterRun + (summary.export?.never_read ?? 0) + pendingOnService,
  });
}
