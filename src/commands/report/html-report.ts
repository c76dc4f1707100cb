import { basename, join } from 'node:path';
import { statesWhere } from '../../engine/index.js';
import { ITEM_KINDS, type AccountRow, type PushRunRow } from '../../ledger/index.js';
import {
  accountTotals,
  campaignSection,
  overTimeSection,
  percentText,
  refusedNote,
  runsSection,
} from './html-campaign.js';
import { accountPagesOf, type LedgerSource } from '../common/ledger-source.js';
import { escapeHtml, horizontalBars, type Bar } from '../../output/svg-charts.js';
import { KIND_LABELS } from '../common/labels.js';
import { shellWord, type KnownValues } from '../common/shell-word.js';
import { controlTotalsHtml } from './control-report.js';
import { writeWhole, type ReportSummary } from './write-report.js';

// report.html: one self-contained page beside the CSVs for a project board. Inline CSS and SVG
// drawn here (svg-charts.ts); no script, font or image from anywhere, so it opens from a file
// share with no network. Everything in it is an aggregate the ledger computes (counts per state,
// accounts done per run and per hour, error codes with a sample) or a bounded list, so memory does not grow
// with the ledger. Personal data: none beyond what the CSVs carry (account numbers, codes,
// file:line); the service's error details stay in the CSVs.

export const HTML_REPORT_FILE = 'report.html';

/** Accounts listed in the page's "needs action" table; the CSVs hold them all. */
const LISTED = 25;
const ACTION_STATES = statesWhere('needsPerson');

interface Page {
  summary: ReportSummary;
  runs: PushRunRow[];
  /** Accounts done now, by the UTC hour they first reached done. */
  hours: Array<{ hour: string; done: number }>;
  samples: Map<string, string>;
  needsAction: AccountRow[];
  /** Unix ms: the report's time (the pace and the estimated finish are measured to it). */
  now: number;
  /** The ledger's flag and the last push's export directory: the page's commands are pasted as they stand. */
  known: KnownValues;
}

/** Writes report.html into `outDir` (0600, whole or not at all); returns its path. */
export async function writeHtmlReport(
  source: LedgerSource,
  summary: ReportSummary,
  options: { outDir: string; supplier: string | undefined; known: KnownValues },
): Promise<string> {
  const samples = new Map<string, string>();
  for (const { code } of summary.top_error_codes) {
    const sample = source.sampleOfError(code, options.supplier);
    if (sample !== null) samples.set(code, `${sample.file}${sample.line === null ? '' : `:${sample.line}`}`);
  }
  const needsAction: AccountRow[] = [];
  for await (const page of accountPagesOf(source, {
    supplier: options.supplier,
    states: ACTION_STATES,
    pageSize: LISTED,
  })) {
    needsAction.push(...page.slice(0, LISTED - needsAction.length));
    if (needsAction.length >= LISTED) break;
  }
  const html = renderHtmlReport({
    summary,
    runs: source.pushRuns(options.supplier),
    hours: source.doneByHour(options.supplier),
    samples,
    needsAction,
    now: Date.parse(summary.generated_at),
    known: options.known,
  });
  const path = join(options.outDir, HTML_REPORT_FILE);
  writeWhole(path, html);
  return path;
}

const sum = (values: Iterable<number | undefined>): number => {
  let total = 0;
  for (const value of values) total += value ?? 0;
  return total;
};
const format = (n: number): string => n.toLocaleString('en-GB');

/** Accounts through each step, scaled to the accounts in the export; those done with a refused record said. */
function funnel(summary: ReportSummary): Bar[] {
  const a = summary.accounts;
  const { total, done, refused } = accountTotals(summary);
  return [
    { label: 'accounts in the export', value: total },
    { label: 'valid', value: total - (a.invalid ?? 0) },
    { label: 'created on the platform', value: sum([a.scheduled, a.processed, a.errored, a.done]) },
    { label: 'processed', value: sum([a.processed, a.done]) },
    { label: 'done', value: done, color: '#2e8b57', ...(refused > 0 ? { note: refusedNote(refused).trim() } : {}) },
  ];
}

/** Post-import records done, each kind as a share of its own total, those the service refused as a failed segment. */
function recordSteps(summary: ReportSummary): Bar[] {
  const bars: Bar[] = [];
  for (const kind of ITEM_KINDS) {
    const states = summary.items[kind];
    if (states === undefined) continue;
    const all = sum(Object.values(states));
    bars.push({
      label: KIND_LABELS[kind],
      value: states.done ?? 0,
      color: '#6a8fc0',
      note: `of ${format(all)}`,
      of: all,
      ...(states.failed ? { failed: states.failed } : {}),
    });
  }
  return bars;
}

function header(summary: ReportSummary, runs: number): string {
  const { total, done, refused } = accountTotals(summary);
  const last = summary.runs.find((run) => run.command === 'push');
  const exit = last === undefined ? 'no run yet' : `${last.status}, exit ${last.exit_code ?? '-'} (run ${last.id})`;
  const fact = (name: string, label: string, value: string, note = ''): string =>
    `<div><dt>${label}</dt><dd data-total="${name}">${escapeHtml(value)}</dd>${note}</div>`;
  const rows = summary.fix_data.rows;
  return (
    `<h1>Migration report${summary.import_supplier ? ` — ${escapeHtml(summary.import_supplier)}` : ''}</h1>` +
    `<p class="meta">${ledgerWord(summary.state_dir)} ${escapeHtml(summary.state_dir)} · generated ` +
    `${escapeHtml(summary.generated_at)} · times in UTC</p>` +
    `<dl class="facts">${[
      fact('supplier', 'import supplier', summary.import_supplier ?? 'all'),
      fact('runs', 'push runs', format(runs)),
      fact('accounts', 'accounts', format(total)),
      fact('done', 'done', format(done), `<small>${percentText(done, total)}${refusedNote(refused)}</small>`),
      fact(
        'attention',
        'accounts needing action',
        format(summary.fix_data.accounts),
        `<small><a href="fix-data.csv"><span data-total="fix-rows">${format(rows)}</span> ` +
          `row${rows === 1 ? '' : 's'} in fix-data.csv</a></small>`,
      ),
      fact('exit', 'last run', exit),
    ].join('')}</dl>`
  );
}

function actionTables(page: Page): string {
  const files = Object.entries(page.summary.files)
    .filter(([name]) => name.endsWith('.csv'))
    .map(
      ([name, file]) =>
        `<tr><td><a href="${escapeHtml(encodeURIComponent(basename(file.path)))}">${escapeHtml(name)}</a></td><td ` +
        `class="n">${format(file.rows)}</td></tr>`,
    )
    .join('');
  const ledger = page.known.ledgerWords ?? '';
  const rows = page.needsAction
    .map((account) => {
      const where = account.error?.file ?? account.originFile;
      const line = account.error?.line ?? account.originLine;
      const at = where ? `${where}${line === null || line === undefined ? '' : `:${line}`}` : '';
      // What a person pastes to see the account's story: its own supplier and number, this ledger's flag.
      const check =
        account.state === 'errored'
          ? `<code>${escapeHtml(
              `migrate status ${shellWord(account.importSupplier)}${ledger} --account ` +
                shellWord(account.externalAccountNumber),
            )}</code>`
          : '';
      return (
        `<tr><td>${escapeHtml(account.externalAccountNumber)}</td><td>${escapeHtml(account.state)}</td>` +
        `<td>${escapeHtml(account.error?.code ?? '')}</td><td>${escapeHtml(at)}</td><td>${check}</td></tr>`
      );
    })
    .join('');
  const more = sum(ACTION_STATES.map((state) => page.summary.accounts[state])) - page.needsAction.length;
  const dir = page.known.exportDir === undefined ? 'EXPORT_DIR' : shellWord(page.known.exportDir);
  const listed =
    `<p>Invalid or ERRORED accounts, the first ${LISTED}: an invalid account's data must be fixed in the export, in ` +
    `the file and line its row names; an ERRORED account is checked with the command in its row, then pushed ` +
    `again: <code id="retry-errored">${escapeHtml(`migrate push ${dir}${ledger} --retry-errored`)}</code>. ` +
    `fix-data.csv also lists the records refused or held back, and every problem of an account on its own row.</p>`;
  return (
    `<h2>What needs action</h2><table><thead><tr><th>file</th><th ` +
    `class="n">rows</th></tr></thead><tbody>${files}</tbody></table>` +
    (rows === ''
      ? '<p>No account is invalid or ERRORED.</p>'
      : `${listed}<table id="needs-action"><thead><tr><th>account</th><th>state</th><th>error</th><th>where</th>` +
        `<th>check with</th></tr></thead>` +
        `<tbody>${rows}</tbody></table>` +
        (more > 0 ? `<p>… and ${format(more)} more in <a href="fix-data.csv">fix-data.csv</a>.</p>` : ''))
  );
}

const STYLE = `body{font:14px/1.4 system-ui,sans-serif;margin:24px auto;max-width:900px;color:#222;padding:0 16px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px;border-bottom:1px solid #ddd;padding-bottom:4px}
.meta{color:#666;margin:0 0 12px}.facts{display:flex;flex-wrap:wrap;gap:12px;margin:0}
.facts div{border:1px solid #ddd;border-radius:6px;padding:8px 12px;min-width:110px}
dt{color:#666;font-size:12px}dd{margin:0;font-size:18px;font-weight:600}
table{border-collapse:collapse;margin:8px 0}td,th{border-bottom:1px solid #eee;padding:4px 12px 4px 0;text-align:left}
.n{text-align:right}svg{max-width:100%;height:auto}.facts small{display:block;color:#666;font-size:12px}
.complete{font-size:28px;font-weight:600}.complete .meta{font-size:14px;font-weight:400}
.track{height:14px;background:#e6ecf5;border-radius:7px;overflow:hidden;margin:6px 0 8px}
.track div{height:100%;background:#2e8b57}`;

/** The whole page. Pure: given what was read, the same text. */
export function renderHtmlReport(page: Page): string {
  const { summary } = page;
  const campaign = { summary, runs: page.runs, hours: page.hours, now: page.now };
  const errors = summary.top_error_codes.map((error) => ({
    label: error.code,
    value: error.count,
    color: '#c0392b',
    note: page.samples.has(error.code) ? `e.g. ${page.samples.get(error.code) ?? ''}` : '',
  }));
  const title = `Migration report${summary.import_supplier ? ` ${escapeHtml(summary.import_supplier)}` : ''}`;
  const records =
    Object.keys(summary.items).length === 0
      ? '<p>No post-import record.</p>'
      : horizontalBars('post-import records done and refused, of each kind', recordSteps(summary));
  const errorBars = errors.length === 0 ? '<p>No error.</p>' : horizontalBars('most frequent error codes', errors);
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
<title>${title}</title><style>${STYLE}</style></head>
<body>
${header(summary, page.runs.length)}
${campaignSection(campaign)}
${overTimeSection(campaign)}
<h2>Accounts through each step</h2>
<figure id="funnel">${horizontalBars('accounts through each step', funnel(summary))}</figure>
<h2>Post-import records done (refused in red)</h2>
<figure id="records">${records}</figure>
${runsSection(page.runs)}
<h2>Most frequent errors</h2>
<figure id="errors">${errorBars}</figure>
${controlTotalsHtml(summary.control_totals)}
${actionTables(page)}
</body></html>
`;
}

/** A PostgreSQL ledger is named by its URL (without its password), a SQLite one by its state directory. */
function ledgerWord(stateDir: string): string {
  return /^postgres(?:ql)?:\/\//u.test(stateDir) ? 'ledger' : 'state directory';
}
