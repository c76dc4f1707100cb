import { joinAccount, joinOrphan, type JoinContext, type StagedRecord } from './join.js';
import { mapCsvRow, mapJsonRecord, type FilePlan } from './record.js';
import { decodeData, type RawRecord, type RecordGroup } from './stage.js';
import type { ExportEntry } from './types.js';

// One staged group (every record of one external account number) -> one entry. Pure, and made of
// plain data, so that it runs the same in this thread or in a worker thread (join-pool.ts).

export interface JoinSetup {
  plans: FilePlan[];
  fileNames: string[];
  context: JoinContext;
}

function mapRecord(raw: RawRecord, setup: JoinSetup): StagedRecord {
  const plan = setup.plans[raw.fileIndex];
  if (!plan) throw new Error(`no plan for file ${raw.fileIndex}`);
  const data = decodeData(raw.data);
  const record = Array.isArray(data) ? mapCsvRow(plan, raw.line, data) : mapJsonRecord(plan, raw.line, data);
  return { file: setup.fileNames[raw.fileIndex] ?? '?', record };
}

export function joinGroup(group: RecordGroup, setup: JoinSetup): ExportEntry {
  const staged = group.records.map((raw) => mapRecord(raw, setup));
  const number = group.externalAccountNumber;
  if (group.records.some((raw) => raw.kind === 'accounts')) return { kind: 'account', account: joinAccount(number, staged, setup.context) };
  return { kind: 'orphan', items: joinOrphan(number, staged, setup.context) };
}
