import { Chalk, type ChalkInstance } from 'chalk';
import type { AccountStory } from './account-story.js';
import type { StatusSummary } from './status-gather.js';

// How `migrate status` prints: a table for a person at a terminal (colour unless NO_COLOR),
// plain `word value` lines otherwise (cron mail, grep, awk). --json bypasses both.

export interface RenderOptions {
  /** Aligned table with headings (a terminal); otherwise one record per line. */
  table: boolean;
  color: boolean;
}

const LEDGER_LABELS: Record<string, string> = {
  staged: 'not sent yet',
  invalid: 'invalid (fix the export)',
  creating: 'create unconfirmed',
  scheduled: 'waiting for processing',
  processed: 'imported, records left',
  errored: 'ERRORED on the platform',
  done: 'done',
  unresolved: 'records wait for their account',
};

export function renderStatus(summary: StatusSummary, options: RenderOptions): string {
  return options.table ? renderTable(summary, new Chalk({ level: options.color ? 1 : 0 })) : renderPlain(summary);
}

function renderPlain(summary: StatusSummary): string {
  const c = summary.counts;
  const lines = [
    `supplier ${summary.import_supplier}`,
    `sources ledger=${summary.sources.ledger ? 'yes' : 'no'} service=${summary.sources.service ? 'yes' : 'no'}`,
  ];
  if (c.ledger) lines.push(`ledger ${pairs(c.ledger)}`);
  if (c.service) lines.push(`service ${pairs(c.service)}`);
  lines.push(
    `mismatch errored=${c.errored} only_in_ledger=${c.only_in_ledger} only_on_service=${c.only_on_service} differs=${c.differs}`,
  );
  for (const [kind, states] of Object.entries(c.items_outstanding ?? {})) lines.push(`items ${kind} ${pairs(states)}`);
  for (const row of summary.errored)
    lines.push(`errored ${row.external_account_number} ${row.code} ${oneLine(row.detail)}`);
  for (const number of summary.pending_on_service) lines.push(`pending ${number}`);
  for (const row of summary.only_in_ledger) lines.push(`only_in_ledger ${row.external_account_number} ${row.state}`);
  for (const row of summary.only_on_service)
    lines.push(`only_on_service ${row.external_account_number} ${row.platform_account_number ?? ''}`.trimEnd());
  for (const row of summary.differs)
    lines.push(`differs ${row.external_account_number} ledger=${row.state} service=${row.service}`);
  for (const item of summary.items_outstanding)
    lines.push(
      `item ${item.external_account_number} ${item.record} ${item.state} ${item.code ?? ''} ${item.file ?? ''}${item.line === null ? '' : `:${item.line}`}`
        .replace(/ +/g, ' ')
        .trimEnd(),
    );
  const pendingTotal = c.service ? c.service.pending - c.service.errored : 0;
  const itemsTotal = Object.values(c.items_outstanding ?? {}).reduce(
    (sum, states) => sum + Object.values(states).reduce((a, b) => a + (b ?? 0), 0),
    0,
  );
  const shown: Array<[string, number, number]> = [
    ['errored', c.errored, summary.errored.length],
    ['pending', pendingTotal, summary.pending_on_service.length],
    ['only_in_ledger', c.only_in_ledger, summary.only_in_ledger.length],
    ['only_on_service', c.only_on_service, summary.only_on_service.length],
    ['differs', c.differs, summary.differs.length],
    ['item', itemsTotal, summary.items_outstanding.length],
  ];
  // A list cut at --max-rows says so, with how many were left out.
  for (const [word, total, listed] of shown) if (total > listed) lines.push(`more ${word} ${total - listed}`);
  return `${lines.join('\n')}\n`;
}

function renderTable(summary: StatusSummary, c: ChalkInstance): string {
  const counts = summary.counts;
  const lines = [
    '',
    c.bold(`import supplier ${summary.import_supplier}`) + c.dim(` (${sourcesText(summary)}, ${summary.generated_at})`),
    '',
  ];
  if (counts.ledger) {
    lines.push(c.bold('  ledger'));
    for (const [state, label] of Object.entries(LEDGER_LABELS)) {
      const n = counts.ledger[state as keyof typeof counts.ledger];
      if (n !== undefined) lines.push(`    ${label.padEnd(34)}${String(n).padStart(9)}`);
    }
  }
  if (counts.service) {
    const s = counts.service;
    lines.push(
      '',
      c.bold('  service'),
      `    ${'import processes'.padEnd(34)}${String(s.all).padStart(9)}`,
      `    ${'imported (account exists)'.padEnd(34)}${String(s.imported).padStart(9)}`,
      `    ${'pending'.padEnd(34)}${String(s.pending).padStart(9)}`,
    );
    lines.push(
      `    ${'ERRORED (of those asked)'.padEnd(34)}${String(s.errored).padStart(9)}` +
        c.dim(
          `  v2 status asked for ${s.status_checked}${s.status_not_checked > 0 ? `, ${s.status_not_checked} open accounts not asked (--max-status-checks)` : ''}`,
        ),
    );
  }
  const warn = (n: number): string => (n > 0 ? c.yellow(String(n).padStart(9)) : String(n).padStart(9));
  if (counts.service && counts.ledger) {
    lines.push(
      '',
      c.bold('  ledger vs service'),
      `    ${'only in the ledger'.padEnd(34)}${warn(counts.only_in_ledger)}`,
      `    ${'only on the service'.padEnd(34)}${warn(counts.only_on_service)}`,
      `    ${'both, disagreeing'.padEnd(34)}${warn(counts.differs)}`,
    );
  }
  section(
    lines,
    c,
    `ERRORED (${counts.errored})`,
    summary.errored.map((row) => `${row.external_account_number}  ${c.red(row.code)}  ${oneLine(row.detail)}`),
    counts.errored,
  );
  section(
    lines,
    c,
    'pending on the service',
    summary.pending_on_service,
    counts.service ? counts.service.pending - counts.service.errored : 0,
  );
  section(
    lines,
    c,
    'only in the ledger (sent, unknown to the service)',
    summary.only_in_ledger.map((row) => `${row.external_account_number}  ledger: ${row.state}`),
    counts.only_in_ledger,
  );
  section(
    lines,
    c,
    'only on the service (not in this ledger)',
    summary.only_on_service.map((row) => `${row.external_account_number}  ${row.platform_account_number ?? 'pending'}`),
    counts.only_on_service,
  );
  section(
    lines,
    c,
    'ledger and service disagree',
    summary.differs.map((row) => `${row.external_account_number}  ledger: ${row.state}, service: ${row.service}`),
    counts.differs,
  );
  const outstanding = Object.entries(counts.items_outstanding ?? {});
  if (outstanding.length > 0) {
    lines.push('', c.bold('  post-import records outstanding'));
    for (const [kind, states] of outstanding) lines.push(`    ${kind.padEnd(22)}${pairs(states)}`);
    for (const item of summary.items_outstanding)
      lines.push(
        c.dim(
          `      ${item.external_account_number}  ${item.record} ${item.state}${item.code ? `  ${item.code}` : ''}${item.file ? `  ${item.file}:${item.line ?? ''}` : ''}`,
        ),
      );
  }
  lines.push(
    '',
    c.dim('  per-account detail: migrate status SUPPLIER --account NUMBER; files for the data team: migrate report'),
    '',
  );
  return lines.join('\n');
}

function section(lines: string[], c: ChalkInstance, title: string, rows: string[], total: number): void {
  if (rows.length === 0) return;
  lines.push('', c.bold(`  ${title}`), ...rows.map((row) => `    ${row}`));
  if (total > rows.length)
    lines.push(c.dim(`    ... and ${total - rows.length} more (--max-rows, --json, or migrate report)`));
}

function sourcesText(summary: StatusSummary): string {
  if (summary.sources.ledger && summary.sources.service) return 'service and ledger';
  return summary.sources.ledger ? 'ledger only (--offline)' : 'service only (no ledger)';
}

function pairs(record: Record<string, unknown>): string {
  return Object.entries(record)
    .map(([key, value]) => `${key}=${String(value)}`)
    .join(' ');
}

const oneLine = (text: string): string => text.replace(/\s+/g, ' ').trim();

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
      `ledger: ${ledger.state}; platform account ${ledger.platform_account_number ?? '-'} (identifier ${ledger.platform_identifier ?? '-'}); create attempts ${ledger.create_attempts}, polls ${ledger.polls}`,
    );
    lines.push(
      `  from ${ledger.origin.file ?? '-'}:${ledger.origin.line ?? '-'}; first staged ${ledger.first_staged_at}; updated ${ledger.updated_at}${ledger.changed_after_import ? c.yellow('; export changed after import (the service cannot update it)') : ''}`,
    );
    if (ledger.error)
      lines.push(
        c.red(
          `  last error ${ledger.error.code}: ${oneLine(ledger.error.detail)}${ledger.error.file ? ` (${ledger.error.file}:${ledger.error.line ?? ''})` : ''}`,
        ),
      );
    for (const issue of ledger.issues)
      lines.push(
        `  issue ${issue.code} ${issue.file ?? ''}:${issue.line ?? ''}${issue.column ? ` column ${issue.column}` : ''}${issue.attr ? ` (${issue.attr})` : ''}: ${oneLine(issue.message)}`,
      );
    lines.push('history:');
    for (const event of ledger.history) {
      const move = event.fromState || event.toState ? ` ${event.fromState ?? ''} -> ${event.toState ?? ''}` : '';
      lines.push(
        `  ${event.at}  run ${event.runId ?? '-'}  ${event.step}${event.record ? ` [${event.record}]` : ''}${move}${event.detail ? `  (${oneLine(event.detail)})` : ''}`,
      );
    }
    lines.push(`records: ${ledger.records.length === 0 ? 'none' : ''}`.trimEnd());
    for (const record of ledger.records) {
      lines.push(
        `  ${record.record} ${record.key || `${record.file ?? ''}:${record.line ?? ''}`}: ${record.state}${record.result ? ` (${record.result})` : ''}, ${record.attempts} attempt(s)${record.error ? `; ${record.error.code}: ${oneLine(record.error.detail)}` : ''}`,
      );
    }
  }
  if (story.service === null) lines.push('service: not asked (--offline)');
  else {
    const { v2, v1 } = story.service;
    lines.push(
      v2 === null
        ? 'service v2: no import process'
        : `service v2: ${v2.status}; identifier ${v2.platform_identifier ?? '-'}; created ${v2.created_at}; modified ${v2.modified_at}`,
    );
    if (v2?.latest_error)
      lines.push(
        c.red(
          `  latest_error ${v2.latest_error.code ?? ''} (${v2.latest_error.domain ?? ''}): ${oneLine(v2.latest_error.detail ?? '')}`,
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
