import { chmod, open } from 'node:fs/promises';
import path from 'node:path';
import { stringify } from 'csv-stringify/sync';
import { UsageError } from '../../errors.js';
import type { OmittedIssue } from '../../mapping/types.js';
import type { ExportValidation } from '../../intake/validate-export.js';
import { spreadsheetCsvOptions } from '../../output/spreadsheet-safe.js';

// The values validate found dropped under the mapping file's `on_invalid: omit` (docs/export-format.md "The mapping
// file"): listed in its output and, beside the errors CSV, in a CSV of their own, every one with file, line, field,
// value and why. Dropping a value is never silent.

const SHOWN = 50;

const CSV_COLUMNS = ['file', 'line', 'column', 'attr', 'external_account_number', 'value', 'code', 'message'] as const;

function row(issue: OmittedIssue): Record<(typeof CSV_COLUMNS)[number], string | number | null> {
  return {
    file: issue.file,
    line: issue.line,
    column: issue.column ?? null,
    attr: issue.attr ?? null,
    external_account_number: issue.externalAccountNumber,
    value: issue.value,
    code: issue.code,
    message: issue.message,
  };
}

async function* omittedIssues(validation: ExportValidation): AsyncGenerator<OmittedIssue> {
  for await (const issue of validation.omitted) yield issue as OmittedIssue;
}

/** `errors.csv` -> `errors.omitted.csv`: the omitted values' CSV beside the errors CSV. */
export function omittedCsvPath(errorsCsv: string): string {
  const base = path.basename(errorsCsv).replace(/\.csv$/iu, '');
  return path.join(path.dirname(errorsCsv), `${base}.omitted.csv`);
}

/** The text report's section: the first values dropped, one per line, and where the rest are. */
export async function omittedLines(validation: ExportValidation): Promise<string[]> {
  const count = validation.omitted.length;
  if (count === 0) return [];
  const lines = [`Values omitted (on_invalid: omit), the account sent without them: ${count}`];
  for await (const issue of omittedIssues(validation)) {
    if (lines.length > SHOWN) break;
    const at = `${issue.file}:${issue.line} ${issue.column ?? issue.attr ?? ''}`;
    lines.push(`  ${at} ${JSON.stringify(issue.value)}  ${issue.code}  ${issue.message}`);
  }
  if (count > SHOWN) lines.push(`  ... and ${count - SHOWN} more (all of them: --errors-csv, or --json)`);
  return [...lines, ''];
}

/** `--json`'s `omitted` rows. */
export async function omittedJson(validation: ExportValidation): Promise<string> {
  const rows: string[] = [];
  for await (const issue of omittedIssues(validation)) rows.push(`\n    ${JSON.stringify(row(issue))}`);
  return rows.join(',');
}

/** Writes the omitted values' CSV beside the errors CSV (mode 0600: it names customers' accounts); none if none. */
export async function writeOmittedCsv(errorsCsv: string, validation: ExportValidation): Promise<void> {
  if (validation.omitted.length === 0) return;
  const file = omittedCsvPath(errorsCsv);
  let handle;
  try {
    handle = await open(file, 'w', 0o600);
    await chmod(file, 0o600);
  } catch (error) {
    throw new UsageError(
      `${file} (the omitted values beside --errors-csv): cannot be written ` +
        `(${(error as NodeJS.ErrnoException).code ?? String(error)}).`,
      'errors_csv_unwritable',
      error,
    );
  }
  try {
    await handle.write(stringify([], spreadsheetCsvOptions(CSV_COLUMNS, true)));
    const batch: Array<ReturnType<typeof row>> = [];
    for await (const issue of omittedIssues(validation)) {
      batch.push(row(issue));
      if (batch.length >= 1000)
        await handle.write(stringify(batch.splice(0), spreadsheetCsvOptions(CSV_COLUMNS, false)));
    }
    if (batch.length > 0) await handle.write(stringify(batch, spreadsheetCsvOptions(CSV_COLUMNS, false)));
  } finally {
    await handle.close();
  }
}
