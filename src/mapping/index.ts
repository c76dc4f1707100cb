import type { MigrateConfig } from '../config/index.js';
import { findExportFiles, type FileFormat, type FileKind } from '../sources/index.js';
import { FILE_KINDS } from '../sources/kinds.js';
import { joinGroup, type JoinSetup } from './join-groups.js';
import type { JoinContext } from './join.js';
import { readExportFile } from './read-export.js';
import type { FilePlan } from './record.js';
import { StagingStore } from './stage.js';
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
  /** Accounts, and post-import records of accounts not in the accounts file, in the order of their external account numbers. */
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
 * Reads and stages a whole export directory, then hands out its accounts one by one, mapped,
 * joined and validated. Throws UsageError/InputError when the directory or a file cannot be read at all.
 */
export async function openExport(dir: string, config: MigrateConfig, options: OpenExportOptions = {}): Promise<ExportReader> {
  const { files, ignored } = await findExportFiles(dir);
  const store = new StagingStore(options.scratchDir);
  try {
    const fileIssues: SourceIssue[] = [];
    const records = Object.fromEntries(FILE_KINDS.map((kind) => [kind, 0])) as Record<FileKind, number>;
    const plans: FilePlan[] = [];
    const summaryFiles: ExportSummary['files'] = [];
    const totalBytes = files.reduce((sum, file) => sum + file.bytes, 0);
    let doneBytes = 0;
    for (const [index, file] of files.entries()) {
      const onBytes = (bytes: number): void => options.onProgress?.({ phase: 'read', file: file.file, bytes: doneBytes + bytes, totalBytes });
      const result = await readExportFile(store, index, file, config, fileIssues, onBytes);
      doneBytes += file.bytes;
      records[file.kind] += result.records;
      plans.push(result.plan);
      summaryFiles.push({ file: file.file, kind: file.kind, format: file.format, records: result.records });
    }
    store.flush();
    const columnOf = Object.fromEntries(files.map((file, index) => [file.file, plans[index]?.columnOf ?? {}]));
    const context: JoinContext = { today: options.today ?? new Date().toISOString().slice(0, 10), columnOf, importSupplier: config.importSupplier };
    const summary: ExportSummary = { files: summaryFiles, records, accounts: store.accountCount(), orphanAccounts: store.orphanCount(), ignoredFiles: ignored, configFile: config.configFile };
    const fileNames = files.map((file) => file.file);
    const setup: JoinSetup = { plans, fileNames, context };
    return { summary, fileIssues, entries: () => entries(store, setup), close: async () => store.close() };
  } catch (error) {
    store.close();
    throw error;
  }
}

/** Entries in the order of their external account numbers: one sorted pass over the staged records. */
async function* entries(store: StagingStore, setup: JoinSetup): AsyncGenerator<ExportEntry> {
  for (const group of store.groups()) yield joinGroup(group, setup);
}
