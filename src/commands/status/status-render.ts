import { limitDetail } from '../../errors.js';
import { Chalk, type ChalkInstance } from 'chalk';
import { STATE_FACTS } from '../../engine/index.js';
import type { AccountState } from '../../ledger/index.js';
import type { AccountStory } from './account-story.js';
import { KIND_LABELS, STATE_LABELS } from '../common/labels.js';
import { NEEDING_PERSON, type DiffersRow, type StatusSummary } from './status-gather.js';
import { openPeriodLines } from '../common/open-period-lines.js';

// How `migrate status` prints: aligned sections, the same on a terminal and in a pipe (cron
// mail, logs); colour only on a terminal unless NO_COLOR. --json is the machine interface.

export interface RenderOptions {
  /** Colour (a terminal, and NO_COLOR not set). The layout is the same either way. */
  color: boolean;
}

const LABEL = 36;
const NUMBER = 9;

/** The text of `migrate status`: the same sections and columns on a terminal and in a pipe (cron mail, logs). */
export function renderStatus(summary: StatusSummary, options: RenderOptions): string {
  const c = new Chalk({ level: options.color ? 1 : 0 });
  const lines = [
    c.bold(`import supplier ${summary.import_supplier}`) + c.dim(` (${sourcesText(summary)}, ${summary.generated_at})`),
  ];
  const counts = summary.counts;
  const row = (label: string, n: number, note = ''): string =>
    `    ${label.padEnd(LABEL)}${String(n).padStart(NUMBER)}${note === '' ? '' : `  ${c.dim(note)}`}`;
  const warn = (label: string, n: number): string =>
    n > 0 ? `    ${label.padEnd(LABEL)}${c.yellow(String(n).padStart(NUMBER))}` : row(label, n);
  if (counts.service) {
    const s = counts.service;
    const notAsked = s.status_not_checked > 0 ? `, ${s.status_not_checked} open not asked (--max-status-checks)` : '';
    lines.push(
      '',
      c.bold('  service'),
      row('import processes', s.all),
      row('imported (account exists)', s.imported),
      row('pending', s.pending),
      warn('ERRORED (of those asked)', s.errored) + c.dim(`  v2 status asked for ${s.status_checked}${notAsked}`),
    );
  }
  if (counts.ledger) {
    lines.push('', c.bold('  ledger'));
    for (const [state, label] of Object.entries(STATE_LABELS)) {
      const n = counts.ledger[state as keyof typeof counts.ledger];
      if (n !== undefined) lines.push(STATE_FACTS[state as AccountState].needsPerson ? warn(label, n) : row(label, n));
    }
    lines.push(...stepLines(summary, c), ...neverReadLines(summary, c));
    const period = summary.open_period;
    const periodCounts = period && { ...period, movedAccounts: period.moved_accounts };
    for (const line of openPeriodLines(periodCounts ?? undefined)) lines.push(c.yellow(`    ${line}`));
  }
  if (counts.service && counts.ledger)
    lines.push(
      '',
      c.bold('  ledger vs service'),
      warn('only in the ledger', counts.only_in_ledger),
      row('only on the service', counts.only_on_service),
      warn('both, disagreeing', counts.differs),
    );
  if (summary.top_error_codes.length > 0) {
    lines.push('', c.bold('  most frequent errors'));
    for (const error of summary.top_error_codes)
      lines.push(`    ${c.red(error.code.padEnd(LABEL))}${String(error.count).padStart(NUMBER)}`);
  }
  lists(summary, c).forEach(([title, rows, total]) => section(lines, c, summary, title, rows, total));
  // Read top down: the next step first, then the others in the order they come.
  const [next, ...later] = summary.next_steps;
  lines.push('', c.bold(`next: ${next ?? 'nothing to do'}`), ...later.map((step) => c.dim(`then: ${step}`)));
  return `${lines.join('\n')}\n`;
}

/** Accounts and records per step of the pipeline: done, still on their way, and needing attention. */
function stepLines(summary: StatusSummary, c: ChalkInstance): string[] {
  const l = summary.counts.ledger ?? {};
  const n = (...states: Array<keyof typeof l>): number => states.reduce((total, state) => total + (l[state] ?? 0), 0);
  const done = summary.counts.items_done ?? {};
  const rows: Array<[string, number, number, number]> = [
    ['created', n('scheduled', 'processed', 'errored', 'done'), n('staged', 'creating'), n('invalid')],
    ['processed', n('processed', 'done'), n('scheduled'), n('errored')],
  ];
  for (const [kind, label] of Object.entries(KIND_LABELS)) {
    const outstanding = summary.counts.items_outstanding?.[kind] ?? {};
    const total = done[kind] ?? 0;
    const waiting = (outstanding.pending ?? 0) + (outstanding.sending ?? 0);
    const attention = (outstanding.held ?? 0) + (outstanding.failed ?? 0) + (outstanding.unknown ?? 0);
    if (total + waiting + attention > 0) rows.push([label, total, waiting, attention]);
  }
  const cell = (value: number | string): string => String(value).padStart(11);
  return [
    '',
    c.bold(`  ${'steps'.padEnd(LABEL)}${cell('done')}${cell('waiting')}${cell('attention')}`),
    ...rows.map(
      ([label, ok, waiting, attention]) =>
        `    ${label.padEnd(LABEL - 2)}${cell(ok)}${cell(waiting)}` +
        (attention > 0 ? c.yellow(cell(attention)) : cell(attention)),
    ),
  ];
}

/** The export's accounts no push has read: a push stopped while reading it (push's summary says it in these words). */
function neverReadLines(summary: StatusSummary, c: ChalkInstance): string[] {
  const unread = summary.export;
  if (unread === null || unread.never_read === 0) return [];
  const about = (n: number): string => n.toLocaleString('en-GB');
  return [
    '',
    c.yellow(
      `  export: about ${about(unread.never_read)} accounts never read of about ${about(unread.accounts)} in ` +
        `${unread.dir} (the last push stopped while reading the export; the next push reads them)`,
    ),
  ];
}

type List = [title: string, rows: string[], total: number];

/** Records not done of the given states, counted over every kind. */
function itemsIn(summary: StatusSummary, states: readonly string[]): number {
  let total = 0;
  for (const byState of Object.values(summary.counts.items_outstanding ?? {}))
    for (const [state, n] of Object.entries(byState)) if (states.includes(state)) total += n ?? 0;
  return total;
}

/**
 * The lists, what needs a person first (ERRORED accounts, records refused, held back or of unknown outcome, the ledger
 * and the service contradicting each other, changes the platform cannot take), then what waits and why. Each is a
 * section of its own, so that another kind needing a person joins the first group.
 */
function lists(summary: StatusSummary, c: ChalkInstance): List[] {
  const counts = summary.counts;
  const needing = itemsIn(summary, NEEDING_PERSON);
  const waiting = itemsIn(summary, ['pending', 'sending']);
  const rows = recordRows(summary);
  const records = (person: boolean): string[] =>
    rows.filter((_, index) => NEEDING_PERSON.includes(summary.items_outstanding[index]?.state ?? 'pending') === person);
  const erroredNumbers = width(summary.errored.map((row) => row.external_account_number));
  const erroredCodes = width(summary.errored.map((row) => row.code));
  return [
    [
      `ERRORED on the platform (${counts.errored})`,
      summary.errored.map(
        (row) =>
          `${row.external_account_number.padEnd(erroredNumbers)}  ${c.red(row.code.padEnd(erroredCodes))}  ` +
          `${oneLine(row.detail)}`,
      ),
      counts.errored,
    ],
    [`records that need a person (${needing})`, records(true), needing],
    [
      'only in the ledger (sent, unknown to the service)',
      summary.only_in_ledger.map((row) => `${row.external_account_number}  ledger: ${row.state}`),
      counts.only_in_ledger,
    ],
    ['ledger and service disagree', summary.differs.map((row) => differsLine(row)), counts.differs],
    changedList(summary),
    [
      'pending on the service (processing)',
      summary.pending_on_service,
      counts.service ? counts.service.pending - counts.service.errored : 0,
    ],
    [`records waiting (${waiting})`, records(false), waiting],
    [
      'only on the service (not in this ledger)',
      summary.only_on_service.map(
        (row) => `${row.external_account_number}  ${row.platform_account_number ?? 'pending'}`,
      ),
      counts.only_on_service,
    ],
  ];
}

/** A row the ledger and the service disagree on: the states, and both platform account numbers where they differ. */
function differsLine(row: DiffersRow): string {
  const numbers =
    row.ledger_platform_account_number === undefined
      ? ''
      : `; platform account number: ledger ${row.ledger_platform_account_number}, service ` +
        `${row.platform_account_number ?? '-'}`;
  return `${row.external_account_number}  ledger: ${row.state}, service: ${row.service}${numbers}`;
}

const width = (values: string[]): number => values.reduce((most, value) => Math.max(most, value.length), 0);

/** One aligned row per record listed: account, kind, what holds it, its code, file:line. */
function recordRows(summary: StatusSummary): string[] {
  const items = summary.items_outstanding;
  const numbers = width(items.map((item) => item.external_account_number));
  const kinds = width(items.map((item) => item.record));
  const holds = width(items.map((item) => item.held_by));
  const codes = width(items.map((item) => item.code ?? '-'));
  return items.map((item) =>
    [
      item.external_account_number.padEnd(numbers),
      item.record.padEnd(kinds),
      item.held_by.padEnd(holds),
      (item.code ?? '-').padEnd(codes),
      item.file ? `${item.file}:${item.line ?? ''}` : '',
    ]
      .join('  ')
      .trimEnd(),
  );
}

/** Accounts and records changed in the export after they were sent: where the export has them now. */
function changedList(summary: StatusSummary): List {
  const changed = summary.changed_after_import;
  if (changed === null) return ['', [], 0];
  const total = changed.accounts + Object.values(changed.records).reduce((sum, n) => sum + (n ?? 0), 0);
  const rows = changed.listed.map((row) =>
    [row.external_account_number, row.record, row.record_key, row.file ? `${row.file}:${row.line ?? ''}` : '']
      .filter((part) => part !== '')
      .join('  '),
  );
  return [`changed in the export after they were sent (${total}; the platform keeps what was sent)`, rows, total];
}

function section(
  lines: string[],
  c: ChalkInstance,
  summary: StatusSummary,
  title: string,
  rows: string[],
  total: number,
): void {
  if (rows.length === 0) return;
  lines.push('', c.bold(`  ${title}`), ...rows.map((row) => `    ${row}`));
  if (total > rows.length)
    lines.push(
      c.dim(
        `    ... and ${total - rows.length} more: migrate status ${summary.import_supplier} --json, or --max-rows ` +
          `${total}`,
      ),
    );
}

function sourcesText(summary: StatusSummary): string {
  if (summary.sources.ledger && summary.sources.service) return 'service and ledger';
  return summary.sources.ledger ? 'ledger only (--offline)' : 'service only (no ledger)';
}

/** A detail on one line, bounded (docs/limits.md): a service's text may be megabytes long. */
const oneLine = (text: string): string => limitDetail(text.replace(/\s+/g, ' ').trim());

export function renderAccountStory(story: AccountStory, options: RenderOptions): string {
  const c = new Chalk({ level: options.color ? 1 : 0 });
  const lines = [c.bold(`${story.import_supplier} ${story.external_account_number}`)];
  const ledger = story.ledger;
  if (ledger === null) {
    lines.push('ledger: not in this ledger');
    if (story.other_suppliers.length > 0)
      lines.push(c.yellow(`  the ledger has it under import supplier ${story.other_suppliers.join(', ')}`));
  } else {
    lines.push(
      `ledger: ${ledger.state}; platform account ${ledger.platform_account_number ?? '-'} (identifier ` +
        `${ledger.platform_identifier ?? '-'}); create attempts ${ledger.create_attempts}, polls ${ledger.polls}`,
    );
    lines.push(
      `  from ${ledger.origin.file ?? '-'}:${ledger.origin.line ?? '-'}; first staged ${ledger.first_staged_at}; ` +
        `updated ${ledger.updated_at}` +
        (ledger.changed_after_import ? c.yellow('; export changed after import (the service cannot update it)') : ''),
    );
    if (ledger.error)
      lines.push(
        c.red(
          `  last error ${ledger.error.code}: ` +
            oneLine(ledger.error.detail) +
            (ledger.error.file ? ` (${ledger.error.file}:${ledger.error.line ?? ''})` : ''),
        ),
      );
    for (const issue of ledger.issues)
      lines.push(
        `  issue ${issue.code} ` +
          `${issue.file ?? ''}:${issue.line ?? ''}${issue.column ? ` column ${issue.column}` : ''}` +
          `${issue.attr ? ` (${issue.attr})` : ''}: ${oneLine(issue.message)}`,
      );
    lines.push('history:');
    for (const event of ledger.history) {
      const move = event.fromState || event.toState ? ` ${event.fromState ?? ''} -> ${event.toState ?? ''}` : '';
      lines.push(
        `  ${event.at}  run ${event.runId ?? '-'}  ` +
          `${event.step}${event.record ? ` [${event.record}]` : ''}${move}` +
          (event.detail ? `  (${oneLine(event.detail)})` : ''),
      );
    }
    lines.push(`records: ${ledger.records.length === 0 ? 'none' : ''}`.trimEnd());
    for (const record of ledger.records) {
      lines.push(
        `  ${record.record} ${record.key || `${record.file ?? ''}:${record.line ?? ''}`}: ` +
          `${record.state}${record.result ? ` (${record.result})` : ''}, ${record.attempts} ` +
          `attempt(s)${record.error ? `; ${record.error.code}: ${oneLine(record.error.detail)}` : ''}` +
          (record.changed_after_import
            ? c.yellow('; export changed after it was sent (the service cannot update it)')
            : ''),
      );
    }
  }
  if (story.service === null) lines.push('service: not asked (--offline)');
  else {
    const { v2, v1 } = story.service;
    lines.push(
      v2 === null
        ? 'service v2: no import process'
        : `service v2: ${v2.status}; identifier ${v2.platform_identifier ?? '-'}; created ${v2.created_at}; ` +
            `modified ${v2.modified_at}`,
    );
    if (v2?.latest_error)
      lines.push(
        c.red(
          `  latest_error ${v2.latest_error.code ?? ''} (${v2.latest_error.domain ?? ''}): ` +
            `${oneLine(v2.latest_error.detail ?? '')}`,
        ),
      );
    lines.push(
      v1 === null
        ? 'service v1: no account'
        : `service v1: ${v1.status}; platform account ${v1.platform_account_number || '-'}`,
    );
  }
  return `${lines.join('\n')}\n`;
}
