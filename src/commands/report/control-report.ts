import { statesWhere } from '../../engine/index.js';
import {
  CONTROL_KINDS,
  CONTROL_STAGES,
  controlMismatches,
  LedgerTally,
  MONEY_FIELDS,
} from '../../intake/control-totals.js';
import type { KindTotal, RecordedTotals } from '../../ledger/index.js';
import { controlMismatchLines } from '../../shape/index.js';
import { accountPagesOf, itemPagesOf, pagesOf, type LedgerSource } from '../common/ledger-source.js';
import type { CsvRecord } from '../common/report-rows.js';
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

const kindOrder = (kind: string): number => {
  const index = (CONTROL_KINDS as readonly string[]).indexOf(kind);
  return index === -1 ? CONTROL_KINDS.length : index;
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

/** What summary.json holds of the control totals, and what the page shows. */
export interface ControlSummary {
  /** The push whose whole read of the export is recorded, and when it started; null: none yet. */
  run_id: number | null;
  read_at: string | null;
  sources: CsvRecord[];
  kinds: CsvRecord[];
  unused_rows: number;
  /** Files of the export directory no source claimed. */
  unclaimed: string[];
  /** Numbers that must agree and do not. */
  mismatches: string[];
}

export function controlSummary(report: ControlReport, unusedRows: number): ControlSummary {
  return {
    run_id: report.recorded?.runId ?? null,
    read_at: report.recorded?.startedAt ?? null,
    sources: reconciliationRows(report),
    kinds: controlTotalRows(report),
    unused_rows: unusedRows,
    unclaimed: report.recorded?.totals.unclaimed ?? [],
    mismatches: report.mismatches,
  };
}

const cellText = (value: string | number): string =>
  typeof value === 'number' ? value.toLocaleString('en-GB') : value;
const cell = (value: string | number, numeric = false): string =>
  `<td${numeric ? ' class="n"' : ''}>${escapeHtml(cellText(value))}</td>`;

/** The page's section: the legacy files' rows, each kind through each stage, and what does not agree. */
export function controlTotalsHtml(control: ControlSummary): string {
  if (control.run_id === null)
    return (
      '<h2 id="control-totals">Control totals</h2><p>No push has read its export to the end yet: the control ' +
      'totals are recorded by a push once it has read the whole export.</p>'
    );
  const value = (row: CsvRecord, column: string): string | number => row[column] ?? '';
  const sources = control.sources
    .map(
      (row) =>
        `<tr>${RECONCILIATION_COLUMNS.map((column, index) => cell(value(row, column), index > 1)).join('')}</tr>`,
    )
    .join('');
  const used = MONEY_FIELDS.filter((field) => control.kinds.some((row) => value(row, field) !== ''));
  const columns = ['kind', 'stage', 'records', ...used];
  const kinds = control.kinds
    .map((row) => `<tr>${columns.map((column, index) => cell(value(row, column), index > 1)).join('')}</tr>`)
    .join('');
  const mismatches =
    control.mismatches.length === 0
      ? '<p data-total="mismatches">Every number agrees from one stage to the next.</p>'
      : `<p>Numbers that must agree and do not:</p><ul data-total="mismatches">` +
        `${control.mismatches.map((line) => `<li>${escapeHtml(line)}</li>`).join('')}</ul>`;
  const passedOver =
    control.unclaimed.length === 0
      ? ''
      : `<p>Files of the export directory no source claims (not read): ` +
        `${control.unclaimed.map((name) => `<code>${escapeHtml(name)}</code>`).join(', ')}.</p>`;
  const head = (names: readonly string[]): string =>
    names.map((name, index) => `<th${index > 1 ? ' class="n"' : ''}>${escapeHtml(name)}</th>`).join('');
  return (
    `<h2 id="control-totals">Control totals</h2>` +
    `<p>From the legacy files to the platform: the export as push ${control.run_id} read it ` +
    `(${escapeHtml(control.read_at ?? '')}), and what the ledger says was sent and accepted. ` +
    `<a href="${CONTROL_FILES.reconciliation}">reconciliation.csv</a>, ` +
    `<a href="${CONTROL_FILES.controlTotals}">control-totals.csv</a>, ` +
    `<a href="${CONTROL_FILES.unusedRows}">unused-rows.csv</a> (${cellText(control.unused_rows)} legacy ` +
    `row(s) that reached no record).</p>` +
    mismatches +
    passedOver +
    `<table id="reconciliation"><thead><tr>${head(RECONCILIATION_COLUMNS)}</tr></thead><tbody>${sources}</tbody>` +
    `</table><table id="kinds"><thead><tr>${head(columns)}</tr></thead><tbody>${kinds}</tbody></table>`
  );
}
