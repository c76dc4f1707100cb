import type { Contract, ContractRequest, Dialect, ValidationIssue } from '../../schema/index.js';
import { Code } from '../../schema/index.js';
import { asObject, asString } from '../../schema/read.js';
import type { Reply } from '../http-io.js';
import type { ProcessRecord } from '../records.js';
import type { ProcessStore } from '../store.js';

// What every endpoint handler gets, and the error bodies they share (spec "Errors"; where the
// spec is silent, the sandbox's choices documented in docs/sandbox.md).

export interface HandlerContext {
  store: ProcessStore;
  /** The request and response forms: the spec's or the real platform's. */
  dialect: Dialect;
  /** The tenant's contract being rehearsed, if any (SandboxOptions.contract). */
  contract: Contract | undefined;
  /** Epoch milliseconds of this request. */
  now: number;
  /** Today (YYYY-MM-DD) for "not in the future" rules. */
  today: string;
  openPeriodStart: string;
  /** Decoded path parameters, in order. */
  params: string[];
  query: URLSearchParams;
  body: unknown;
  /** Attempts so far of each FLAKY- payment instruction, by supplier/account/reference. */
  flakyCounts: Map<string, number>;
  flakyAttempts: number;
  /** Several payment instructions per account accepted (SandboxOptions.multiplePaymentInstructions). */
  multiplePaymentInstructions: boolean;
  /** Keep whole submitted items (transactions' data, statements) for the inspector. */
  retainPayloads: boolean;
  /** The v1 transfer status word of an account that exists (SandboxOptions.transferStatusWord). */
  transferStatusWord: string;
  /** The word of a process still running, when not the spec's (SandboxOptions.processingStatusWord). */
  processingStatusWord: string | undefined;
  /** Whether this accepted create is answered 201 and lost (SandboxOptions.lostCreateShare). */
  losesCreate(supplier: string, externalAccountNumber: string): boolean;
}

/** Whether a process is still running (PENDING or IN_PROGRESS): what processingStatusWord replaces. */
export function isRunning(status: string): boolean {
  return status === 'PENDING' || status === 'IN_PROGRESS';
}

export type Handler = (context: HandlerContext) => Reply;

export const INVALID_IMPORT_SUPPLIER = 'invalid_import_supplier';
export const CREATE_IN_PROGRESS = 'account_import_process_in_progress';
export const ACCOUNT_NOT_FOUND = 'account_not_found';

/**
 * The spec's issues of a body, judged with the tenant's contract when one is rehearsed: its document says which
 * fields exist (the spec's `unknown_field`, and its `required` for a field the document does not define, give way to
 * it) and adds its own rules, checked on the body as received. A document's issue at an attr the spec names already
 * is left out (one message per value).
 */
export function withContract(
  context: HandlerContext,
  request: ContractRequest,
  received: unknown,
  spec: ValidationIssue[],
): ValidationIssue[] {
  const contract = context.contract;
  if (contract === undefined) return spec;
  const own = spec.filter(
    (issue) =>
      issue.code !== Code.unknownField && (issue.code !== Code.required || contract.defines(request, issue.attr)),
  );
  const named = new Set(own.map((issue) => issue.attr));
  return [...own, ...contract.check(request, received).filter((issue) => !named.has(issue.attr))];
}

export function accountValidationError(errors: ValidationIssue[]): Reply {
  return {
    status: 400,
    body: { detail: 'Could not validate account data.', code: Code.accountFailedValidation, errors },
  };
}

/** The standardized body (docs/service.md "Errors") for post-import endpoints. */
export function invalidRequest(
  errors: ValidationIssue[],
  detail = 'Could not validate the request data.',
  code: string = Code.invalid,
): Reply {
  return { status: 400, body: { detail, code, errors } };
}

export function notFound(detail: string, code: string): Reply {
  return { status: 404, body: { detail, code } };
}

export function accountNotFound(supplier: string, externalAccountNumber: string): Reply {
  return notFound(
    `No imported account for import supplier ${supplier} and external account number ${externalAccountNumber}.`,
    ACCOUNT_NOT_FOUND,
  );
}

/**
 * A known supplier that is Paused or Complete refuses every validate, create and post-import
 * request (docs/service.md "Errors": code import_supplier_migration_not_ongoing, 400).
 */
export function supplierGate(store: ProcessStore, supplier: unknown): Reply | undefined {
  if (typeof supplier !== 'string') return undefined;
  const status = store.suppliers.get(supplier);
  if (status === undefined || status === 'Ongoing') return undefined;
  const detail =
    `The migration of import supplier ${supplier} is ${status === 'Paused' ? 'paused' : 'complete'}; ` +
    `it accepts no accounts or account data now.`;
  return { status: 400, body: { detail, code: Code.migrationNotOngoing } };
}

/** An unknown supplier code is a field error of import_supplier (the platform's field is an enum). */
export function supplierIssues(store: ProcessStore, supplier: unknown, attr = 'import_supplier'): ValidationIssue[] {
  if (typeof supplier !== 'string' || supplier === '' || store.suppliers.has(supplier)) return [];
  return [
    {
      attr,
      code: INVALID_IMPORT_SUPPLIER,
      detail: `${JSON.stringify(supplier)} is not an import supplier of this service.`,
    },
  ];
}

export interface PostImportTarget {
  supplier: string;
  externalAccountNumber: string;
}

/** The pair named by a post-import body (already validated, so both are strings). */
export function targetOf(body: unknown): PostImportTarget {
  const raw = asObject(body) ?? {};
  return {
    supplier: asString(raw['import_supplier']) ?? '',
    externalAccountNumber: asString(raw['external_account_number']) ?? '',
  };
}

/**
 * The common front of the post-import endpoints: supplier gate, validation, then the account,
 * which must be imported, not merely staged (spec "Create notes" 404).
 */
export function resolvePostImport(
  context: HandlerContext,
  issues: ValidationIssue[],
): { reply: Reply } | { record: ProcessRecord; target: PostImportTarget } {
  const supplier = asObject(context.body)?.['import_supplier'];
  const gate = supplierGate(context.store, supplier);
  if (gate) return { reply: gate };
  const all = [...supplierIssues(context.store, supplier), ...issues];
  if (all.length > 0) return { reply: invalidRequest(all) };
  const target = targetOf(context.body);
  const record = context.store.get(target.supplier, target.externalAccountNumber, context.now);
  if (!record || record.status !== 'PROCESSED')
    return { reply: accountNotFound(target.supplier, target.externalAccountNumber) };
  return { record, target };
}

/** Two-place decimal string (spec: amounts in responses). */
export function decimalString(value: number): string {
  const text = (Math.round(value * 100) / 100).toFixed(2);
  return text === '-0.00' ? '0.00' : text;
}
