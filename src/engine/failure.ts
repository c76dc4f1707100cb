import type { ErrorInfo } from '../ledger/index.js';

/**
 * The failure classes of shared/design/architecture.md, for errors the client rejects with
 * (after its own retry policy gave up). Data-class failures are not here: the client returns
 * them as outcome values.
 * - fatal: the run cannot go on (401 after renewal, supplier not ongoing, unreachable).
 * - ambiguous: the request may have been applied and no answer came: reconcile before resending.
 * - not_found: 404 on a post-import endpoint: the account is not imported (yet).
 * - transient: the service answered with a failure (5xx, 429) and retries ran out: nothing applied.
 */
export type FailureClass = 'fatal' | 'ambiguous' | 'not_found' | 'transient';

export interface Failure {
  class: FailureClass;
  code: string;
  detail: string;
}

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
  if (like.fatal === true || FATAL_CODES.has(code) || status === 401 || status === 403) return { class: 'fatal', code, detail };
  if (like.ambiguous === true) return { class: 'ambiguous', code, detail };
  if (status === 404 || code === 'not_found') return { class: 'not_found', code, detail };
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
