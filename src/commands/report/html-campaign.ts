import { paceOf, timelineOf, utcLabel, type Pace } from './campaign.js';
import type { PushRunRow } from '../../ledger/index.js';
import { columnsOverTime, escapeHtml, type Column } from '../../output/svg-charts.js';
import type { ReportSummary } from './write-report.js';

// The campaign sections of report.html: how far it is (% complete), its pace and the finish that
// pace promises, accounts done over time (per hour, night or week) and per push run (runs grouped
// when there are many), with the last runs in a table. Pure: given what was read, the same text.

/** Push runs drawn one column each up to this many; beyond, consecutive runs share a column. */
const RUN_COLUMNS = 40;
const RECENT_RUNS = 10;

const format = (n: number): string => Math.round(n).toLocaleString('en-GB');
const sum = (values: Iterable<number | undefined>): number => {
  let total = 0;
  for (const value of values) total += value ?? 0;
  return total;
};

export interface CampaignInput {
  summary: ReportSummary;
  runs: readonly PushRunRow[];
  hours: ReadonlyArray<{ hour: string; done: number }>;
  /** Unix ms: the report's time. */
  now: number;
}

export interface AccountTotals {
  total: number;
  /** Done, as status, the push summary and summary.json count them (a record refused or not). */
  done: number;
  /** Of those done, accounts with a record the service refused: a failure a person acts on. */
  refused: number;
  invalid: number;
  errored: number;
  /** Needing a person before a push brings them to done: invalid, ERRORED, a record refused. */
  action: number;
  /** Left for a push to bring to done. */
  left: number;
}

/**
 * Accounts in the ledger: done (one number on every surface), needing a person (invalid, ERRORED, done with a record
 * refused), left for a push.
 */
export function accountTotals(summary: ReportSummary): AccountTotals {
  const a = summary.accounts;
  const total = sum(Object.values(a));
  const done = a.done ?? 0;
  const refused = Math.min(done, summary.fix_data.done_with_refused_records);
  const [invalid, errored] = [a.invalid ?? 0, a.errored ?? 0];
  const action = invalid + errored + refused;
  return { total, done, refused, invalid, errored, action, left: Math.max(0, total - done - invalid - errored) };
}

/** " (3 with a refused record)" after a count of accounts done, or nothing. */
export function refusedNote(refused: number): string {
  return refused > 0 ? ` (${format(refused)} with a refused record)` : '';
}

/** `45.2%`: one decimal, and never 100% until every account is done. */
export function percentText(done: number, total: number): string {
  if (total === 0) return '0%';
  const share = Math.floor((done / total) * 1000) / 10;
  return `${share.toFixed(1)}%`;
}

/** What a person does first, each kind in the words `status` uses: a data fix, a check and --retry-errored. */
function needingPerson(totals: AccountTotals): string {
  const parts = [
    totals.invalid > 0 ? `${format(totals.invalid)} invalid (their data must be fixed)` : '',
    totals.errored > 0 ? `${format(totals.errored)} ERRORED on the platform (to check, then push --retry-errored)` : '',
    totals.refused > 0 ? `${format(totals.refused)} with a record the service refused (fix-data.csv)` : '',
  ].filter((part) => part !== '');
  return parts.length === 0 ? '' : ` (besides ${parts.join(', ')})`;
}

function paceText(pace: Pace | undefined, totals: AccountTotals): string {
  const { left } = totals;
  const waiting = needingPerson(totals);
  if (left === 0) return `Nothing left for a push to do${waiting}.`;
  if (pace === undefined || pace.finishAt === undefined)
    return `${format(left)} accounts left${waiting}; none done lately, so no finish can be estimated.`;
  const over = pace.window >= 2 ? `the last ${format(pace.window)} ${pace.unit}s` : `the last ${pace.unit}`;
  const finish = new Date(pace.finishAt).toISOString().slice(0, 16).replace('T', ' ');
  return (
    `Pace: <strong data-total="pace">${format(pace.perUnit)}</strong> accounts a ${pace.unit} over ${over}. ` +
    `${format(left)} accounts left${waiting}: at this pace, done about ` +
    `<strong data-total="finish">${escapeHtml(finish)} UTC</strong>.`
  );
}

/** % complete with its bar, the pace and the estimated finish. */
export function campaignSection(input: CampaignInput): string {
  const totals = accountTotals(input.summary);
  const { total, done, left, refused } = totals;
  const from = input.runs[0] === undefined ? input.now : Date.parse(input.runs[0].startedAt);
  const pace = paceOf(input.hours, { from, now: input.now, left });
  const percent = percentText(done, total);
  return (
    `<h2>How far the migration is</h2><div class="complete"><span data-total="complete">${percent}</span> complete ` +
    `<span class="meta">(${format(done)} of ${format(total)} accounts done${refusedNote(refused)})</span></div>` +
    `<div class="track" role="progressbar" aria-valuenow="${percent.slice(0, -1)}" aria-valuemin="0" ` +
    `aria-valuemax="100"><div style="width:${percent}"></div></div>` +
    `<p>${paceText(pace, totals)}</p>`
  );
}

/** Accounts done per hour, night or week, with the running total as a share of all accounts. */
export function overTimeSection(input: CampaignInput): string {
  const first = input.runs[0];
  if (first === undefined)
    return '<h2>Accounts done over time</h2><figure id="over-time"><p>No push run yet.</p></figure>';
  const until = Math.max(input.now, ...input.runs.map((run) => Date.parse(run.endedAt ?? run.startedAt)));
  const timeline = timelineOf(input.hours, Date.parse(first.startedAt), until);
  const per = { hour: 'hour', day: `day (from ${String(timeline.startHour).padStart(2, '0')}:00 UTC)`, week: 'week' };
  const columns: Column[] = timeline.buckets.map((bucket) => ({
    label: bucket.label,
    value: bucket.done,
    tip: `${timeline.unit === 'week' ? 'week from ' : ''}${bucket.label}: ${format(bucket.done)} done`,
  }));
  const { total } = accountTotals(input.summary);
  return (
    `<h2>Accounts done over time, per ${per[timeline.unit]}</h2>` +
    `<p class="meta">Columns: accounts that reached done (left axis); line: all done so far, as a share of the ` +
    `accounts (right axis). Times in UTC.</p>` +
    `<figure id="over-time">${columnsOverTime('accounts done over time', columns, { total })}</figure>`
  );
}

/** Accounts done per push run (consecutive runs grouped beyond 40), and the last runs in a table. */
export function runsSection(runs: readonly PushRunRow[]): string {
  if (runs.length === 0) return '<h2>Push runs</h2><figure id="runs"><p>No push run yet.</p></figure>';
  const size = Math.ceil(runs.length / RUN_COLUMNS);
  const columns: Column[] = [];
  for (let index = 0; index < runs.length; index += size) {
    const group = runs.slice(index, index + size);
    const [head, last] = [group[0], group[group.length - 1]];
    if (head === undefined || last === undefined) continue;
    const label = group.length === 1 ? `run ${head.runId}` : `runs ${head.runId}–${last.runId}`;
    const done = sum(group.map((run) => run.done));
    columns.push({
      label,
      value: done,
      tip: `${label} (from ${utcLabel(Date.parse(head.startedAt), true)}): ${format(done)} done`,
    });
  }
  const grouped = size > 1 ? ` (${size} consecutive runs a column)` : '';
  return (
    `<h2>Accounts done per push run${grouped}</h2>` +
    `<figure id="runs">${columnsOverTime('accounts done per push run, with the running total', columns)}</figure>` +
    recentRuns(runs)
  );
}

function recentRuns(runs: readonly PushRunRow[]): string {
  const rows = runs
    .slice(-RECENT_RUNS)
    .reverse()
    .map((run) => {
      const started = run.startedAt.slice(0, 16).replace('T', ' ');
      const minutes =
        run.endedAt === null ? '' : ((Date.parse(run.endedAt) - Date.parse(run.startedAt)) / 60_000).toFixed(1);
      return (
        `<tr><td class="n">${run.runId}</td><td>${escapeHtml(started)}</td><td class="n">${minutes}</td>` +
        `<td>${escapeHtml(run.status)}</td><td class="n">${run.exitCode ?? ''}</td>` +
        `<td class="n">${format(run.done)}</td></tr>`
      );
    })
    .join('');
  return (
    `<table id="recent-runs"><thead><tr><th class="n">run</th><th>started (UTC)</th><th class="n">minutes</th>` +
    `<th>status</th><th class="n">exit</th><th class="n">done</th></tr></thead><tbody>${rows}</tbody></table>`
  );
}
