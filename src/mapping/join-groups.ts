import type { FileKind } from '../sources/kinds.js';
import { joinAccount, joinOrphan } from './join.js';
import type { JoinContext, SourcedRecord } from './sourced-record.js';
import { fieldOriginsOf, mapCsvRow, mapJsonRecord, recordOrigin, type FilePlan } from './record.js';
import type { ExportEntry } from './types.js';

// One group (every record of one external account number, in file order) -> one entry. Both
// joins of the intake end here: the scratch-file one (intake/scratch-join.ts, any record order)
// and the streaming one (intake/stream-join.ts, files sorted by external account number).

/** A record as read: the cells of a CSV row, or a JSON object. */
export type RecordData = string[] | Record<string, unknown>;

export interface GroupRecord {
  kind: FileKind;
  fileIndex: number;
  line: number;
  data: RecordData;
}

export interface RecordGroup {
  externalAccountNumber: string;
  records: GroupRecord[];
}

export interface JoinSetup {
  plans: FilePlan[];
  fileNames: string[];
  context: JoinContext;
}

function mapRecord(raw: GroupRecord, setup: JoinSetup): SourcedRecord {
  const plan = setup.plans[raw.fileIndex];
  if (!plan) throw new Error(`no plan for file ${raw.fileIndex}`);
  // A shaped record is named at the legacy line it carries, not at its place in the shaped export.
  const origin = recordOrigin(plan, raw.data);
  const line = origin?.line ?? raw.line;
  const record = Array.isArray(raw.data) ? mapCsvRow(plan, line, raw.data) : mapJsonRecord(plan, line, raw.data);
  // Every legacy row it names: its fields taken from another row are named at that row.
  const fields = origin?.rows ? fieldOriginsOf(plan, origin, origin.rows) : undefined;
  if (fields !== undefined) record.fieldOrigins = fields;
  return { file: origin?.file ?? setup.fileNames[raw.fileIndex] ?? '?', record };
}

export function joinGroup(group: RecordGroup, setup: JoinSetup): ExportEntry {
  const staged = group.records.map((raw) => mapRecord(raw, setup));
  const number = group.externalAccountNumber;
  if (group.records.some((raw) => raw.kind === 'accounts'))
    return { kind: 'account', account: joinAccount(number, staged, setup.context) };
  return { kind: 'orphan', items: joinOrphan(number, staged, setup.context) };
}
