import type { MigrateConfig } from '../config/index.js';
import { findExportFiles, type FileFormat, type FileKind } from '../sources/index.js';
import { FILE_KINDS } from '../sources/kinds.js';
import { ExportCode } from './issue-codes.js';
import { joinAccount, joinOrphan, type JoinContext, type StagedRecord } from './join.js';
import { readExportFile } from './read-export.js';
import { StagingStore, type StagedRow } from './stage.js';
import type { ExportEntry, SourceIssue } from './types.js';

export { ExportCode } from './issue-codes.js';
export { columnOfPath, locateIssue, originsOfItems, type Locatable } from './locate.js';
export type * from './types.js';

export interface ExportSummary {
  files: Array<{ file: string; kind: FileKind; format: FileFormat; records: number }>;
  /** Records staged per kind (records without an external account number are not counted). */
  records: Record<FileKind, number>;
  /** Accounts in the accounts file (distinct external account numbers). */
  accounts: number;
  /** Accounts that only have post-import records here (allowed: a later export may add to earlier imports). */
  orphanAccounts: number;
  /** Files in the directory that are not export files (not read). */
  ignoredFiles: string[];
  configFile: string | undefined;
}

export interface ExportReader {
  /** Accounts in the order of the accounts file, then post-import records of accounts not in it. */
  entries(): AsyncIterable<ExportEntry>;
  summary: ExportSummary;
  /** Export-level problems not tied to an account of this export (unknown columns, records without an account, ...). */
  fileIssues: SourceIssue[];
  close(): Promise<void>;
}

export type ReadPhaseProgress = { phase: 'read'; file: string; bytes: number; totalBytes: number };

export interface OpenExportOptions {
  /** Where the staging file goes (default: the OS temp dir). */
  scratchDir?: string;
  /** `YYYY-MM-DD` for "not in the future" rules (default: today, UTC). */
  today?: string;
  onProgress?: (progress: ReadPhaseProgress) => void;
}

/**
 * Reads, maps and stages a whole export directory, then hands out its accounts one by one,
 * joined and validated. Throws UsageError/InputError when the directory or a file cannot be read at all.
 */
export async function openExport(dir: string, config: MigrateConfig, options: OpenExportOptions = {}): Promise<ExportReader> {
  const { files, ignored } = await findExportFiles(dir);
  const store = new StagingStore(options.scratchDir);
  try {
    const fileIssues: SourceIssue[] = [];
    const records = Object.fromEntries(FILE_KINDS.map((kind) => [kind, 0])) as Record<FileKind, number>;
    const columnOf: Record<string, Record<string, string>> = {};
    const summaryFiles: ExportSummary['files'] = [];
    const totalBytes = files.reduce((sum, file) => sum + file.bytes, 0);
    let doneBytes = 0;
    for (const [index, file] of files.entries()) {
      const onBytes = (bytes: number): void => options.onProgress?.({ phase: 'read', file: file.file, bytes: doneBytes + bytes, totalBytes });
      const result = await readExportFile(store, index, file, config, fileIssues, onBytes);
      doneBytes += file.bytes;
      records[file.kind] += result.records;
      columnOf[file.file] = result.columnOf;
      summaryFiles.push({ file: file.file, kind: file.kind, format: file.format, records: result.records });
    }
    store.finishLoading();
    const fileNames = files.map((file) => file.file);
    fileIssues.push(...unattachedIssues(store, fileNames, columnOf));
    const context: JoinContext = { today: options.today ?? new Date().toISOString().slice(0, 10), columnOf, importSupplier: config.importSupplier };
    const summary: ExportSummary = { files: summaryFiles, records, accounts: store.accountCount(), orphanAccounts: store.orphanCount(), ignoredFiles: ignored, configFile: config.configFile };
    return { summary, fileIssues, entries: () => entries(store, fileNames, context), close: async () => store.close() };
  } catch (error) {
    store.close();
    throw error;
  }
}

function staged(rows: StagedRow[], fileNames: string[]): StagedRecord[] {
  return rows.map((row) => ({ file: fileNames[row.fileIndex] ?? '?', record: row.record }));
}

async function* entries(store: StagingStore, fileNames: string[], context: JoinContext): AsyncGenerator<ExportEntry> {
  for (const number of store.numbers('accounts')) {
    yield { kind: 'account', account: joinAccount(number, staged(store.recordsOf(number), fileNames), context) };
  }
  for (const number of store.numbers('orphans')) {
    yield { kind: 'orphan', items: joinOrphan(number, staged(store.recordsOf(number), fileNames), context) };
  }
}

/** A customer or supply address needs its account in the accounts file: it is part of the account payload, not a post-import call. */
function unattachedIssues(store: StagingStore, fileNames: string[], columnOf: Record<string, Record<string, string>>): SourceIssue[] {
  const issues: SourceIssue[] = [];
  for (const row of store.unattached()) {
    const file = fileNames[row.fileIndex] ?? '?';
    issues.push({
      file, line: row.record.line, column: columnOf[file]?.['external_account_number'] ?? 'external_account_number', externalAccountNumber: row.externalAccountNumber,
      code: ExportCode.accountNotInAccountsFile,
      message: `account ${row.externalAccountNumber} is not in the accounts file; a ${row.record.kind === 'customers' ? 'customer' : 'supply address'} is sent inside its account's payload, so the account must be in this export.`,
    });
  }
  return issues;
}
