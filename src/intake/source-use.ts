import type { UnusedRow } from '../ledger/index.js';
import { ExportCode } from '../mapping/issue-codes.js';
import type { DroppedRow, SourceUse } from '../shape/index.js';
import type { IssueList } from './issue-spool.js';

// Which rows of an export reached a record (docs/control-totals.md). A row that did not is always named by an issue
// of its file (no account number, one no URL can carry, a customer of an account not in the export, the header
// again): those issues, spooled to disk as the files are read, are the rows that reached none. An export in the tool's
// own layout is its own sources: each file is one, its rows read are its records and those rows.

/** The codes of a row that became no record. */
const NO_RECORD: ReadonlySet<string> = new Set([
  ExportCode.missingExternalAccountNumber,
  ExportCode.externalAccountNumberNotAddressable,
  ExportCode.accountNotInAccountsFile,
  ExportCode.repeatedHeader,
]);

const BATCH = 1000;

const noRecordCount = (issues: IssueList): number =>
  [...NO_RECORD].reduce((sum, code) => sum + (issues.byCode[code] ?? 0), 0);

/** The rows of a file's issues that became no record, each with the kind of the file it was read from. */
export async function* droppedRows(
  files: ReadonlyArray<{ kind: string }>,
  issues: readonly IssueList[],
): AsyncGenerator<DroppedRow> {
  for (const [index, list] of issues.entries()) {
    if (noRecordCount(list) === 0) continue;
    const kind = files[index]?.kind ?? '';
    for await (const issue of list) if (NO_RECORD.has(issue.code)) yield { kind, file: issue.file, line: issue.line };
  }
}

/** An export in the tool's own layout, once read to its end: each file's rows, records and rows without one. */
export function exportFileUse(
  files: ReadonlyArray<{ file: string; kind: string; records: number }>,
  issues: readonly IssueList[],
): SourceUse {
  return {
    files: files.map((file, index) => {
      const list = issues[index];
      const unused = list === undefined ? 0 : noRecordCount(list);
      return { source: file.kind, file: file.file, rowsRead: file.records + unused, rowsUsed: file.records };
    }),
    controlCounts: [],
    unused: async function* () {
      let batch: UnusedRow[] = [];
      for await (const row of droppedRows(files, issues)) {
        batch.push({ source: row.kind, file: row.file, line: row.line });
        if (batch.length < BATCH) continue;
        yield batch;
        batch = [];
      }
      if (batch.length > 0) yield batch;
    },
  };
}
