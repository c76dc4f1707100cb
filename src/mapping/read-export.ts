import type { MigrateConfig } from '../config/index.js';
import { InputError } from '../errors.js';
import { readCsv, readJsonArray, readNdjson, type ExportFile } from '../sources/index.js';
import { ExportCode } from './issue-codes.js';
import { mapCsvRow, mapJsonRecord, planFile, type FilePlan, type MappedRecord } from './record.js';
import type { StagingStore } from './stage.js';
import type { SourceIssue } from './types.js';

// Reads every file of an export into the staging store, record by record (bounded memory),
// collecting the problems that belong to a file rather than to an account.

export interface ReadProgress {
  file: string;
  bytes: number;
}

export interface FileReadResult {
  records: number;
  columnOf: Record<string, string>;
}

function unknownColumnIssue(file: string, line: number, column: string, kind: string): SourceIssue {
  return {
    file, line, column, externalAccountNumber: '', code: ExportCode.unknownColumn,
    message: `"${column}" is not a documented column of ${kind} files; rename it to a field or list it under mapping.${kind}.ignore in the mapping file (only documented fields may be sent).`,
  };
}

function stage(store: StagingStore, fileIndex: number, file: ExportFile, plan: FilePlan, record: MappedRecord, fileIssues: SourceIssue[]): boolean {
  const number = record.externalAccountNumber;
  if (number === undefined) {
    fileIssues.push({
      file: file.file, line: record.line, column: plan.columnOf['external_account_number'] ?? 'external_account_number', externalAccountNumber: '',
      code: ExportCode.missingExternalAccountNumber, message: 'The record has no external_account_number; it cannot be joined to an account.',
    });
    return false;
  }
  store.add(fileIndex, { ...record, externalAccountNumber: number });
  return true;
}

export async function readExportFile(store: StagingStore, fileIndex: number, file: ExportFile, config: MigrateConfig, fileIssues: SourceIssue[], onBytes: (bytes: number) => void): Promise<FileReadResult> {
  const mapping = config.mapping[file.kind];
  const options = { file: file.file, encoding: mapping.encoding, onBytes };
  let records = 0;
  let plan: FilePlan | undefined;
  if (file.format === 'csv') {
    for await (const row of readCsv(file.absolutePath, { ...options, delimiter: mapping.delimiter })) {
      if (!plan) {
        plan = planFile(file.kind, file.file, row.cells, config);
        for (const column of plan.unknownColumns) fileIssues.push(unknownColumnIssue(file.file, row.line, column, file.kind));
        continue;
      }
      if (stage(store, fileIndex, file, plan, mapCsvRow(plan, row.line, row.cells), fileIssues)) records += 1;
    }
    if (!plan) throw new InputError(file.file, 1, 'is empty: a CSV export file starts with a header row naming its columns.', 'input_empty');
  } else {
    const jsonPlan = planFile(file.kind, file.file, [], config);
    plan = jsonPlan;
    const reported = new Set<string>();
    const read = file.format === 'json' ? readJsonArray(file.absolutePath, options) : readNdjson(file.absolutePath, options);
    for await (const item of read) {
      const onUnknown = (column: string): void => {
        if (reported.has(column)) return;
        reported.add(column);
        fileIssues.push(unknownColumnIssue(file.file, item.line, column, file.kind));
      };
      if (stage(store, fileIndex, file, jsonPlan, mapJsonRecord(jsonPlan, item.line, item.object, onUnknown), fileIssues)) records += 1;
    }
  }
  return { records, columnOf: plan?.columnOf ?? {} };
}
