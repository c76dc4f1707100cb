import { statesWhere } from '../../engine/index.js';
import { CONTROL_STAGES, controlMismatches, LedgerTally, MONEY_FIELDS } from '../../intake/control-totals.js';
import type { KindTotal, RecordedTotals } from '../../ledger/index.js';
import { controlMismatchLines } from '../../shape/index.js';
import { accountPagesOf, itemPagesOf, pagesOf, type LedgerSource } from '../shared/ledger-source.js';
import type { CsvRecord } from '../shared/report-rows.js';
import { escapeHtml } from '../../output/svg-charts.js';

// `migrate report`'s control totals (docs/control-totals.md): the last whole read of the export as push recorded it
// (records shaped and valid, legacy rows read and used), beside what the ledger says was sent and accepted, with the
// numbers that must agree and do not named. Read page by page: the accounts and records are summed as they pass.

export const CONTROL_FILES = {
  reconciliation: 'reconciliation.csv',
  controlTotals: 'control-totals.csv',
  unusedRows: 'unused-rows.csv',
} as const;

export const RECONCILIATION_COLUMNS = ['source', 'file', 'rows_read', 'rows_used', 'rows_unused'] as const;
export const CONTROL_TOTALS_COLUMNS = ['kind', 'stage', 'records', ...MONEY_FIELDS] as const;
export const UNUSED_ROWS_COLUMNS = ['source', 'file', 'line'] as const;

export interface ControlReport {
  /** The export's totals as the last push that read it whole recorded them; undefined: none yet. */
  recorded: RecordedTotals | undefined;
  /** Every kind at every stage: shaped and valid from `recorded`, sent and accepted from the ledger. */
  kinds: KindTotal[];
  /** Numbers that must agree and do not, one line each (stages of a kind, control files). */
  mismatches: string[];
}

/** Items a request went out for: done, refused, its outcome unknown, or on its way. */
const SENT_ITEM_STATES = ['sending', 'done', 'failed', 'unknown'] as const;

/** Reads the recorded totals and sums the ledger's accounts and records (of one supplier, or all). */
export async function readControlReport(
  source: LedgerSource,
  options: { supplier: string | undefined; pageSize?: number },
): Promise<ControlReport> {
  const recorded = source.exportTotals();
  const tally = new LedgerTally();
  const imported = new Set<string>(statesWhere('imported'));
  const pages = { supplier: options.supplier, ...(options.pageSize ? { pageSize: options.pageSize } : {}) };
  for await (const accounts of accountPagesOf(source, { ...pages, states: statesWhere('createSent') }))
    for (const account of accounts)
      if (account.payload !== null)
        tally.account(JSON.parse(account.payload) as Record<string, unknown>, {
          sent: true,
          accepted: imported.has(account.state),
        });
  for await (const items of itemPagesOf(source, { ...pages, states: SENT_ITEM_STATES }))
    for (const item of items)
      tally.item(item.kind, JSON.parse(item.body) as Record<string, unknown>, {
        sent: true,
        accepted: item.state === 'done',
      });
  const stages = CONTROL_STAGES.map((stage) => stage as string);
  const kinds = [...(recorded?.totals.kinds ?? []), ...tally.totals()].sort(
    (a, b) => kindOrder(a.kind) - kindOrder(b.kind) || stages.indexOf(a.stage) - stages.indexOf(b.stage),
  );
  const mismatches = [...controlMismatches(kinds), ...controlMismatchLines(recorded?.totals.controlCounts ?? [])];
  return { recorded, kinds, mismatches };
}

const KIND_ORDER = ['accounts', 'customers', 'supply_addresses', 'notes', 'transactions', 'statements'];
const kindOrder = (kind: string): number => {
  const index = KIND_ORDER.indexOf(kind);
  return index === -1 ? KIND_ORDER.length : index;
};

export function reconciliationRows(report: ControlReport): CsvRecord[] {
  return (report.recorded?.totals.sources ?? []).map((file) => ({
    source: file.source,
    file: file.file,
    rows_read: file.rowsRead,
    rows_used: file.rowsUsed,
    rows_unused: file.rowsRead - file.rowsUsed,
  }));
}

export function controlTotalRows(report: ControlReport): CsvRecord[] {
  return report.kinds.map((total) => ({
    kind: total.kind,
    stage: total.stage,
    records: total.records,
    ...Object.fromEntries(MONEY_FIELDS.map((field) => [field, total.money[field] ?? ''])),
  }));
}

/** Every legacy row that reached no record, a page at a time. */
export async function* unusedRowRecords(source: LedgerSource, report: ControlReport): AsyncGenerator<CsvRecord> {
  const runId = report.recorded?.runId;
  if (runId === undefined) return;
  for await (const rows of pagesOf((afterId, limit) => source.unusedRows(runId, afterId, limit)))
    for (const row of rows) yield { source: row.source, file: row.file, line: row.line };
}

const cell = (value: string | number, numeric = false): string => {
  const text = typeof value === 'number' ? value.toLocaleString('en-GB') : value;
  return `<td${numeric ? ' class="n"' : ''}>${escapeHtml(text)}</td>`;
};

/** The page's section: the legacy files' rows, each kind through each stage, and what does not agree. */
export function controlTotalsHtml(report: ControlReport): string {
  const { recorded } = report;
  if (recorded === undefined)
    return (
      '<h2 id="control-totals">Control totals</h2><p>No push has read its export to the end yet: the control ' +
      'totals are recorded by a push once it has read the whole export.</p>'
    );
  const sources = reconciliationRows(report)
    .map(
      (row) =>
        `<tr>${cell(row['source'] ?? '')}${cell(row['file'] ?? '')}${cell(row['rows_read'] ?? 0, true)}` +
        `${cell(row['rows_used'] ?? 0, true)}${cell(row['rows_unused'] ?? 0, true)}</tr>`,
    )
    .join('');
  const used = MONEY_FIELDS.filter((field) => report.kinds.some((total) => total.money[field] !== undefined));
  const kinds = report.kinds
    .map(
      (total) =>
        `<tr>${cell(total.kind)}${cell(total.stage)}${cell(total.records, true)}` +
        `${used.map((field) => cell(total.money[field] ?? '', true)).join('')}</tr>`,
    )
    .join('');
  const mismatches =
    report.mismatches.length === 0
      ? '<p data-total="mismatches">Every number agrees from one stage to the next.</p>'
      : `<p>Numbers that must agree and do not:</p><ul data-total="mismatches">` +
        `${report.mismatches.map((line) => `<li>${escapeHtml(line)}</li>`).join('')}</ul>`;
  const unclaimed = recorded.totals.unclaimed;
  const passedOver =
    unclaimed.length === 0
      ? ''
      : `<p>Files of the export directory no source claims (not read): ` +
        `${unclaimed.map((name) => `<code>${escapeHtml(name)}</code>`).join(', ')}.</p>`;
  return (
    `<h2 id="control-totals">Control totals</h2>` +
    `<p>From the legacy files to the platform: the export as push ${recorded.runId} read it ` +
    `(${escapeHtml(recorded.startedAt)}), and what the ledger says was sent and accepted. ` +
    `<a href="${CONTROL_FILES.reconciliation}">reconciliation.csv</a>, ` +
    `<a href="${CONTROL_FILES.controlTotals}">control-totals.csv</a>, ` +
    `<a href="${CONTROL_FILES.unusedRows}">unused-rows.csv</a> (every legacy row that reached no record).</p>` +
    mismatches +
    passedOver +
    `<table id="reconciliation"><thead><tr><th>source</th><th>file</th><th class="n">rows read</th>` +
    `<th class="n">used</th><th class="n">unused</th></tr></thead><tbody>${sources}</tbody></table>` +
    `<table id="kinds"><thead><tr><th>kind</th><th>stage</th><th class="n">records</th>` +
    `${used.map((field) => `<th class="n">${field}</th>`).join('')}</tr></thead><tbody>${kinds}</tbody></table>`
  );
}
