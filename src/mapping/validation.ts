import PQueue from 'p-queue';
import type { ExportReader, ExportSummary, JoinMode } from './index.js';
import { ExportNotSorted } from './stream-join.js';
import type { ExportAccount, ExportEntry, SourceIssue } from './types.js';

// What `migrate validate` reports, built from an open export (pure apart from reading the
// reader): counts, every error in account order, and counts per code. Errors are kept in memory;
// they grow with the number of problems, not with the size of the export.

export interface ExportValidation {
  ok: boolean;
  accounts: { total: number; valid: number; invalid: number };
  /** File-level problems first, then per account in export order, then post-import records of other accounts. */
  errors: SourceIssue[];
  byCode: Record<string, number>;
  orphans: { accounts: number; records: number; numbers: string[] };
  summary: ExportSummary;
  /** Where a streaming read found the export out of order, so that it was read again through the staging file. */
  unsorted?: { file: string; line: number };
}

/** Extra checks of a locally valid account (validate --remote); resolves with the service's errors, located. */
export type RemoteCheck = (account: ExportAccount) => Promise<SourceIssue[]>;

const ORPHAN_SAMPLE = 20;

export interface ValidateExportOptions {
  remote?: RemoteCheck;
  /** Most remote checks in flight at once (default 4). */
  remoteConcurrency?: number;
  onEntry?: (entry: ExportEntry) => void;
}

/** Opens the export with the given join; the caller closes nothing (validateExportDirectory does). */
export type OpenExportWith = (join: JoinMode) => Promise<ExportReader>;

/**
 * Validates an export in one streaming pass when its files are sorted by external account
 * number, else (found out of order) again through the staging file: the result is the same
 * either way. --remote goes straight to the staged join, so that no account is sent twice.
 */
export async function validateExportDirectory(open: OpenExportWith, options: ValidateExportOptions & { onRestart?: (unsorted: ExportNotSorted) => void } = {}): Promise<ExportValidation> {
  let unsorted: ExportNotSorted | undefined;
  if (!options.remote) {
    const reader = await open('streaming');
    try {
      return await validateExport(reader, options);
    } catch (error) {
      if (!(error instanceof ExportNotSorted)) throw error;
      unsorted = error;
      options.onRestart?.(error);
    } finally {
      await reader.close();
    }
  }
  const reader = await open('staged');
  try {
    const result = await validateExport(reader, options);
    return unsorted ? { ...result, unsorted: { file: unsorted.file, line: unsorted.line } } : result;
  } finally {
    await reader.close();
  }
}

export async function validateExport(reader: ExportReader, options: ValidateExportOptions = {}): Promise<ExportValidation> {
  const result: ExportValidation = {
    ok: true, accounts: { total: 0, valid: 0, invalid: 0 }, errors: [], byCode: {},
    orphans: { accounts: 0, records: 0, numbers: [] }, summary: reader.summary,
  };
  const queue = new PQueue({ concurrency: options.remoteConcurrency ?? 4 });
  // A remote check that throws (authentication, service unreachable) stops the run: exit 3.
  const failure: { error?: unknown } = {};
  for await (const entry of reader.entries()) {
    options.onEntry?.(entry);
    if (entry.kind === 'orphan') {
      const items = [entry.items.notes, entry.items.transactions, entry.items.statements, entry.items.paymentInstructions].flat();
      result.orphans.accounts += 1;
      result.orphans.records += items.length;
      if (result.orphans.numbers.length < ORPHAN_SAMPLE) result.orphans.numbers.push(entry.items.externalAccountNumber);
      result.errors.push(...items.flatMap((item) => item.issues));
      continue;
    }
    result.accounts.total += 1;
    const account = entry.account;
    if (account.issues.length > 0) {
      result.accounts.invalid += 1;
      result.errors.push(...account.issues);
    } else if (options.remote) {
      // Back-pressure: never hold more than a few accounts waiting for the service.
      await queue.onSizeLessThan(queue.concurrency * 2);
      const check = options.remote;
      if (failure.error !== undefined) break;
      queue.add(() => remoteCheck(check, account, result)).catch((error: unknown) => {
        failure.error ??= error;
        queue.clear();
      });
    } else {
      result.accounts.valid += 1;
    }
  }
  await queue.onIdle();
  if (failure.error !== undefined) throw failure.error;
  // A streaming read knows its file issues only at the end; they come first in the report either way.
  result.errors = [...reader.fileIssues, ...result.errors];
  for (const error of result.errors) result.byCode[error.code] = (result.byCode[error.code] ?? 0) + 1;
  result.ok = result.errors.length === 0;
  return result;
}

async function remoteCheck(check: RemoteCheck, account: ExportAccount, result: ExportValidation): Promise<void> {
  const issues = await check(account);
  if (issues.length === 0) {
    result.accounts.valid += 1;
    return;
  }
  result.accounts.invalid += 1;
  result.errors.push(...issues);
}

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
    file: issue.file, line: issue.line, column: issue.column ?? null, attr: issue.attr ?? null,
    external_account_number: issue.externalAccountNumber === '' ? null : issue.externalAccountNumber, code: issue.code, message: issue.message,
  };
}

export function jsonReport(validation: ExportValidation): { ok: boolean; accounts: ExportValidation['accounts']; errors: ErrorRow[] } {
  return { ok: validation.ok, accounts: validation.accounts, errors: validation.errors.map(errorRow) };
}

function where(issue: SourceIssue): string {
  const at = issue.line > 0 ? `${issue.file}:${issue.line}` : issue.file || '(service)';
  const field = issue.column !== undefined && issue.attr !== undefined && issue.column !== issue.attr ? `${issue.column} (${issue.attr})` : (issue.column ?? issue.attr);
  return field === undefined ? at : `${at} ${field}`;
}

/** The readable report: problems grouped by account, then a summary with counts per code. */
export function textReport(validation: ExportValidation): string[] {
  const lines: string[] = [];
  let current: string | undefined;
  for (const issue of validation.errors) {
    const group = issue.externalAccountNumber === '' ? '(export)' : issue.externalAccountNumber;
    if (group !== current) {
      current = group;
      lines.push(group === '(export)' ? 'Export files:' : `Account ${group}:`);
    }
    lines.push(`  ${where(issue)}  ${issue.code}  ${issue.message}`);
  }
  if (lines.length > 0) lines.push('');
  const { summary, accounts, orphans } = validation;
  lines.push(`Read ${summary.files.map((file) => `${file.file} (${file.records})`).join(', ')}${summary.configFile ? ` with mapping ${summary.configFile}` : ''}.`);
  if (summary.ignoredFiles.length > 0) lines.push(`Not export files, not read: ${summary.ignoredFiles.join(', ')}.`);
  if (validation.unsorted) {
    const { file, line } = validation.unsorted;
    lines.push(`Read twice: ${file} is not sorted by external_account_number (line ${line}); an export whose files are all sorted is read in one pass, about twice as fast.`);
  }
  if (orphans.accounts > 0) {
    const sample = orphans.numbers.join(', ') + (orphans.accounts > orphans.numbers.length ? ', ...' : '');
    lines.push(`${orphans.records} post-import record(s) for ${orphans.accounts} account(s) not in this export (${sample}): allowed; push adds them to accounts imported earlier.`);
  }
  lines.push(`${accounts.total} account(s): ${accounts.valid} valid, ${accounts.invalid} invalid; ${validation.errors.length} error(s).`);
  const codes = Object.entries(validation.byCode).sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  for (const [code, count] of codes) lines.push(`  ${String(count).padStart(7)}  ${code}`);
  lines.push(validation.ok ? 'OK: every account is valid.' : 'NOT OK: fix the problems above and run validate again.');
  return lines;
}
