import { InputError } from '../errors.js';
import { unaddressableReason } from '../mapping/account-number.js';
import { ExportCode } from '../mapping/issue-codes.js';
import type { FilePlan } from '../mapping/record.js';
import type { SourceIssue } from '../mapping/types.js';
import type { CsvRow, ExportFile } from '../sources/index.js';
import type { IssueSpool } from './issue-spool.js';

// The checks of a record's external account number as a file is read, before any record is joined: missing, a
// number a URL path cannot carry, a header row repeated inside the file. A record that fails one is named at its line
// and never joined.

/** Where a file's problems go. */
export type IssueSink = Pick<IssueSpool, 'push'>;

/**
 * Records whose external account number was not in Unicode NFC form as written (an NFD spelling: "u" and a combining
 * diaeresis for "ü"): read as the NFC form, one account with the records spelling it so (sources/key-order.ts). Said
 * by validate and push, with the first lines.
 */
export interface UnicodeSpellings {
  lines: number;
  sample: Array<{ file: string; line: number; written: string; read: string }>;
}

const SPELLINGS_SHOWN = 10;

/** Notes a record whose key cell (`written`, trimmed) differs from the key it is read under. */
export function noteSpelling(
  spellings: UnicodeSpellings,
  file: ExportFile,
  line: number,
  written: unknown,
  key: string,
): void {
  if (typeof written !== 'string') return;
  const trimmed = written.trim();
  if (trimmed === key) return;
  spellings.lines += 1;
  if (spellings.sample.length < SPELLINGS_SHOWN)
    spellings.sample.push({ file: file.file, line, written: trimmed, read: key });
}

export function keyColumn(plan: FilePlan): string {
  return plan.columnOf['external_account_number'] ?? 'external_account_number';
}

export function missingKeyIssue(file: ExportFile, plan: FilePlan, line: number): SourceIssue {
  return {
    file: file.file,
    line,
    column: keyColumn(plan),
    externalAccountNumber: '',
    code: ExportCode.missingExternalAccountNumber,
    message: 'The record has no external_account_number; it cannot be joined to an account.',
  };
}

export /**
 * Whether a record's external account number can be a segment of the service's URL paths
 * (mapping/account-number.ts); if not, its problem goes to `issues` and the record is never joined, so no account of
 * that number is created and no record of it is sent.
 */
function addressable(file: ExportFile, plan: FilePlan, line: number, key: string, issues: IssueSink): boolean {
  const reason = unaddressableReason(key);
  if (reason === undefined) return true;
  issues.push({
    file: file.file,
    line,
    column: keyColumn(plan),
    externalAccountNumber: '',
    code: ExportCode.externalAccountNumberNotAddressable,
    message:
      `external_account_number ${reason}. The service finds an account by its number in its URLs: an account of ` +
      'this number could be created but never found again, nor its records added. Give it a number without them.',
  });
  return false;
}

export /**
 * A row whose key cell holds the key column's own name is a header row again (two exports joined into one file): the
 * same header is named at its line and skipped; a header with other columns would have the rows after it read under
 * the first header's columns, so the file cannot be read on (exit 2).
 */
function repeatedHeader(file: ExportFile, plan: FilePlan, header: string[], row: CsvRow, issues: IssueSink): boolean {
  const keyIndex = plan.keyIndex;
  if (keyIndex === undefined || row.cells[keyIndex] !== header[keyIndex]) return false;
  const same = row.cells.length === header.length && row.cells.every((cell, index) => cell === header[index]);
  if (!same)
    throw new InputError(
      file.file,
      row.line,
      'is a second header row, with other columns than the header on line 1 (two exports joined into one file?): ' +
        "the rows after it would be read under the first header's columns. Split the file at this line.",
      'input_repeated_header',
    );
  issues.push({
    file: file.file,
    line: row.line,
    column: keyColumn(plan),
    externalAccountNumber: '',
    code: ExportCode.repeatedHeader,
    message:
      'is the header row again (two exports joined into one file?); it is not a record and is skipped, the rows ' +
      'after it are read as rows of this file. Remove it.',
  });
  return true;
}
