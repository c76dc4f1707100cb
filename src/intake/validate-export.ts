import PQueue from 'p-queue';
import type { ExportReader, ExportSummary, JoinMode } from './index.js';
import { concatIssues, IssueSpool, type IssueList } from './issue-spool.js';
import { nextJoin } from './export-in-order.js';
import { ExportNotSorted } from './stream-join.js';
import type { ExportAccount, ExportEntry, SourceIssue } from '../mapping/types.js';

// What `migrate validate` reports, built from an export: counts, every error in account order,
// and counts per code. Errors are spooled (issue-spool.ts): memory stays flat however many there
// are; the result's close() frees them.

export interface ExportValidation {
  ok: boolean;
  accounts: { total: number; valid: number; invalid: number };
  /** File-level problems first, then per account in export order (post-import records of other accounts among them). */
  errors: IssueList;
  /**
   * How many of `errors` are file-level problems (the first ones): rows out of place, unknown columns, records without
   * an account.
   */
  fileErrors: number;
  byCode: Record<string, number>;
  orphans: { accounts: number; records: number; numbers: string[] };
  summary: ExportSummary;
  /**
   * Where a streaming read found the export out of order, so that it was read again: `sorted`
   * names the files the second read sorted on disk (absent: it went through the staging file).
   */
  unsorted?: { file: string; line: number; sorted?: string[] };
  /** Frees the spooled errors (after the reports are written). */
  close(): void;
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

/** Opens the export with the given join, sorting `sortFiles` first (validateExportDirectory closes it). */
export type OpenExportWith = (join: JoinMode, sortFiles?: ReadonlySet<string>) => Promise<ExportReader>;

/**
 * Validates an export in one streaming pass when its files are sorted by external account
 * number; else (found out of order) reads it again with the files found out of order sorted on
 * disk and the others streaming beside them (once more if another file turns out unsorted later
 * on). The result is the same either way. --remote goes straight to the staged join, so that no
 * account is sent twice.
 */
export async function validateExportDirectory(
  open: OpenExportWith,
  options: ValidateExportOptions & { onRestart?: (unsorted: ExportNotSorted) => void } = {},
): Promise<ExportValidation> {
  let unsorted: ExportNotSorted | undefined;
  const sortFiles = new Set<string>();
  while (!options.remote) {
    const reader = await open('streaming', sortFiles);
    try {
      const result = await validateExport(reader, options);
      return unsorted
        ? { ...result, unsorted: { file: unsorted.file, line: unsorted.line, sorted: [...sortFiles] } }
        : result;
    } catch (error) {
      if (!(error instanceof ExportNotSorted)) throw error;
      unsorted ??= error;
      options.onRestart?.(error);
      // Every file it names is sorted already (a reader that cannot sort): the staged join reads any order.
      if (nextJoin(sortFiles, error) === 'staged') break;
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

export async function validateExport(
  reader: ExportReader,
  options: ValidateExportOptions = {},
): Promise<ExportValidation> {
  const accountErrors = new IssueSpool();
  const fileErrors = new IssueSpool();
  const errors = concatIssues([fileErrors, accountErrors]);
  const result: ExportValidation = {
    ok: true,
    accounts: { total: 0, valid: 0, invalid: 0 },
    errors,
    fileErrors: 0,
    byCode: {},
    orphans: { accounts: 0, records: 0, numbers: [] },
    summary: reader.summary,
    close: () => {
      fileErrors.close();
      accountErrors.close();
    },
  };
  try {
    await readEntries(reader, options, result, accountErrors);
    // A streaming read knows its file issues only at the end; they come first in the report either way.
    for await (const issue of reader.fileIssues) fileErrors.push(issue);
  } catch (error) {
    result.close();
    throw error;
  }
  result.fileErrors = fileErrors.length;
  result.byCode = errors.byCode;
  result.ok = errors.length === 0;
  return result;
}

async function readEntries(
  reader: ExportReader,
  options: ValidateExportOptions,
  result: ExportValidation,
  errors: IssueSpool,
): Promise<void> {
  const queue = new PQueue({ concurrency: options.remoteConcurrency ?? 4 });
  // A remote check that throws (authentication, service unreachable) stops the run: exit 3.
  const failure: { error?: unknown } = {};
  const pushAll = (issues: SourceIssue[]): void => issues.forEach((issue) => errors.push(issue));
  for await (const entry of reader.entries()) {
    options.onEntry?.(entry);
    if (entry.kind === 'orphan') {
      const items = [
        entry.items.notes,
        entry.items.transactions,
        entry.items.statements,
        entry.items.paymentInstructions,
      ].flat();
      result.orphans.accounts += 1;
      result.orphans.records += items.length;
      if (result.orphans.numbers.length < ORPHAN_SAMPLE) result.orphans.numbers.push(entry.items.externalAccountNumber);
      for (const item of items) pushAll(item.issues);
      continue;
    }
    result.accounts.total += 1;
    const account = entry.account;
    if (account.issues.length > 0) {
      result.accounts.invalid += 1;
      pushAll(account.issues);
    } else if (options.remote) {
      // Back-pressure: never hold more than a few accounts waiting for the service.
      await queue.onSizeLessThan(queue.concurrency * 2);
      const check = options.remote;
      if (failure.error !== undefined) break;
      queue
        .add(async () => {
          const issues = await check(account);
          if (issues.length === 0) result.accounts.valid += 1;
          else {
            result.accounts.invalid += 1;
            pushAll(issues);
          }
        })
        .catch((error: unknown) => {
          failure.error ??= error;
          queue.clear();
        });
    } else {
      result.accounts.valid += 1;
    }
  }
  await queue.onIdle();
  if (failure.error !== undefined) throw failure.error as Error;
}
