import type { TenantFields } from '../schema/index.js';
import type { MappedRecord, RecordIssue } from './record.js';
import type { SourceIssue } from './types.js';

// One mapped record of an account's group, and how its problems become located issues: shared by
// the join of the account (join.ts) and of its post-import items (items.ts).

export interface StagedRecord {
  file: string;
  record: MappedRecord;
}

export interface JoinContext {
  today: string;
  /** file -> field path -> source column (renames). */
  columnOf: Record<string, Record<string, string>>;
  importSupplier: string | undefined;
  /** Several payment instructions per account allowed (ExportMapping.multiplePaymentInstructions); default one. */
  multiplePaymentInstructions?: boolean;
  /** Declared tenant fields: in the payload as given, left out of the spec's validation (the service judges them). */
  tenantFields: TenantFields;
}

export function recordIssue(file: string, line: number, number: string, issue: RecordIssue, prefix = ''): SourceIssue {
  const attr = [prefix, issue.attr].filter((part) => part !== '').join('.');
  return {
    file,
    line,
    ...(issue.column === undefined ? {} : { column: issue.column }),
    ...(attr === '' ? {} : { attr }),
    externalAccountNumber: number,
    code: issue.code,
    message: issue.message,
  };
}
