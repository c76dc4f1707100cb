import type { ExportMapping } from '../mapping/mapping-rules.js';
import { InputError } from '../errors.js';
import { readCsvBatches, readJsonArray, readNdjson, type CsvRow, type ExportFile } from '../sources/index.js';
import { ExportCode } from '../mapping/issue-codes.js';
import type { RecordData } from '../mapping/join-groups.js';
import { csvKey, jsonKey, planFile, type FilePlan } from '../mapping/record.js';
import type { IssueSpool } from './issue-spool.js';
import type { SourceIssue } from '../mapping/types.js';

// One export file, record by record (bounded memory): its plan (from the CSV header or the
// mapping rules) and its records keyed by external account number, as read; mapping happens per
// account in the join. Collects the problems that belong to a file rather than to an account.

/** A record of an export file with its external account number, not yet mapped. */
export interface KeyedRecord {
  key: string;
  line: number;
  data: RecordData;
}

export interface OpenedFile {
  plan: FilePlan;
  /**
   * Records in file order, in batches (one await per batch, not per record); those without an
   * external account number are reported in `issues` and skipped.
   */
  records: AsyncGenerator<KeyedRecord[], void, undefined>;
  /** Stops reading (also before `records` was started: returning a generator that never ran would not reach its reader). */
  close(): Promise<void>;
}

const BATCH = 256;

/** Where a file's problems go. */
export type IssueSink = Pick<IssueSpool, 'push'>;

/** Kinds sent inside their account's payload: their account must be in this export's accounts file. */
export const CHILD_KINDS: ReadonlySet<string> = new Set(['customers', 'supply_addresses']);

function unknownColumnIssue(file: string, line: number, column: string, kind: string): SourceIssue {
  return {
    file,
    line,
    column,
    externalAccountNumber: '',
    code: ExportCode.unknownColumn,
    message: `"${column}" is not a documented column of ${kind} files; rename it to a field or list it under mapping.${kind}.ignore in the mapping file (only documented fields may be sent).`,
  };
}

function keyColumn(plan: FilePlan): string {
  return plan.columnOf['external_account_number'] ?? 'external_account_number';
}

function missingKeyIssue(file: ExportFile, plan: FilePlan, line: number): SourceIssue {
  return {
    file: file.file,
    line,
    column: keyColumn(plan),
    externalAccountNumber: '',
    code: ExportCode.missingExternalAccountNumber,
    message: 'The record has no external_account_number; it cannot be joined to an account.',
  };
}

/** A customer or supply address whose account is not in the accounts file (the join refuses it). */
export function notInAccountsIssue(file: ExportFile, plan: FilePlan, line: number, key: string): SourceIssue {
  return {
    file: file.file,
    line,
    column: keyColumn(plan),
    externalAccountNumber: key,
    code: ExportCode.accountNotInAccountsFile,
    message: `account ${key} is not in the accounts file; a ${file.kind === 'customers' ? 'customer' : 'supply address'} is sent inside its account's payload, so the account must be in this export.`,
  };
}

/**
 * Opens one export file: reads a CSV header and compiles the file's plan before any record is
 * handed out. `thread: false`: a CSV file is parsed in this thread (see readCsvBatches).
 */
export async function openExportFile(
  file: ExportFile,
  config: ExportMapping,
  issues: IssueSink,
  onBytes: (bytes: number) => void,
  read: { thread?: boolean } = {},
): Promise<OpenedFile> {
  const mapping = config.mapping[file.kind];
  const options = { file: file.file, encoding: mapping.encoding, onBytes };
  if (file.format === 'csv') {
    const batches = readCsvBatches(file.absolutePath, { ...options, delimiter: mapping.delimiter, ...read });
    try {
      const first = await batches.next();
      const header = first.done ? undefined : first.value[0];
      if (!header)
        throw new InputError(
          file.file,
          1,
          'is empty: a CSV export file starts with a header row naming its columns.',
          'input_empty',
        );
      const plan = planFile(file.kind, file.file, header.cells, config);
      for (const column of plan.unknownColumns)
        issues.push(unknownColumnIssue(file.file, header.line, column, file.kind));
      const records = csvRecords((first.value ?? []).slice(1), batches, file, plan, issues);
      return {
        plan,
        records,
        close: async () => void (await Promise.all([records.return(undefined), batches.return(undefined)])),
      };
    } catch (error) {
      await batches.return(undefined);
      throw error;
    }
  }
  const plan = planFile(file.kind, file.file, [], config);
  const items =
    file.format === 'json' ? readJsonArray(file.absolutePath, options) : readNdjson(file.absolutePath, options);
  const records = jsonRecords(items, file, plan, issues);
  return {
    plan,
    records,
    close: async () => void (await Promise.all([records.return(undefined), items.return(undefined)])),
  };
}

async function* csvRecords(
  afterHeader: CsvRow[],
  batches: AsyncGenerator<CsvRow[]>,
  file: ExportFile,
  plan: FilePlan,
  issues: IssueSink,
): AsyncGenerator<KeyedRecord[], void, undefined> {
  const keyed = (rows: CsvRow[]): KeyedRecord[] => {
    const records: KeyedRecord[] = [];
    for (const row of rows) {
      const key = csvKey(plan, row.cells);
      if (key === undefined) issues.push(missingKeyIssue(file, plan, row.line));
      else records.push({ key, line: row.line, data: row.cells });
    }
    return records;
  };
  try {
    yield keyed(afterHeader);
    for await (const rows of batches) yield keyed(rows);
  } finally {
    await batches.return(undefined);
  }
}

async function* jsonRecords(
  items: ReturnType<typeof readNdjson>,
  file: ExportFile,
  plan: FilePlan,
  issues: IssueSink,
): AsyncGenerator<KeyedRecord[], void, undefined> {
  // JSON keys vary by record: an undocumented key is reported once per file, where it first appears.
  const reported = new Set<string>();
  let batch: KeyedRecord[] = [];
  for await (const item of items) {
    const key = jsonKey(plan, item.object, (column) => {
      if (reported.has(column)) return;
      reported.add(column);
      issues.push(unknownColumnIssue(file.file, item.line, column, file.kind));
    });
    if (key === undefined) issues.push(missingKeyIssue(file, plan, item.line));
    else batch.push({ key, line: item.line, data: item.object });
    if (batch.length >= BATCH) {
      yield batch;
      batch = [];
    }
  }
  if (batch.length > 0) yield batch;
}
