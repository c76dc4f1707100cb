import { closeSync, fchmodSync, writeSync } from 'node:fs';
import { stringify } from 'csv-stringify/sync';
import { visibleValue } from '../../errors.js';
import type { OpenPeriod } from '../../mapping/sourced-record.js';
import type { SourceIssue } from '../../mapping/types.js';
import type { ExportValidation, ValidatedTotals } from '../../intake/validate-export.js';
import type { KindTotal } from '../../ledger/index.js';
import { controlMismatchLines } from '../../shape/index.js';
import {
  duplicateNotesLine,
  ignoredColumnLines,
  linkLines,
  notReadLines,
  spellingLines,
} from '../common/export-entries.js';
import { openOutputFile } from '../../output/output-file.js';
import { spreadsheetCsvOptions } from '../../output/spreadsheet-safe.js';
import { omittedJson, omittedLines, writeOmittedCsv } from './omitted-report.js';

// The outputs of `migrate validate`, as text chunks to write one after the other: the errors are
// read once from their spool, so a report of millions of errors is written in flat memory.

const LINES_PER_CHUNK = 1000;

const CSV_COLUMNS = ['file', 'line', 'column', 'attr', 'external_account_number', 'code', 'message'] as const;

/** One row of `--json` errors and `--errors-csv` (the issue's document, field for field). */
export interface ErrorRow {
  file: string;
  line: number;
  column: string | null;
  attr: string | null;
  external_account_number: string | null;
  code: string;
  message: string;
}

export function errorRow(issue: SourceIssue): ErrorRow {
  return {
    file: issue.file,
    line: issue.line,
    column: issue.column ?? null,
    attr: issue.attr ?? null,
    external_account_number: issue.externalAccountNumber === '' ? null : issue.externalAccountNumber,
    code: issue.code,
    message: issue.message,
  };
}

/** The errors in batches of rows. */
export async function* errorRowBatches(
  validation: ExportValidation,
  size = LINES_PER_CHUNK,
): AsyncGenerator<ErrorRow[]> {
  let batch: ErrorRow[] = [];
  for await (const issue of validation.errors) {
    batch.push(errorRow(issue));
    if (batch.length >= size) {
      yield batch;
      batch = [];
    }
  }
  if (batch.length > 0) yield batch;
}

function nearKeysJson(nearKeys: ExportValidation['nearKeys']): unknown[] {
  return nearKeys.map((near) => ({
    external_account_number: near.orphan.number,
    file: near.orphan.origin.file,
    line: near.orphan.origin.line,
    account: near.account.number,
    account_file: near.account.origin.file,
    account_line: near.account.origin.line,
  }));
}

/**
 * `--json`: one document { ok, accounts, duplicate_notes, files, links, not_read, unicode_spellings?, near_keys?,
 * errors, warnings?, omitted? }, one error (one warning) per line.
 */
export async function* jsonReport(
  validation: ExportValidation,
  period?: OpenPeriod,
  /** The run configuration read and the service asked (null: none), as the run's first line said them. */
  origin?: { run_config: string | null; service_url: string | null },
): AsyncGenerator<string> {
  const { files, notRead } = validation.summary;
  const links = files.flatMap((file) =>
    file.linkTarget === undefined ? [] : [{ file: file.file, target: file.linkTarget }],
  );
  const { spellings } = validation.summary;
  // Only when there are any: documents of exports written in NFC stay as they were.
  const unicode = spellings.lines === 0 ? {} : { unicode_spellings: spellings };
  // Each file read, as its kind (a kind declared by glob has several), with the columns "unmapped": "ignore" left out.
  const read = files.map((file) => ({
    file: file.file,
    kind: file.kind,
    format: file.format,
    records: file.records,
    ...(file.ignoredColumns === undefined ? {} : { ignored_columns: file.ignoredColumns }),
  }));
  const head = JSON.stringify(
    {
      ...origin,
      ok: validation.ok,
      accounts: validation.accounts,
      duplicate_notes: validation.duplicateNotes,
      ...(period === undefined
        ? {}
        : {
            open_period: {
              start: period.start,
              force_add_to_current_statement: period.force,
              moved_by_the_service: validation.beforeOpenPeriod,
            },
          }),
      files: read,
      links,
      not_read: notRead,
      ...unicode,
      ...(validation.nearKeys.length === 0 ? {} : { near_keys: nearKeysJson(validation.nearKeys) }),
      control_totals: controlTotalsJson(validation.controlTotals),
    },
    null,
    2,
  );
  yield `${head.slice(0, -2)},\n  "errors": [`;
  let separator = '';
  for await (const rows of errorRowBatches(validation)) {
    let text = '';
    for (const row of rows) {
      text += `${separator}\n    ${JSON.stringify(row)}`;
      separator = ',';
    }
    yield text;
  }
  yield separator === '' ? ']' : '\n  ]';
  if (validation.warnings.length > 0) {
    const rows: string[] = [];
    for await (const issue of validation.warnings) rows.push(`\n    ${JSON.stringify(errorRow(issue))}`);
    yield `,\n  "warnings": [${rows.join(',')}\n  ]`;
  }
  yield validation.omitted.length === 0 ? '\n}\n' : `,\n  "omitted": [${await omittedJson(validation)}\n  ]\n}\n`;
}

function where(issue: SourceIssue): string {
  const at = issue.line > 0 ? `${issue.file}:${issue.line}` : issue.file || '(service)';
  const field =
    issue.column !== undefined && issue.attr !== undefined && issue.column !== issue.attr
      ? `${issue.column} (${issue.attr})`
      : (issue.column ?? issue.attr);
  return field === undefined ? at : `${at} ${field}`;
}

/**
 * The readable report: the file-level problems under one heading, in file and line order (a
 * customer of an account not in the accounts file names its account in its message), then the
 * problems grouped by account, then a summary with counts per code.
 */
export async function* textReport(validation: ExportValidation, period?: OpenPeriod): AsyncGenerator<string> {
  let lines: string[] = [];
  let current: string | undefined;
  let index = 0;
  for await (const issue of validation.errors) {
    const group =
      index < validation.fileErrors || issue.externalAccountNumber === '' ? '(export)' : issue.externalAccountNumber;
    index += 1;
    if (group !== current) {
      current = group;
      lines.push(group === '(export)' ? 'Export files:' : `Account ${visibleValue(group)}:`);
    }
    // One line per problem: the file name, the account number and the values quoted are the export's.
    lines.push(visibleValue(`  ${where(issue)}  ${issue.code}  ${issue.message}`));
    if (lines.length >= LINES_PER_CHUNK) {
      yield `${lines.join('\n')}\n`;
      lines = [];
    }
  }
  if (validation.errors.length > 0) lines.push('');
  const warnings = await warningLines(validation);
  const closing = [...warnings, ...(await omittedLines(validation)), ...summaryLines(validation, period)].map(
    visibleValue,
  );
  yield `${[...lines, ...closing].join('\n')}\n`;
}

const SHOWN_WARNINGS = 50;

/** The warnings (docs/export-format.md "Warnings"): the first ones, one per line, and how many more. */
async function warningLines(validation: ExportValidation): Promise<string[]> {
  const count = validation.warnings.length;
  if (count === 0) return [];
  const lines = [`Warnings (the accounts are sent as they are): ${count}`];
  for await (const issue of validation.warnings) {
    if (lines.length > SHOWN_WARNINGS) break;
    lines.push(`  ${where(issue)}  ${issue.code}  ${issue.message}`);
  }
  if (count > SHOWN_WARNINGS) lines.push(`  ... and ${count - SHOWN_WARNINGS} more (all of them: --json)`);
  return [...lines, ''];
}

/** Transactions the service will move into its open statement period (forcing declared): a warning with the count. */
function openPeriodLines(validation: ExportValidation, period: OpenPeriod | undefined): string[] {
  if (period === undefined || validation.beforeOpenPeriod === 0) return [];
  return [
    `Warning: ${validation.beforeOpenPeriod} transaction(s) dated before the open statement period (from ` +
      `${period.start}): force_add_to_current_statement is declared, so the service will move each into the period ` +
      "(its date changed, a description added, a note pinned to its account). History belongs in the accounts' " +
      'ledgers.',
  ];
}

function summaryLines(validation: ExportValidation, period?: OpenPeriod): string[] {
  const { summary, accounts, orphans } = validation;
  const lines = [
    `Read ${summary.files.map((file) => `${file.file} (${file.records})`).join(', ')}` +
      `${summary.configFile ? ` with mapping ${summary.configFile}` : ''}.`,
  ];
  lines.push(
    ...linkLines(summary.files),
    ...notReadLines(summary.notRead),
    ...spellingLines(summary.spellings),
    ...ignoredColumnLines(summary.files),
  );
  if (validation.sorted.length > 0) {
    const files = validation.sorted.map((file) =>
      file.order === 'unsorted' ? `${file.file} (out of order at line ${file.line})` : `${file.file} (${file.reason})`,
    );
    lines.push(`Sorted before reading: ${files.join(', ')}: not in external_account_number order.`);
  }
  if (orphans.accounts > 0) {
    const sample = orphans.numbers.join(', ') + (orphans.accounts > orphans.numbers.length ? ', ...' : '');
    lines.push(
      `${orphans.records} post-import record(s) for ${orphans.accounts} account(s) not in this export ` +
        `(${sample}): allowed; push adds them to accounts imported earlier.`,
    );
  }
  if (validation.duplicateNotes > 0) lines.push(duplicateNotesLine(validation.duplicateNotes));
  lines.push(...openPeriodLines(validation, period));
  lines.push(...nearKeyLines(validation.nearKeys));
  lines.push(...controlTotalLines(validation.controlTotals));
  lines.push(
    `${accounts.total} account(s): ${accounts.valid} valid, ${accounts.invalid} invalid; ` +
      `${validation.errors.length} error(s).`,
  );
  const codes = Object.entries(validation.byCode).sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  for (const [code, count] of codes) lines.push(`  ${String(count).padStart(7)}  ${code}`);
  lines.push(validation.ok ? 'OK: every account is valid.' : 'NOT OK: fix the problems above and run validate again.');
  return lines;
}

/** Errors as CSV for a spreadsheet; it names customers' accounts, so only the owner may read it. */
export async function writeErrorsCsv(file: string, validation: ExportValidation): Promise<void> {
  // Not through a planted link, not over another user's file (output-file.ts): exit 2 saying why.
  const fd = openOutputFile('--errors-csv', file, 'truncate');
  try {
    fchmodSync(fd, 0o600);
    writeSync(fd, stringify([], spreadsheetCsvOptions(CSV_COLUMNS, true)));
    for await (const rows of errorRowBatches(validation))
      writeSync(fd, stringify(rows, spreadsheetCsvOptions(CSV_COLUMNS, false)));
  } finally {
    closeSync(fd);
  }
  await writeOmittedCsv(file, validation);
}

const SHOWN_NEAR_KEYS = 20;

/**
 * Orphan records whose number matches an account of the export but for spaces, leading zeros or case: a warning
 * naming both (they are allowed, but push would hold them back as records of an account that does not exist).
 */
function nearKeyLines(nearKeys: ExportValidation['nearKeys']): string[] {
  if (nearKeys.length === 0) return [];
  const at = (origin: { file: string; line: number }): string => `${origin.file}:${origin.line}`;
  return [
    `Warning: ${nearKeys.length} account number(s) of post-import records not in this export match an account of ` +
      'the export but for spaces, leading zeros or case (a spreadsheet strips leading zeros): correct the numbers ' +
      'in their files if they are the same account.',
    ...nearKeys
      .slice(0, SHOWN_NEAR_KEYS)
      .map(
        (near) =>
          `  ${near.orphan.number} (${at(near.orphan.origin)}) ~ account ${near.account.number} ` +
          `(${at(near.account.origin)})`,
      ),
    ...(nearKeys.length > SHOWN_NEAR_KEYS ? [`  ... and ${nearKeys.length - SHOWN_NEAR_KEYS} more`] : []),
  ];
}

/**
 * The control totals' short form (docs/control-totals.md): each source file's rows read, used and unused, the first
 * unused rows, each kind's records and sums shaped and valid, and every control file count that does not agree.
 * `migrate report` writes them in full beside what was sent and accepted.
 */
function controlTotalLines(totals: ValidatedTotals): string[] {
  const lines = ['Control totals (migrate report adds what was sent and accepted):'];
  for (const file of totals.sources)
    lines.push(
      `  ${file.source} ${file.file}: ${file.rowsRead} read, ${file.rowsUsed} used, ` +
        `${file.rowsRead - file.rowsUsed} unused`,
    );
  if (totals.unused.count > 0)
    lines.push(
      `  ${totals.unused.count} row(s) reached no record: ` +
        `${totals.unused.first.map((row) => `${row.file}:${row.line}`).join(', ')}` +
        `${totals.unused.count > totals.unused.first.length ? ', ...' : ''} (all of them: unused-rows.csv)`,
    );
  const byKind = new Map<string, KindTotal[]>();
  for (const total of totals.kinds) byKind.set(total.kind, [...(byKind.get(total.kind) ?? []), total]);
  for (const [kind, stages] of byKind) {
    if (stages.every((stage) => stage.records === 0)) continue;
    const [shaped, valid] = stages;
    const money = Object.keys(shaped?.money ?? {}).map(
      (field) => `; ${field} ${shaped?.money[field] ?? ''}, ${valid?.money[field] ?? ''}`,
    );
    lines.push(`  ${kind}: ${shaped?.records ?? 0} shaped, ${valid?.records ?? 0} valid${money.join('')}`);
  }
  for (const line of controlMismatchLines(totals.controlCounts)) lines.push(`Warning: ${line}.`);
  return lines;
}

function controlTotalsJson(totals: ValidatedTotals): unknown {
  return {
    sources: totals.sources.map((file) => ({
      source: file.source,
      file: file.file,
      rows_read: file.rowsRead,
      rows_used: file.rowsUsed,
      rows_unused: file.rowsRead - file.rowsUsed,
    })),
    unused_rows: { count: totals.unused.count, first: totals.unused.first },
    kinds: totals.kinds,
    control_counts: totals.controlCounts.map((count) => ({
      ...count,
      agrees: controlMismatchLines([count]).length === 0,
    })),
  };
}
