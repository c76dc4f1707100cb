import { moneyToStrings } from '../schema/index.js';
import type { Dialect, MoneyBody, TenantFields, ValidationIssue } from '../schema/index.js';
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
  /**
   * The wire dialect the payloads will be sent in (default spec): `kraken` sends money as decimal strings in the
   * platform's precision, so a value that form cannot carry is a problem here, as the client would refuse it.
   */
  dialect?: Dialect | undefined;
}

/** The problems of a request body that the dialect's wire form cannot carry (none in the spec dialect). */
export function dialectIssues(context: JoinContext, body: MoneyBody, value: unknown): ValidationIssue[] {
  return context.dialect === 'kraken' ? moneyToStrings(body, value).issues : [];
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
