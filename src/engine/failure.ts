import type { ErrorInfo } from '../ledger/index.js';
import type { ValidationIssue } from '../schema/index.js';

/**
 * The failure classes of docs/architecture.md, for errors the client rejects with
 * (after its own retry policy gave up). Data-class failures are not here: the client returns
 * them as outcome values.
 * - fatal: the run cannot go on (401 after renewal, supplier not ongoing, unreachable).
 * - ambiguous: the request may have been applied and no answer came: reconcile before resending.
 * - not_found: 404 on a post-import endpoint: the account is not imported (yet).
 * - transient: the service answered with a failure (5xx, 429) and retries ran out: nothing applied.
 * - data: the client refused to send the request (`invalid_request`: an undocumented field; the
 *   spec allows documented fields only): the export must change, so it is held back like a
 *   validation 400 (fix-data) and not retried until its data changes.
 * - unexpected: the service answered, but not as the spec says (`unexpected_response`): whether
 *   a write was applied is unknown, so it is reconciled like a lost answer (a create through the
 *   v2 status, records through the service's dedup; a payment instruction is never resent), and
 *   retried across runs at most UNEXPECTED_ATTEMPTS times before it is recorded as failed.
 */
export type FailureClass = 'fatal' | 'ambiguous' | 'not_found' | 'transient' | 'data' | 'unexpected';

export interface Failure {
  class: FailureClass;
  code: string;
  detail: string;
  /** data: the fields at fault (the client's issues, located like the service's validation errors). */
  issues?: ValidationIssue[];
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
 * `supplier_not_ongoing` is the client's error for the first two when the service gives them as the body's own code.
 */
const CONFIGURATION_CODES: ReadonlySet<string> = new Set([
  'import_supplier_migration_not_ongoing',
  'invalid_import_supplier',
  'supplier_not_ongoing',
]);
const CONFIGURATION_ATTR = /^(?:payload\.)?import_supplier$|^task_params(?:\.|$)/;

/** The first issue of a refusal that concerns the run's configuration (see CONFIGURATION_CODES), if any. */
export function configurationIssue<T extends { attr?: string | null | undefined; code: string }>(
  issues: readonly T[],
): T | undefined {
  return issues.find((issue) => CONFIGURATION_CODES.has(issue.code) || CONFIGURATION_ATTR.test(issue.attr ?? ''));
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
      ? `${who} is Paused or Complete on the service: ask the platform operators to set it Ongoing`
      : `the service does not know ${who}, or does not take it yet: check the code (--supplier, ` +
        `MIGRATE_SUPPLIER, the mapping file's import_supplier, the export's import_supplier column), or ask the ` +
        `platform operators to set the supplier up`;
  return {
    class: 'fatal',
    code: 'configuration_refused',
    detail:
      `the service refused the run's configuration, not an account's data (${refused}). To fix: ${fix}; then run ` +
      `push again. Nothing was held back: what was refused stays to be sent by the next run.`,
  };
}

const FATAL_CODES: ReadonlySet<string> = new Set([
  'unauthorized',
  'authentication_failed',
  'forbidden',
  'service_unreachable',
  'unreachable',
]);

interface ErrorLike {
  code?: unknown;
  serviceCode?: unknown;
  issues?: unknown;
  status?: unknown;
  ambiguous?: unknown;
  fatal?: unknown;
  message?: unknown;
}

export function classifyFailure(error: unknown): Failure {
  const like = (typeof error === 'object' && error !== null ? error : {}) as ErrorLike;
  const code = typeof like.code === 'string' ? like.code : 'unexpected_error';
  const detail = typeof like.message === 'string' ? like.message : String(error);
  const status = typeof like.status === 'number' ? like.status : undefined;
  const serviceCode = typeof like.serviceCode === 'string' ? like.serviceCode : code;
  if (CONFIGURATION_CODES.has(code)) return configurationRefusal({ code: serviceCode, detail });
  if (like.fatal === true || FATAL_CODES.has(code) || status === 401 || status === 403)
    return { class: 'fatal', code, detail };
  if (like.ambiguous === true) return { class: 'ambiguous', code, detail };
  if (status === 404 || code === 'not_found') return { class: 'not_found', code, detail };
  if (code === 'invalid_request')
    return {
      class: 'data',
      code,
      detail,
      ...(Array.isArray(like.issues) ? { issues: like.issues as ValidationIssue[] } : {}),
    };
  if (code === 'unexpected_response') return { class: 'unexpected', code, detail };
  return { class: 'transient', code, detail };
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
