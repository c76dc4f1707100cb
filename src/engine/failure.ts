import {
  AbortedError,
  ApiError,
  NotFoundError,
  RequestRejectedError,
  SupplierNotOngoingError,
  SupplierUnknownError,
  UnexpectedResponseError,
} from '../api/index.js';
import { isLedgerDamage, type ErrorInfo } from '../ledger/index.js';
import type { ValidationIssue } from '../schema/index.js';
import { EngineCode } from './engine-codes.js';
import { messageOf } from '../errors.js';

/**
 * The failure classes, each explained in docs/architecture.md "Failure classes" (the same list: a test reads the
 * table), for errors the client rejects with (after its own retry policy gave up), read from the client's error classes
 * and flags (api/errors.ts: `fatal`, `ambiguous`), never from codes. Data-class failures the service answers (a
 * validation 400) are not here: the client returns them as outcome values.
 */
export const FAILURE_CLASSES = [
  'data',
  'transient',
  'ambiguous',
  'not_found',
  'fatal',
  'stopped',
  'unexpected',
  'too_large',
  'storage',
] as const;
export type FailureClass = (typeof FAILURE_CLASSES)[number];

export interface Failure {
  class: FailureClass;
  code: string;
  detail: string;
  /** data: the fields at fault (the client's issues, located like the service's validation errors). */
  issues?: ValidationIssue[];
  /** storage: the ledger's own error, for the command to name the state directory and what to do. */
  cause?: unknown;
  /** transient and unexpected: the service answered (an HTTP status came back), so it is reachable. */
  answered?: boolean;
}

/** Requests of one account or record answered unexpectedly (across runs) before it is given up as failed. */
export const UNEXPECTED_ATTEMPTS = 3;

/**
 * A refusal that concerns the run's configuration rather than one account's data: every account of the run would be
 * refused alike, so the run stops (exit 3) after the few requests already in flight, and what was refused is left to
 * be sent by the next run, once the configuration is right (README "Exit codes"). The service's codes:
 * - `import_supplier_migration_not_ongoing`: the supplier is Paused or Complete (spec "Import supplier status");
 * - `invalid_import_supplier`, or any refusal of the field `import_supplier`: a supplier code the service does not
 *   know (yet); the platform's field is an enum of the tenant's codes (docs/service.md "Errors");
 * - a refusal of `task_params`: the request's form is not the service's (the real platform requires it beside
 *   `payload`: docs/real-platform.md), a dialect the platform rejects.
 */
const CONFIGURATION_CODES: ReadonlySet<string> = new Set([
  'import_supplier_migration_not_ongoing',
  'invalid_import_supplier',
]);
const CONFIGURATION_ATTR = /^(?:payload\.)?import_supplier$|^task_params(?:\.|$)/;

/** The first issue of a refusal that concerns the run's configuration (see CONFIGURATION_CODES), if any. */
export function configurationIssue<T extends { attr?: string | null | undefined; code: string }>(
  issues: readonly T[],
): T | undefined {
  return issues.find((issue) => CONFIGURATION_CODES.has(issue.code) || CONFIGURATION_ATTR.test(issue.attr ?? ''));
}

/**
 * Whether a configuration refusal says the service does not know the supplier code (not a paused supplier, not the
 * request's form): the accounts staged under that code are staged again by the next push (docs/reruns.md).
 */
export function refusesSupplierCode(issue: { attr?: string | null | undefined; code: string }): boolean {
  return !/^task_params/.test(issue.attr ?? '') && !/not_ongoing/.test(issue.code);
}

/**
 * The fatal failure of a configuration refusal, saying what to fix. `supplier`: the import supplier of the request
 * refused.
 */
export function configurationRefusal(
  issue: { attr?: string | null | undefined; code: string; detail: string },
  supplier?: string,
): Failure {
  const who = supplier === undefined ? 'the import supplier' : `import supplier ${supplier}`;
  const refused = `${issue.code}${issue.attr ? ` on ${issue.attr}` : ''}: ${issue.detail}`;
  const fix = /^task_params/.test(issue.attr ?? '')
    ? 'the service wants another request form (the real platform requires task_params: --dialect kraken, in a new ' +
      '--state directory or with --move-ledger-to-service)'
    : /not_ongoing/.test(issue.code)
      ? `${who} is not accepting migrations: it is Paused or Complete on the service; ask the platform operators to ` +
        'set it Ongoing'
      : `the service does not know ${who}, or does not take it yet: check the code (--supplier, ` +
        `MIGRATE_SUPPLIER, the mapping file's import_supplier, the export's import_supplier column), or ask the ` +
        `platform operators to set the supplier up`;
  return {
    class: 'fatal',
    code: EngineCode.configurationRefused,
    detail:
      `the service refused the run's configuration, not an account's data (${refused}). To fix: ${fix}; then run ` +
      `push again. Nothing was held back: what was refused stays to be sent by the next run.`,
  };
}

export function classifyFailure(error: unknown): Failure {
  if (!(error instanceof ApiError))
    return {
      class: 'fatal',
      code: EngineCode.internalError,
      detail: messageOf(error),
    };
  const { code, message: detail } = error;
  if (error instanceof SupplierNotOngoingError || error instanceof SupplierUnknownError)
    return configurationRefusal({
      code: error.serviceCode ?? code,
      detail: `${error.endpoint}: ${error.serviceDetail}`,
    });
  if (error.fatal) return { class: 'fatal', code, detail };
  if (error.ambiguous) return { class: 'ambiguous', code, detail };
  if (error instanceof AbortedError) return { class: 'stopped', code, detail };
  if (error instanceof NotFoundError) return { class: 'not_found', code, detail };
  if (error instanceof RequestRejectedError && error.status === 413)
    return { class: 'too_large', code: EngineCode.requestTooLarge, detail };
  if (error instanceof RequestRejectedError && error.status === undefined)
    return { class: 'data', code, detail, issues: error.issues };
  const answered = error.status !== undefined;
  if (error instanceof UnexpectedResponseError) return { class: 'unexpected', code, detail, answered };
  return { class: 'transient', code, detail, answered };
}

/** The storage failure of a ledger write that failed: the run stops, and the command names the state directory. */
export function storageFailure(error: unknown): Failure {
  return {
    class: 'storage',
    code: isLedgerDamage(error) ? EngineCode.ledgerDamaged : EngineCode.ledgerWriteFailed,
    detail: messageOf(error),
    cause: error,
  };
}

export function errorInfoOf(failure: Failure): ErrorInfo {
  return { code: failure.code, detail: failure.detail };
}

/**
 * Whether the request that failed so may have been applied: only a lost answer (ambiguous) or one that does not match
 * the spec (unexpected) leaves it open. Any other failure was an answer refusing it, or it was never sent.
 */
export function mayHaveApplied(failure: Failure): boolean {
  return failure.class === 'ambiguous' || failure.class === 'unexpected';
}

/**
 * Thrown inside a step to stop the whole run (a fatal failure); the executor catches it. `request`: the failure of the
 * request in hand when it is not the run's reason itself (the last of too many failures in a row), so the step can
 * tell whether that request may have been applied.
 */
export class StopRun extends Error {
  readonly failure: Failure;
  readonly request: Failure;
  constructor(failure: Failure, request: Failure = failure) {
    super(failure.detail);
    this.name = 'StopRun';
    this.failure = failure;
    this.request = request;
  }
}
