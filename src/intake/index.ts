import { fileGlobsOf, type ExportMapping } from '../mapping/mapping-rules.js';
import {
  findExportFiles,
  type ExportFile,
  type ExportFiles,
  type FileFormat,
  type FileKind,
  type NotRead,
} from '../sources/index.js';
import { FILE_KINDS } from '../sources/kinds.js';
import { joinGroup, type JoinSetup } from '../mapping/join-groups.js';
import type { JoinContext } from '../mapping/sourced-record.js';
import { concatIssues, IssueSpool, type IssueList } from './issue-spool.js';
import {
  CHILD_KINDS,
  notInAccountsIssue,
  openExportFile,
  type OpenedFile,
  type UnicodeSpellings,
} from './read-export.js';
import { eventLoopTurns } from './event-loop.js';
import { sortedFile } from './sort-file.js';
import type { RowIndex } from './row-places.js';
import type { RowPlaces } from '../sources/placed-rows.js';
import { ScratchJoinStore } from './scratch-join.js';
import { exportFileUse } from './source-use.js';
import type { SourceUse } from '../shape/index.js';
import { streamEntries, type StreamCounts } from './stream-join.js';
import type { ExportEntry } from '../mapping/types.js';

export { locateIssue, originsOfItems } from '../mapping/locate.js';
export { concatIssues, IssueSpool, type IssueList } from './issue-spool.js';
export { compareKeys } from '../sources/key-order.js';
export type * from '../mapping/types.js';
export type { UnicodeSpellings } from './read-export.js';

export interface ExportSummary {
  files: Array<{
    file: string;
    kind: FileKind;
    format: FileFormat;
    records: number;
    linkTarget?: string;
    /** Columns left out under the kind's `"unmapped": "ignore"` (JSON keys as they are met). */
    ignoredColumns?: string[];
  }>;
  /** Records joined per kind (records without an external account number are not counted). */
  records: Record<FileKind, number>;
  /** Accounts in the accounts file (distinct external account numbers). */
  accounts: number;
  /** Accounts that only have post-import records here (allowed: a later export may add to earlier imports). */
  orphanAccounts: number;
  /** Entries of the directory that are not export files (not read), each with its reason. */
  notRead: NotRead[];
  configFile: string | undefined;
  /** Records whose account number was written in another Unicode form than NFC (read as NFC: one account). */
  spellings: UnicodeSpellings;
}

/**
 * `scratch`: every record goes to a scratch SQLite file first, then comes back grouped (any record
 * order; summary and file issues are complete when openExport returns). `streaming`: a merge
 * join over files sorted by external account number, in one pass (summary and file issues are
 * complete once entries() has been read to the end); entries() throws ExportNotSorted at the
 * first record out of order, except in the files named in `indexes`, read by their rows' places
 * in order (sources/placed-rows.ts), and those named in `sortFiles`, which are sorted first
 * (sort-file.ts: an external merge sort) while the others stream beside them.
 */
export type JoinMode = 'scratch' | 'streaming';

export interface ExportReader {
  /**
   * Accounts, and post-import records of accounts not in the accounts file, in the order of their external account
   * numbers.
   */
  entries(): AsyncIterable<ExportEntry>;
  readonly summary: ExportSummary;
  /**
   * Export-level problems not tied to an account of this export (unknown columns, records without an account, ...), in
   * file order; read them before close().
   */
  readonly fileIssues: IssueList;
  /**
   * Once entries() was read to its end, before close(): each source file's rows read and those that reached a record,
   * and the rows that reached none (docs/control-totals.md).
   */
  sourceUse(): Promise<SourceUse>;
  close(): Promise<void>;
}

export type ReadPhaseProgress = { phase: 'read'; file: string; bytes: number; totalBytes: number };

export interface OpenExportOptions {
  /** Default `scratch`. */
  join?: JoinMode;
  /** Streaming join: files (as named in the export) to sort before joining, because they are not in order. */
  sortFiles?: ReadonlySet<string>;
  /**
   * Streaming join: files (as named in the export) read by their rows' places, in order (sources/placed-rows.ts); each
   * index is closed with the reader, or when opening fails.
   */
  indexes?: ReadonlyMap<string, RowIndex>;
  /** Where the scratch join's and the sort's files go (default: the OS temp dir). */
  scratchDir?: string;
  /** `YYYY-MM-DD` for "not in the future" rules (default: today, UTC). */
  today?: string;
  onProgress?: (progress: ReadPhaseProgress) => void;
  /** Stops the scratch join's first pass (it reads every file before openExport returns): openExport rejects. */
  signal?: AbortSignal;
  /** The export's files as the caller found them already (sources/files.ts): the directory is not listed again. */
  found?: ExportFiles;
}

/**
 * Opens an export directory and hands out its accounts one by one, mapped, joined and validated.
 * Throws UsageError/InputError when the directory or a file cannot be read at all.
 */
export async function openExport(
  dir: string,
  config: ExportMapping,
  options: OpenExportOptions = {},
): Promise<ExportReader> {
  const opening = await startOpening(dir, config, options);
  return (options.join ?? 'scratch') === 'scratch'
    ? openScratchJoin(opening, options)
    : openStreaming(opening, options);
}

/** What both joins need of an export being opened: its files, their issue spools and summary, a file opener. */
interface Opening {
  files: ExportFile[];
  issues: IssueSpool[];
  fileIssues: IssueList;
  summary: ExportSummary;
  closeIssues: () => void;
  open: (index: number, read?: { thread: boolean; places?: RowPlaces }) => Promise<OpenedFile>;
  /** The join's setup once every file is open (their header plans). */
  setupOf: (opened: OpenedFile[]) => JoinSetup;
}

async function startOpening(dir: string, config: ExportMapping, options: OpenExportOptions): Promise<Opening> {
  const { files, notRead } = options.found ?? (await findExportFiles(dir, fileGlobsOf(config)));
  const issues = files.map(() => new IssueSpool(options.scratchDir, { byLine: true }));
  const summary: ExportSummary = {
    files: files.map((file) => ({
      file: file.file,
      kind: file.kind,
      format: file.format,
      records: 0,
      ...(file.linkTarget === undefined ? {} : { linkTarget: file.linkTarget }),
    })),
    records: Object.fromEntries(FILE_KINDS.map((kind) => [kind, 0])) as Record<FileKind, number>,
    accounts: 0,
    orphanAccounts: 0,
    notRead,
    configFile: config.configFile,
    spellings: { lines: 0, sample: [] },
  };
  const progress = byteProgress(files, options.onProgress);
  const context: JoinContext = {
    today: options.today ?? new Date().toISOString().slice(0, 10),
    columnOf: {},
    importSupplier: config.importSupplier,
    multiplePaymentInstructions: config.multiplePaymentInstructions,
    tenantFields: config.tenantFields,
    openPeriod:
      config.openPeriodStart === undefined
        ? undefined
        : { start: config.openPeriodStart, force: config.forceAddToCurrentStatement },
    contract: config.contract,
    dialect: config.dialect,
  };
  return {
    files,
    issues,
    fileIssues: concatIssues(issues),
    summary,
    closeIssues: () => issues.forEach((spool) => spool.close()),
    open: async (index, read) => {
      const opened = await openExportFile(
        files[index] as ExportFile,
        config,
        issues[index] as IssueSpool,
        progress(index),
        { ...read, spellings: summary.spellings },
      );
      const entry = summary.files[index];
      if (entry !== undefined && opened.plan.mapping.unmapped === 'ignore')
        entry.ignoredColumns = opened.plan.unmappedIgnored;
      return opened;
    },
    setupOf: (opened) => {
      context.columnOf = Object.fromEntries(
        files.map((file, index) => [file.file, opened[index]?.plan.columnOf ?? {}]),
      );
      return { plans: opened.map((file) => file.plan), fileNames: files.map((file) => file.file), context };
    },
  };
}

/** The scratch join: every file read into the scratch store before this returns. */
async function openScratchJoin(opening: Opening, options: OpenExportOptions): Promise<ExportReader> {
  const { files, issues, summary, closeIssues } = opening;
  const { store, opened } = await joinInScratch(files, opening.open, issues, summary, options).catch(
    (error: unknown) => {
      closeIssues();
      throw error;
    },
  );
  const setup = opening.setupOf(opened);
  return {
    summary,
    fileIssues: opening.fileIssues,
    entries: () => scratchJoinEntries(store, setup),
    sourceUse: () => Promise.resolve(exportFileUse(summary.files, issues)),
    close: () => {
      store.close();
      closeIssues();
      return Promise.resolve();
    },
  };
}

/** The streaming join: every file opened at once, those named in `sortFiles` sorted first. */
async function openStreaming(opening: Opening, options: OpenExportOptions): Promise<ExportReader> {
  const { files, issues, summary, closeIssues } = opening;
  const toSort = (index: number): boolean => options.sortFiles?.has(files[index]?.file ?? '') === true;
  const indexOf = (index: number): RowIndex | undefined => options.indexes?.get(files[index]?.file ?? '');
  const closeIndexes = (): void => options.indexes?.forEach((index) => index.close());
  const parsedHere = inThisThread(files, toSort);
  // Every file at once: each is open once its header is read, not after the files before it.
  const settled = await Promise.allSettled(
    files.map((_, index) => {
      // The places alone (plain data: they go to the CSV thread); the index is closed with the reader.
      const rowIndex = indexOf(index);
      const places = rowIndex ? { places: { fd: rowIndex.fd, runs: rowIndex.runs, rows: rowIndex.rows } } : {};
      return opening.open(index, { thread: index !== parsedHere, ...places });
    }),
  );
  const failed = settled.find((result) => result.status === 'rejected');
  if (failed !== undefined) {
    await Promise.all(settled.flatMap((result) => (result.status === 'fulfilled' ? [result.value.close()] : [])));
    closeIndexes();
    closeIssues();
    throw failed.reason;
  }
  // A file to sort is read to its end at once, beside the others (sort-file.ts).
  const opened = settled.map((result, index) => {
    const file = (result as PromiseFulfilledResult<OpenedFile>).value;
    return toSort(index) ? sortedFile(file, options.scratchDir) : file;
  });
  const setup = opening.setupOf(opened);
  const counts: StreamCounts = { records: files.map(() => 0), accounts: 0, orphanAccounts: 0 };
  let started = false;
  const entries = async function* (): AsyncGenerator<ExportEntry> {
    if (started) throw new Error('a streaming export can be read once');
    started = true;
    yield* streamEntries(files, opened, setup, issues, counts);
    countInto(summary, counts.records, counts.accounts, counts.orphanAccounts);
  };
  return {
    summary,
    entries,
    fileIssues: opening.fileIssues,
    sourceUse: () => Promise.resolve(exportFileUse(summary.files, issues)),
    close: async () => {
      await Promise.all(opened.map((file) => file.close()));
      closeIndexes();
      closeIssues();
    },
  };
}

/**
 * Files to sort are all read before the first account is joined. With two or more, the largest
 * is parsed in this thread, the rest on the parsing thread: both cores read (else this thread
 * would mostly wait). Returns its index, or -1.
 */
function inThisThread(files: ExportFile[], toSort: (index: number) => boolean): number {
  const sorting = files.map((file, index) => ({ file, index })).filter(({ index }) => toSort(index));
  if (sorting.length < 2) return -1;
  return sorting.reduce((largest, next) => (next.file.bytes > largest.file.bytes ? next : largest)).index;
}

function countInto(summary: ExportSummary, records: number[], accounts: number, orphanAccounts: number): void {
  records.forEach((count, index) => {
    const file = summary.files[index];
    if (!file) return;
    file.records = count;
    summary.records[file.kind] += count;
  });
  summary.accounts = accounts;
  summary.orphanAccounts = orphanAccounts;
}

/** Progress in bytes over all files, whichever order they are read in. */
function byteProgress(
  files: ExportFile[],
  onProgress: OpenExportOptions['onProgress'],
): (index: number) => (bytes: number) => void {
  const done = files.map(() => 0);
  const totalBytes = files.reduce((sum, file) => sum + file.bytes, 0);
  return (index) => (bytes) => {
    done[index] = bytes;
    onProgress?.({
      phase: 'read',
      file: files[index]?.file ?? '',
      bytes: done.reduce((sum, value) => sum + value, 0),
      totalBytes,
    });
  };
}

/** The scratch join's first pass: every file, one after the other, into the scratch store. */
async function joinInScratch(
  files: ExportFile[],
  open: (index: number) => Promise<OpenedFile>,
  issues: IssueSpool[],
  summary: ExportSummary,
  { scratchDir, signal }: Pick<OpenExportOptions, 'scratchDir' | 'signal'>,
): Promise<{ store: ScratchJoinStore; opened: OpenedFile[] }> {
  const store = new ScratchJoinStore(scratchDir);
  const opened: OpenedFile[] = [];
  const records = files.map(() => 0);
  try {
    for (const [fileIndex, file] of files.entries()) {
      const current = await open(fileIndex);
      opened.push(current);
      for await (const batch of current.records) {
        signal?.throwIfAborted();
        for (const { key, line, data } of batch) {
          // Accounts are read first, so a customer or supply address can be checked as it is read.
          if (CHILD_KINDS.has(file.kind) && !store.hasAccount(key)) {
            issues[fileIndex]?.push(notInAccountsIssue(file, current.plan, line, key));
            continue;
          }
          store.add(key, { kind: file.kind, fileIndex, line, data });
          records[fileIndex] = (records[fileIndex] ?? 0) + 1;
        }
      }
    }
    store.flush();
    countInto(summary, records, store.accountCount(), store.orphanCount());
    return { store, opened };
  } catch (error) {
    store.close();
    throw error;
  }
}

/** Entries in the order of their external account numbers: one sorted pass over the scratch file's records. */
async function* scratchJoinEntries(store: ScratchJoinStore, setup: JoinSetup): AsyncGenerator<ExportEntry> {
  const turn = eventLoopTurns();
  for (const group of store.groups()) {
    yield joinGroup(group, setup);
    const turning = turn();
    if (turning) await turning;
  }
}
