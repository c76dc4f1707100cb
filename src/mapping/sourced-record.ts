import { Code, moneyToStrings, tenantKindIssues } from '../schema/index.js';
import type {
  Contract,
  ContractRequest,
  Dialect,
  MoneyBody,
  TenantBody,
  TenantFields,
  ValidationIssue,
} from '../schema/index.js';
import type { MappedRecord, RecordIssue } from './record.js';
import { fieldOrigin } from './locate.js';
import type { Origin, SourceIssue } from './types.js';

// One mapped record of an account's group with the file it came from, and how its problems become located issues:
// shared by the join of the account (join.ts) and of its post-import items (items.ts).

export interface SourcedRecord {
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
  /** Declared tenant fields: in the payload as given, left out of the spec's validation (the contract judges them). */
  tenantFields: TenantFields;
  /** The tenant's contract: every body is checked against its document as it would be sent. */
  contract?: Contract | undefined;
  /**
   * The wire dialect the payloads will be sent in (default spec): `kraken` sends money as decimal strings in the
   * platform's precision, so a value that form cannot carry is a problem here, as the client would refuse it.
   */
  dialect?: Dialect | undefined;
}

/** A request body the export fills: its tenant scopes, its money, and its schema in the tenant's contract. */
interface RequestBody {
  tenant: TenantBody;
  money?: MoneyBody;
  contract: ContractRequest;
}

export const REQUEST_BODIES = {
  // The payload alone (the object under `payload`): attrs relative to it, as the service gives them.
  account: { tenant: 'account', money: 'account', contract: 'accountPayload' },
  notes: { tenant: 'notes', contract: 'notes' },
  transactions: { tenant: 'transactions', money: 'transactions', contract: 'transactions' },
  statements: { tenant: 'statements', contract: 'statements' },
  paymentInstruction: { tenant: 'payment_instruction', contract: 'paymentInstruction' },
} as const satisfies Record<string, RequestBody>;

/**
 * The body as it goes on the wire: money as decimal strings in the `kraken` dialect, and what that form cannot carry.
 */
function wireForm(
  context: JoinContext,
  body: RequestBody,
  value: unknown,
): { value: unknown; issues: ValidationIssue[] } {
  if (context.dialect !== 'kraken' || body.money === undefined) return { value, issues: [] };
  if (body.money !== 'account') return moneyToStrings(body.money, value);
  const money = moneyToStrings('account', { payload: value });
  return { value: (money.value as { payload: unknown }).payload, issues: money.issues };
}

/**
 * The problems of a request body beyond the spec's (`spec`, found by the caller on the body without its tenant
 * fields): what the dialect's wire form cannot carry, declared tenant fields of the wrong kind, and the tenant's
 * contract, judged on the body as it would be sent. A contract problem at an attr the others name already is left
 * out (one message per value).
 */
export function requestIssues(
  context: JoinContext,
  body: RequestBody,
  value: unknown,
  found: ValidationIssue[],
): ValidationIssue[] {
  const wire = wireForm(context, body, value);
  const kinds = tenantKindIssues(body.tenant, value, context.tenantFields);
  const spec = context.contract ? bySpecFor(context.contract, body, found) : found;
  const own = wire.issues.length + kinds.length === 0 ? spec : [...spec, ...wire.issues, ...kinds];
  const contract = context.contract?.check(body.contract, wire.value) ?? [];
  if (contract.length === 0) return own;
  const named = new Set(own.map((issue) => issue.attr));
  return [...own, ...contract.filter((issue) => !named.has(issue.attr))];
}

/**
 * The spec's issues that hold for this tenant: a field the tenant's document does not define cannot be required of
 * its payloads (a structured supply address has no supply_address1); the document's own requirements replace it.
 */
function bySpecFor(contract: Contract, body: RequestBody, spec: ValidationIssue[]): ValidationIssue[] {
  if (spec.length === 0) return spec;
  return spec.filter((issue) => issue.code !== Code.required || contract.defines(body.contract, issue.attr));
}

/** Where a record comes from: its own legacy row, with the fields other rows of it hold (Origin.fields). */
export function originOf(staged: SourcedRecord): Origin {
  const fields = staged.record.fieldOrigins;
  return { file: staged.file, line: staged.record.line, ...(fields === undefined ? {} : { fields }) };
}

export function recordIssue(staged: SourcedRecord, number: string, issue: RecordIssue, prefix = ''): SourceIssue {
  const attr = [prefix, issue.attr].filter((part) => part !== '').join('.');
  const held = issue.attr === '' ? undefined : fieldOrigin(originOf(staged), issue.attr.split('.'));
  const column = held?.column ?? issue.column;
  return {
    file: held?.file ?? staged.file,
    line: held?.line ?? staged.record.line,
    ...(column === undefined ? {} : { column }),
    ...(attr === '' ? {} : { attr }),
    externalAccountNumber: number,
    code: issue.code,
    message: issue.message,
  };
}
