import type { ImportServiceClient } from '../api/types.js';
import type { Ledger } from '../ledger/index.js';
import type { TransactionQueryFlags } from '../schema/index.js';
import type { EventSink } from './events.js';
import type { Failure } from './failure.js';
import type { PushStep } from './plan.js';
import type { PollSchedule } from './poll-schedule.js';

/** Engine settings: complete inside (defaults merged by the caller). */
export interface EngineSettings {
  /** Requests in flight at most (--concurrency). */
  concurrency: number;
  /** Retry ERRORED accounts whose data did not change (--retry-errored). */
  retryErrored: boolean;
  /** Wait for processing and push post-import records (false: --no-wait, schedule only). */
  wait: boolean;
  /** How long to keep polling once nothing else is left to do (--wait-timeout), ms. */
  waitTimeoutMs: number;
  transactionFlags: TransactionQueryFlags;
  /**
   * The deployment allows several payment instructions per account (mapping file
   * `multiple_payment_instructions`). Default false: the platform's rule of one active
   * instruction per account, which lets a resend settle an instruction whose answer was lost.
   */
  multiplePaymentInstructions: boolean;
  pollSchedule: PollSchedule;
  /** Status checks after a 201 answered "no import process" before the create counts as lost and is sent again. */
  lostCreateChecks: number;
  /** Most bytes of records in one post-import request (push --batch-bytes). */
  batchBytes: number;
  /** Accounts read from the ledger per page. */
  pageSize: number;
  /** After a stop request, how long in-flight requests may take before the run returns, ms. */
  drainMs: number;
  /** Consecutive transient failures (retries exhausted) after which the service counts as unreachable. */
  maxConsecutiveFailures: number;
  /**
   * --only: the steps this run takes (undefined: all). Without 'create' no account is
   * created; records of other kinds are left pending (their account stays processed).
   */
  steps?: ReadonlySet<PushStep> | undefined;
}

/** What a step needs: the ledger, the client, the settings, the clock, and the executor's bookkeeping. */
export interface StepContext {
  ledger: Ledger;
  client: ImportServiceClient;
  settings: EngineSettings;
  sink: EventSink;
  now(): number;
  random(): number;
  /** Records a failure the service gave (counts consecutive ones; raises StopRun when fatal). */
  failed(failure: Failure): void;
  succeeded(): void;
  stopping(): boolean;
  /** Status words the service gave that this tool does not know, said once each per run (EngineEvent `status_word`). */
  unknownWords: Set<string>;
  /** A queued (not awaited) ledger write failed: nothing more can be recorded, the run stops. */
  writeFailed(error: unknown): void;
  /**
   * An account's first poll after its create was answered: imported already, or not yet, and how late after its due
   * time the poll was made (tunes the first delay).
   */
  firstPollAnswered?: (imported: boolean, latenessMs: number) => void;
}
