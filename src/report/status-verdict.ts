import type { ItemState } from '../ledger/index.js';
import type { StatusSummary } from './status-gather.js';

// What `migrate status` concludes from what it gathered: the exit code cron and monitoring read,
// and the next steps, most urgent first, each with the command that acts on it. Pure.

/** What `status` exits with: 0 every account is done, 1 something needs attention or is not finished. */
export type StatusExit = 0 | 1;

const sum = (values: Iterable<number | undefined>): number => {
  let total = 0;
  for (const value of values) total += value ?? 0;
  return total;
};

const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`;

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

/** The next steps, most urgent first; the last line of `status` is the first of them. */
export function nextSteps(summary: StatusSummary): string[] {
  const t = tallyOf(summary);
  const s = summary.import_supplier;
  const steps: string[] = [];
  if (t.invalid > 0 || t.held > 0)
    steps.push(
      `${t.invalid > 0 ? plural(t.invalid, 'account') : plural(t.held, 'record')} need data fixes: migrate report ` +
        `--out DIR (fix-data.csv), fix the export, then migrate push EXPORT_DIR`,
    );
  if (t.errored > 0)
    steps.push(
      `${plural(t.errored, 'account')} ERRORED on the platform: check them (migrate status ${s} --account ` +
        `NUMBER), then migrate push EXPORT_DIR --retry-errored`,
    );
  if (t.unknown > 0)
    steps.push(
      `${plural(t.unknown, 'record')} with an unknown outcome: check them on the platform (migrate report --out ` +
        `DIR: unknown-outcome.csv)`,
    );
  if (t.failed > 0)
    steps.push(`${plural(t.failed, 'record')} refused by the service: migrate report --out DIR (fix-data.csv)`);
  const disagree = summary.counts.only_in_ledger + summary.counts.differs;
  if (disagree > 0)
    steps.push(
      `${plural(disagree, 'account')} the ledger and the service disagree on: migrate status ${s} --json (rows ` +
        `with a mismatch)`,
    );
  if (t.unfinished > 0 || t.waiting > 0)
    steps.push(
      `${t.unfinished > 0 ? plural(t.unfinished, 'account') : plural(t.waiting, 'record')} not finished: migrate ` +
        `push EXPORT_DIR (it resumes where the last run stopped)`,
    );
  if (summary.counts.ledger === null) {
    const pending = (summary.counts.service?.pending ?? 0) - summary.counts.errored;
    if (pending > 0)
      steps.push(`${plural(pending, 'account')} pending on the service: wait, or give --state DIR to see the ledger`);
  }
  if (steps.length === 0)
    steps.push(
      t.total > 0
        ? `all ${plural(t.total, 'account')} done: nothing left to do`
        : 'no accounts yet: migrate push EXPORT_DIR',
    );
  return steps;
}

/** 0 when every account of the ledger is done (or, without a ledger, nothing is pending or ERRORED); else 1. */
export function statusExit(summary: StatusSummary): StatusExit {
  const t = tallyOf(summary);
  const attention =
    t.invalid + t.errored + t.unfinished + t.held + t.failed + t.unknown + t.waiting + summary.counts.only_in_ledger;
  const pendingOnService = summary.counts.ledger === null ? (summary.counts.service?.pending ?? 0) : 0;
  return attention + summary.counts.differs + pendingOnService === 0 ? 0 : 1;
}
