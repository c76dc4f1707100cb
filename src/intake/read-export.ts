import type { ExportMapping } from '../mapping/mapping-rules.js';
import { InputError } from '../errors.js';
import { readCsvBatches, readJsonArray, readNdjson, type CsvRow, type ExportFile } from '../sources/index.js';
import { ExportCode } from '../mapping/issue-codes.js';
import { changedWhileRead, stampOf, watchedRecords } from './file-stamp.js';
import type { RecordData } from '../mapping/join-groups.js';
import { csvKey, ignoresUnmapped, jsonKey, planFile, type FilePlan } from '../mapping/record.js';
import type { RowPlaces } from '../sources/placed-rows.js';
import type { SourceIssue } from '../mapping/types.js';
import {
  addressable,
  keyColumn,
  missingKeyIssue,
  noteSpelling,
  repeatedHeader,
  type IssueSink,
  type UnicodeSpellings,
} from './record-key.js';

export type { IssueSink, UnicodeSpellings } from './record-key.js';

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
  /**
   * Stops reading (also before `records` was started: returning a generator that never ran would not reach its reader).
   */
  close(): Promise<void>;
}

const BATCH = 256;

/** Kinds sent inside their account's payload: their account must be in this export's accounts file. */
export const CHILD_KINDS: ReadonlySet<string> = new Set(['customers', 'supply_addresses']);

function unknownColumnIssue(file: string, line: number, column: string, kind: string): SourceIssue {
  return {
    file,
    line,
    column,
    externalAccountNumber: '',
    code: ExportCode.unknownColumn,
    message:
      `"${column}" is not a documented column of ${kind} files; rename it to a field or list it under ` +
      `mapping.${kind}.ignore in the mapping file (only documented fields may be sent).`,
  };
}

/** Unknown columns (or JSON keys) reported one by one per file; the rest in one grouped problem. */
const SHOWN_UNKNOWN_COLUMNS = 10;

/**
 * The unknown columns past the first few, as one problem: a header of 200,000 stray columns (a
 * wrong file, a wrong delimiter) is one line to read, not 200,000.
 */
function moreUnknownColumnsIssue(file: ExportFile, line: number, columns: string[]): SourceIssue {
  const sample = columns
    .slice(0, 5)
    .map((column) => JSON.stringify(column.length > 40 ? `${column.slice(0, 40)}...` : column))
    .join(', ');
  return {
    file: file.file,
    line,
    column: columns[0] ?? '',
    externalAccountNumber: '',
    code: ExportCode.unknownColumn,
    message:
      `${columns.length} more columns are not documented columns of ${file.kind} files ` +
      `(${sample}${columns.length > 5 ? ', ...' : ''}); check that this is an export file with the right header ` +
      `and delimiter, else rename them to fields or list them under mapping.${file.kind}.ignore in the mapping file.`,
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
    message:
      `account ${key} is not in the accounts file; a ` +
      `${file.kind === 'customers' ? 'customer' : 'supply address'} is sent inside its account's payload, so the ` +
      `account must be in this export.`,
  };
}

/**
 * Opens one export file: reads a CSV header and compiles the file's plan before any record is
 * handed out. `thread: false`: a CSV file is parsed in this thread (see readCsvBatches). `places`:
 * a CSV file's rows are read at their places, in external account number order (sources/placed-rows.ts).
 */
export async function openExportFile(
  file: ExportFile,
  config: ExportMapping,
  issues: IssueSink,
  onBytes: (bytes: number) => void,
  read: { thread?: boolean; spellings?: UnicodeSpellings; places?: RowPlaces } = {},
): Promise<OpenedFile> {
  const spellings = read.spellings ?? { lines: 0, sample: [] };
  // A file that changes while it is read is named as such, not blamed on its data (file-stamp.ts).
  const stamp = stampOf(file);
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
      const plan = planCsvHeader(file, header.cells, config);
      const unknown = plan.unknownColumns;
      for (const column of unknown.slice(0, SHOWN_UNKNOWN_COLUMNS))
        issues.push(unknownColumnIssue(file.file, header.line, column, file.kind));
      if (unknown.length > SHOWN_UNKNOWN_COLUMNS)
        issues.push(moreUnknownColumnsIssue(file, header.line, unknown.slice(SHOWN_UNKNOWN_COLUMNS)));
      const csv = { plan, header: header.cells, spellings };
      const reading = csvRecords((first.value ?? []).slice(1), batches, file, csv, issues);
      const records = watchedRecords(reading, file, stamp);
      return {
        plan,
        records,
        close: async () =>
          void (await Promise.all([records.return(undefined), reading.return(undefined), batches.return(undefined)])),
      };
    } catch (error) {
      await batches.return(undefined);
      throw changedWhileRead(file, stamp) ?? error;
    }
  }
  const plan = planFile(file.kind, file.file, [], config);
  const items =
    file.format === 'json' ? readJsonArray(file.absolutePath, options) : readNdjson(file.absolutePath, options);
  const reading = jsonRecords(items, file, { plan, spellings }, issues);
  const records = watchedRecords(reading, file, stamp);
  return {
    plan,
    records,
    close: async () =>
      void (await Promise.all([records.return(undefined), reading.return(undefined), items.return(undefined)])),
  };
}

const OTHER_DELIMITERS = [';', '\t', '|'];

/** A CSV file's plan from its header, with the header's own checks: the order proof and the join read it alike. */
export function planCsvHeader(file: ExportFile, header: string[], config: ExportMapping): FilePlan {
  refuseOtherDelimiter(file, header, config.mapping[file.kind].delimiter);
  return planFile(file.kind, file.file, header, config);
}

/**
 * A header read as one cell that holds another common delimiter (a spreadsheet's `;` or tab
 * export): say how to set the delimiter instead of reporting a missing column.
 */
function refuseOtherDelimiter(file: ExportFile, header: string[], delimiter: string): void {
  if (header.length !== 1) return;
  const found = OTHER_DELIMITERS.find((other) => other !== delimiter && (header[0] ?? '').includes(other));
  if (found === undefined) return;
  const shown = JSON.stringify(found);
  throw new InputError(
    file.file,
    1,
    `its header is separated by ${found === '\t' ? 'tabs' : `"${found}"`}, not by ${JSON.stringify(delimiter)}; ` +
      `set the delimiter in the mapping file (migrate.config.json): {"mapping": {"${file.kind}": {"delimiter": ` +
      `${shown}}}}, or "delimiter": ${shown} at its top level for every file.`,
    'input_delimiter',
  );
}

async function* csvRecords(
  afterHeader: CsvRow[],
  batches: AsyncGenerator<CsvRow[]>,
  file: ExportFile,
  { plan, header, spellings }: { plan: FilePlan; header: string[]; spellings: UnicodeSpellings },
  issues: IssueSink,
): AsyncGenerator<KeyedRecord[], void, undefined> {
  const written = (cells: string[]): string | undefined =>
    plan.mapping.constants['external_account_number'] === undefined && plan.keyIndex !== undefined
      ? cells[plan.keyIndex]
      : undefined;
  const keyed = (rows: CsvRow[]): KeyedRecord[] => {
    const records: KeyedRecord[] = [];
    for (const row of rows) {
      if (repeatedHeader(file, plan, header, row, issues)) continue;
      const key = csvKey(plan, row.cells);
      if (key === undefined) issues.push(missingKeyIssue(file, plan, row.line));
      else if (addressable(file, plan, row.line, key, issues)) {
        noteSpelling(spellings, file, row.line, written(row.cells), key);
        records.push({ key, line: row.line, data: row.cells });
      }
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
  { plan, spellings }: { plan: FilePlan; spellings: UnicodeSpellings },
  issues: IssueSink,
): AsyncGenerator<KeyedRecord[], void, undefined> {
  const column = keyColumn(plan);
  // JSON keys vary by record: an undocumented key is reported once per file, where it first appears.
  // Past the first few, the rest are grouped into one problem at the end of the file.
  const reported = new Set<string>();
  let unknown = 0;
  const more: string[] = [];
  let moreLine = 0;
  let batch: KeyedRecord[] = [];
  for await (const item of items) {
    const key = jsonKey(plan, item.object, (column) => {
      if (reported.has(column)) return;
      reported.add(column);
      if (ignoresUnmapped(plan, column)) return;
      unknown += 1;
      if (unknown <= SHOWN_UNKNOWN_COLUMNS) issues.push(unknownColumnIssue(file.file, item.line, column, file.kind));
      else if (more.push(column) === 1) moreLine = item.line;
    });
    if (key === undefined) issues.push(missingKeyIssue(file, plan, item.line));
    else if (addressable(file, plan, item.line, key, issues)) {
      noteSpelling(spellings, file, item.line, item.object[column], key);
      batch.push({ key, line: item.line, data: item.object });
    }
    if (batch.length >= BATCH) {
      yield batch;
      batch = [];
    }
  }
  if (batch.length > 0) yield batch;
  if (more.length > 0) issues.push(moreUnknownColumnsIssue(file, moreLine, more));
}
