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

const FATAL_CODES: ReadonlySet<string> = new Set([
  'import_supplier_migration_not_ongoing',
  'unauthorized',
  'authentication_failed',
  'forbidden',
  'service_unreachable',
  'unreachable',
]);

interface ErrorLike {
  code?: unknown;
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

/** Thrown inside a step to stop the whole run (a fatal failure); the executor catches it. */
export class StopRun extends Error {
  readonly failure: Failure;
  constructor(failure: Failure) {
    super(failure.detail);
    this.name = 'StopRun';
    this.failure = failure;
  }
}
