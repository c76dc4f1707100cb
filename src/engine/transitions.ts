import { V2_STATUSES, type V1StatusRecord, type V2Status, type V2StatusRecord } from '../schema/index.js';
import { CODE_LIMIT, limitDetail } from '../errors.js';
import type { AccountPatch, AccountRow, ErrorInfo } from '../ledger/index.js';
import { nextPollDelay, type PollSchedule } from './poll-schedule.js';
import { EngineCode } from './engine-codes.js';
import { RUN_DEFAULTS } from '../defaults.js';

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
  lostCreateChecks: number = RUN_DEFAULTS.lostCreateChecks,
): Transition {
  if (status === null) {
    if (account.state === 'creating') {
      // The create never reached the service: sending it again cannot duplicate anything.
      return { step: 'reconcile', detail: 'no import process: create not received', patch: { state: 'staged' } };
    }
    // `polls` counts the checks since the create (reset when it is sent), this one not included.
    if (account.polls + 1 >= lostCreateChecks) return createLost(account.polls + 1);
    return waitAgain(account, clock, schedule, 'no import process yet');
  }
  if (!isKnownV2Status(status.status)) return waitAgain(account, clock, schedule, unknownV2StatusDetail(status.status));
  switch (status.status as V2Status) {
    case 'PROCESSED':
      if (!status.platform_identifier)
        return contradiction(account, 'v2 status PROCESSED without a platform_identifier (populated once PROCESSED)');
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
      return erroredWith(account, {
        code: status.latest_error?.code ?? status.status.toLowerCase(),
        detail: status.latest_error?.detail ?? `import process ${status.status}`,
      });
    }
  }
}

/**
 * A create answered 201 whose import process no check found: lost on the way (a proxy, a queue). It is staged to be
 * sent again, which is safe: a second create of an imported account is refused as already imported (adopted), one of a
 * process still running as in progress (polled).
 */
function createLost(checks: number): Transition {
  const detail =
    `the create was answered 201, but at status check ${checks} after it the service still has no import process ` +
    '(v2 status 404): the create counts as lost and is sent again';
  return {
    step: 'poll',
    detail: EngineCode.importProcessLost,
    patch: { state: 'staged', error: { code: EngineCode.importProcessLost, detail }, nextCheckAt: null },
  };
}

/** v1 COMPLETED ("an account has been created") with an empty platform account number ("no account yet"). */
export function completedWithoutNumber(account: AccountRow): Transition {
  return contradiction(account, 'v1 transfer status COMPLETED with an empty platform_account_number');
}

/**
 * The service contradicts itself about an account: it needs a person and is never counted as done (held back as
 * errored, named by status and the report; docs/operators-guide.md "Contradictions").
 */
function contradiction(account: AccountRow, what: string): Transition {
  const detail =
    `the service contradicts itself: ${what}. The account is not counted as done: check it on the platform, then ` +
    'push with --retry-errored (a create of an imported account is answered already imported, with its number)';
  return erroredWith(account, { code: EngineCode.serviceContradiction, detail });
}

/** The account ends errored with `error`: its sent data recorded, no further check. */
function erroredWith(account: AccountRow, error: ErrorInfo): Transition {
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
 * account import status (v1)"): a platform account number settles it, whatever the word (tenants add words: Octopus
 * Energy France and Plenitude France give PENDING, IN_PROGRESS, REJECTED and COMPLETED, each with the number of an
 * account that exists, the word telling the industry switch; docs/service.md "Status and list endpoints"), so one
 * request settles the common case; IN_PROGRESS without a number waits again. Undefined: ask v2, which alone says why
 * an account is not there: UNKNOWN (the process failed: v2 ERRORED or CANCELLED carries its latest_error), 404 (no
 * process), COMPLETED without a number, or a word this tool does not know.
 */
export function afterPollTransferStatus(
  account: AccountRow,
  status: V1StatusRecord | null,
  clock: ClockReading,
  schedule: PollSchedule,
): Transition | undefined {
  if (status?.status === 'COMPLETED' && status.platform_account_number === '') return completedWithoutNumber(account);
  if (status !== null && status.platform_account_number !== '') {
    return {
      step: 'poll',
      ...(status.status === 'COMPLETED'
        ? {}
        : { detail: `v1 status ${quotedWord(status.status)} with an account number` }),
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
  // A number means the account exists, whatever the word (see afterPollTransferStatus).
  if (status !== null && status.platform_account_number !== '') {
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
  const detail = `import status ${quotedWord(status.status)}`;
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

/** Whether a v2 status word is one of the spec's (spec "Account import process (v2 status field)"). */
export function isKnownV2Status(word: string): boolean {
  return V2_STATUSES.some((status) => status === word);
}

/**
 * A v2 status word the spec does not give (the enum may grow, spec "Versioning"): read as "not finished", the account
 * is asked again; said once per word and run (EngineEvent `status_word`).
 */
export function unknownV2StatusDetail(word: string): string {
  return `import process status ${quotedWord(word)}, a word the spec does not give: read as not finished`;
}

/** A status word from the service as the account's history keeps it: bounded and quoted. */
function quotedWord(word: string): string {
  return JSON.stringify(limitDetail(word, CODE_LIMIT));
}
