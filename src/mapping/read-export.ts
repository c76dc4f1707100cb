import type { MigrateConfig } from '../config/index.js';
import { InputError } from '../errors.js';
import { readCsv, readJsonArray, readNdjson, type ExportFile } from '../sources/index.js';
import { ExportCode } from './issue-codes.js';
import { csvKey, jsonKey, planFile, type FilePlan } from './record.js';
import { encodeCells, encodeObject, type StagingStore } from './stage.js';
import type { SourceIssue } from './types.js';

// Reads every file of an export into the staging store, record by record (bounded memory), as
// raw data keyed by external account number; mapping happens per account when the join reads
// them back. Collects the problems that belong to a file rather than to an account.

export interface FileReadResult {
  records: number;
  plan: FilePlan;
}

const CHILD_KINDS = new Set(['customers', 'supply_addresses']);

function unknownColumnIssue(file: string, line: number, column: string, kind: string): SourceIssue {
  return {
    file, line, column, externalAccountNumber: '', code: ExportCode.unknownColumn,
    message: `"${column}" is not a documented column of ${kind} files; rename it to a field or list it under mapping.${kind}.ignore in the mapping file (only documented fields may be sent).`,
  };
}

/** Stages a record under its account; says why not when it cannot be joined. */
function stage(store: StagingStore, fileIndex: number, file: ExportFile, plan: FilePlan, key: string | undefined, line: number, data: string, fileIssues: SourceIssue[]): boolean {
  const column = plan.columnOf['external_account_number'] ?? 'external_account_number';
  if (key === undefined) {
    fileIssues.push({ file: file.file, line, column, externalAccountNumber: '', code: ExportCode.missingExternalAccountNumber, message: 'The record has no external_account_number; it cannot be joined to an account.' });
    return false;
  }
  // Accounts are read first, so a customer or supply address can be checked as it is read.
  if (CHILD_KINDS.has(file.kind) && !store.hasAccount(key)) {
    fileIssues.push({
      file: file.file, line, column, externalAccountNumber: key, code: ExportCode.accountNotInAccountsFile,
      message: `account ${key} is not in the accounts file; a ${file.kind === 'customers' ? 'customer' : 'supply address'} is sent inside its account's payload, so the account must be in this export.`,
    });
    return false;
  }
  store.add(key, { kind: file.kind, fileIndex, line, data });
  return true;
}

export async function readExportFile(store: StagingStore, fileIndex: number, file: ExportFile, config: MigrateConfig, fileIssues: SourceIssue[], onBytes: (bytes: number) => void): Promise<FileReadResult> {
  const mapping = config.mapping[file.kind];
  const options = { file: file.file, encoding: mapping.encoding, onBytes };
  let records = 0;
  if (file.format === 'csv') {
    let plan: FilePlan | undefined;
    for await (const row of readCsv(file.absolutePath, { ...options, delimiter: mapping.delimiter })) {
      if (!plan) {
        plan = planFile(file.kind, file.file, row.cells, config);
        for (const column of plan.unknownColumns) fileIssues.push(unknownColumnIssue(file.file, row.line, column, file.kind));
        continue;
      }
      if (stage(store, fileIndex, file, plan, csvKey(plan, row.cells), row.line, encodeCells(row.cells), fileIssues)) records += 1;
    }
    if (!plan) throw new InputError(file.file, 1, 'is empty: a CSV export file starts with a header row naming its columns.', 'input_empty');
    return { records, plan };
  }
  const plan = planFile(file.kind, file.file, [], config);
  const reported = new Set<string>();
  const read = file.format === 'json' ? readJsonArray(file.absolutePath, options) : readNdjson(file.absolutePath, options);
  for await (const item of read) {
    const key = jsonKey(plan, item.object, (column) => {
      if (reported.has(column)) return;
      reported.add(column);
      fileIssues.push(unknownColumnIssue(file.file, item.line, column, file.kind));
    });
    if (stage(store, fileIndex, file, plan, key, item.line, encodeObject(item.object), fileIssues)) records += 1;
  }
  return { records, plan };
}
