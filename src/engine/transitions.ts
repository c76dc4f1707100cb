import type { V1StatusRecord, V2StatusRecord } from '../schema/index.js';
import type { AccountPatch, AccountRow, ErrorInfo } from '../ledger/index.js';
import { nextPollDelay, type PollSchedule } from './poll-schedule.js';
import { EngineCode } from './engine-codes.js';

// The per-account state machine's transitions (docs/architecture.md), as pure
// functions from (account, outcome, clock) to the patch the ledger applies. No I/O here:
// tested with tables in test/engine/transitions.test.ts.

export interface ClockReading {
  now: number;
  /** A number in [0, 1) for poll jitter. */
  random: number;
}

export interface Transition {
  patch: AccountPatch;
  /** The step name recorded in the account's history. */
  step: string;
  detail?: string;
}

/** Result of POST /v2/data-import/accounts/ as the engine sees it. */
export type CreateResult =
  | { kind: 'scheduled' }
  /** A process for the pair exists and is not finished (an earlier create landed): poll it, create nothing. */
  | { kind: 'in_progress'; detail: string }
  | { kind: 'already_imported'; platformAccountNumber: string }
  | { kind: 'invalid'; error: ErrorInfo }
  /**
   * No answer after the request may have been sent, or an answer the spec does not give: reconcile before resending.
   */
  | { kind: 'unsettled'; error: ErrorInfo }
  /** Certainly not applied: never sent (connection refused, no token), refused for the run's configuration, or a
   * failure answer after the client's retries: staged again, sent by a later chain or run. */
  | { kind: 'not_sent'; error: ErrorInfo };

export function afterCreate(
  account: AccountRow,
  result: CreateResult,
  clock: ClockReading,
  schedule: PollSchedule,
): Transition {
  switch (result.kind) {
    case 'scheduled':
    case 'in_progress':
      return {
        step: 'create',
        ...(result.kind === 'in_progress' ? { detail: 'import process already in progress' } : {}),
        patch: {
          state: 'scheduled',
          sentFingerprint: account.fingerprint,
          error: null,
          nextCheckAt: clock.now + nextPollDelay(schedule, 0, clock.random),
        },
      };
    case 'already_imported':
      // The pair was imported before (by an earlier run whose outcome was lost, or another tool): adopt it.
      return {
        step: 'create',
        detail: 'already imported: adopted',
        patch: {
          state: 'processed',
          sentFingerprint: account.fingerprint,
          platformAccountNumber: result.platformAccountNumber,
          error: null,
        },
      };
    case 'invalid':
      return { step: 'create', detail: result.error.code, patch: { state: 'invalid', error: result.error } };
    case 'not_sent':
      return {
        step: 'create',
        detail: `not sent: ${result.error.code}`,
        patch: { state: 'staged', error: result.error },
      };
    case 'unsettled':
      // Keep the intent: the next attempt asks the v2 status before anything is resent.
      return {
        step: 'create',
        detail: result.error.code,
        patch: {
          state: 'creating',
          error: result.error,
          nextCheckAt: clock.now + nextPollDelay(schedule, 0, clock.random),
        },
      };
  }
}

/**
 * A v2 status answer (null = 404, no import process), for an account that is `creating`
 * (reconciling an intent) or `scheduled` (waiting for processing).
 */
export function afterStatus(
  account: AccountRow,
  status: V2StatusRecord | null,
  clock: ClockReading,
  schedule: PollSchedule,
): Transition {
  if (status === null) {
    if (account.state === 'creating') {
      // The create never reached the service: sending it again cannot duplicate anything.
      return { step: 'reconcile', detail: 'no import process: create not received', patch: { state: 'staged' } };
    }
    return waitAgain(account, clock, schedule, 'no import process yet');
  }
  switch (status.status) {
    case 'PROCESSED':
      return {
        step: account.state === 'creating' ? 'reconcile' : 'poll',
        patch: {
          state: 'processed',
          sentFingerprint: account.sentFingerprint ?? account.fingerprint,
          platformIdentifier: status.platform_identifier,
          error: null,
          nextCheckAt: null,
        },
      };
    case 'PENDING':
    case 'IN_PROGRESS':
      return waitAgain(account, clock, schedule, status.status);
    case 'ERRORED':
    case 'DRY_RUN_ERRORED':
    case 'CANCELLED':
    case 'DRY_RUN_SUCCEEDED': {
      const error: ErrorInfo = {
        code: status.latest_error?.code ?? status.status.toLowerCase(),
        detail: status.latest_error?.detail ?? `import process ${status.status}`,
      };
      return {
        step: 'poll',
        detail: error.code,
        patch: {
          state: 'errored',
          sentFingerprint: account.sentFingerprint ?? account.fingerprint,
          error,
          nextCheckAt: null,
        },
      };
    }
  }
}

function waitAgain(account: AccountRow, clock: ClockReading, schedule: PollSchedule, detail: string): Transition {
  const pollsMade = account.state === 'scheduled' ? account.polls + 1 : 0;
  return {
    step: account.state === 'creating' ? 'reconcile' : 'poll',
    detail,
    patch: {
      state: 'scheduled',
      sentFingerprint: account.sentFingerprint ?? account.fingerprint,
      addPoll: true,
      nextCheckAt: clock.now + nextPollDelay(schedule, pollsMade, clock.random),
    },
  };
}

/**
 * A v1 transfer status answer polling a `scheduled` account, the first status asked (spec "Get
 * account import status (v1)"): COMPLETED carries the platform account number, so one request
 * settles the common case; IN_PROGRESS waits again. Undefined: ask v2, which alone says why an
 * account is not there: UNKNOWN (the process failed: v2 ERRORED or CANCELLED carries its
 * latest_error), 404 (no process), or COMPLETED without a number.
 */
export function afterPollTransferStatus(
  account: AccountRow,
  status: V1StatusRecord | null,
  clock: ClockReading,
  schedule: PollSchedule,
): Transition | undefined {
  if (status?.status === 'COMPLETED' && status.platform_account_number !== '') {
    return {
      step: 'poll',
      patch: {
        state: 'processed',
        sentFingerprint: account.sentFingerprint ?? account.fingerprint,
        platformAccountNumber: status.platform_account_number,
        error: null,
        nextCheckAt: null,
      },
    };
  }
  if (status?.status === 'IN_PROGRESS') return waitAgain(account, clock, schedule, 'IN_PROGRESS');
  return undefined;
}

/** The imported-accounts list named this scheduled account with its platform account number. */
export function afterListedImported(platformAccountNumber: string): Transition {
  return {
    step: 'poll',
    detail: 'listed as imported',
    patch: { state: 'processed', platformAccountNumber, error: null, nextCheckAt: null },
  };
}

/**
 * v1 transfer status of an account known only by post-import records (an `unresolved` account):
 * its records are pushed once an account exists for the pair. No import process at all for the pair: the account
 * exists neither in the export nor on the platform, a data error (held back as `invalid`, its records listed in
 * fix-data.csv; checked again when a later export brings the account or new records for it). An import process not
 * imported yet: its records wait for a later run.
 */
export function afterTransferStatus(status: V1StatusRecord | null): Transition {
  if (status !== null && status.status === 'COMPLETED' && status.platform_account_number !== '') {
    return {
      step: 'resolve',
      patch: { state: 'processed', platformAccountNumber: status.platform_account_number, error: null },
    };
  }
  if (status === null)
    return {
      step: 'resolve',
      detail: 'no account for this external account number',
      patch: {
        state: 'invalid',
        error: { code: EngineCode.accountNotFound, detail: ACCOUNT_NOT_FOUND_DETAIL },
      },
    };
  const detail = `import status ${status.status}`;
  return {
    step: 'resolve',
    detail,
    patch: {
      state: 'unresolved',
      error: { code: EngineCode.accountNotImported, detail: `post-import records wait: ${detail}` },
    },
  };
}

const ACCOUNT_NOT_FOUND_DETAIL =
  'no account of this external account number on the platform (no import process) and none in the export: its ' +
  'post-import records cannot be added. Correct their external_account_number, or bring the account in an ' +
  'accounts file, then push again.';
