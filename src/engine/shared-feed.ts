import { setTimeout as delay } from 'node:timers/promises';
import { compareKeys } from '../intake/index.js';
import type { Ledger } from '../ledger/index.js';
import { leaseLead, workableStates } from './account-states.js';
import type { EventSink, StageSummary } from './events.js';
import { stageExport, type ExportSource } from './stage.js';
import { StagingGate } from './staging-gate.js';
import { monotonicNow } from '../clock.js';

// A runner sharing a ledger with others (docs/postgres.md "Several runners"): the export is staged once, by the first
// runner to take the stage lock, once no account is leased; every runner leases accounts a page at a time into its
// working copy (while staging goes on, those staged so far) and its executor works on them, exactly as on accounts
// that staging has passed.

/** What the feed needs of the shared ledger (ledger/postgres SharedLedger). */
export interface LeaseSource {
  stage<T>(input: {
    identity: string;
    signal: AbortSignal;
    started: () => void;
    work: (ledger: Ledger, mark: (number: string) => void) => Promise<T>;
  }): Promise<T | undefined>;
  lease(limit: number): Promise<{ staging: boolean; numbers: string[] }>;
  othersHoldWork(): Promise<boolean>;
}

export interface LeaseFeedInput {
  ledger: Ledger;
  shared: LeaseSource;
  /** The export to stage, with what names it (its files and the mapping): staged once whoever runs it. */
  source: ExportSource | undefined;
  identity: string;
  sink: EventSink;
  /** --concurrency: the runner keeps leaseLead(concurrency) workable accounts in its working copy at most. */
  concurrency: number;
  /** --retry-errored: errored accounts are workable. */
  retryErrored: boolean;
  wait: boolean;
}

/** How often a runner looks again while another stages, or while others hold work that may come free. */
const STAGING_POLL_MS = 250;
const OTHERS_POLL_MS = 500;
/** How often a runner with its lead of accounts looks whether its executor has room for more (or, staging, whether
 * more is staged). */
const ROOM_POLL_MS = 50;

/**
 * The feed of a shared ledger's runner, for runPush's `feed`. A runner that stages leases what it has staged so far
 * (its executor sends while it reads the export, as on a state directory); the others lease once it has begun.
 */
export function leaseFeed(
  input: LeaseFeedInput,
): (gate: StagingGate, signal: AbortSignal) => Promise<StageSummary | undefined> {
  return async (gate, signal) => {
    const { source, shared, sink } = input;
    const leasing = new AbortController();
    const stopLeasing = (): void => leasing.abort();
    signal.addEventListener('abort', stopLeasing, { once: true });
    let ownStaging = false;
    try {
      let started = (): void => undefined;
      const begun = new Promise<void>((resolve) => (started = resolve));
      const staging =
        source === undefined
          ? Promise.resolve(undefined)
          : shared.stage({
              identity: input.identity,
              signal,
              started: () => {
                ownStaging = true;
                started();
              },
              work: (ledger, mark) =>
                stageExport(ledger, source, sink, { signal, gate: new MarkingGate(mark), batchSize: 100, sliceMs: 4 }),
            });
      await Promise.race([begun, staging]);
      const leased = leaseUntilDone(input, gate, leasing.signal, () => ownStaging);
      let staged: StageSummary | undefined;
      try {
        staged = await staging;
      } catch (error) {
        leasing.abort();
        await leased.catch(() => undefined);
        throw error;
      } finally {
        ownStaging = false;
      }
      await leased;
      return staged;
    } finally {
      signal.removeEventListener('abort', stopLeasing);
      gate.finish();
    }
  };
}

/** Staging's gate in a staging runner: each batch staged moves what runners may lease (`staged_up_to`). */
class MarkingGate extends StagingGate {
  readonly #mark: (number: string) => void;

  constructor(mark: (number: string) => void) {
    super();
    this.#mark = mark;
  }

  override advance(externalAccountNumber: string): void {
    const before = this.upTo;
    super.advance(externalAccountNumber);
    if (this.upTo !== before && this.upTo !== null) this.#mark(this.upTo);
  }
}

async function leaseUntilDone(
  input: LeaseFeedInput,
  gate: StagingGate,
  signal: AbortSignal,
  ownStaging: () => boolean,
): Promise<void> {
  const { ledger, shared } = input;
  let highest = '';
  const workable = workableStates(input.retryErrored);
  const lead = leaseLead(input.concurrency);
  while (!signal.aborted) {
    const open = workable.reduce((sum, state) => sum + ledger.countInState(state), 0);
    if (open >= lead) {
      await pause(ROOM_POLL_MS, signal);
      continue;
    }
    const page = await shared.lease(lead - open);
    if (page.numbers.length === 0) {
      if (!page.staging && !ownStaging() && !(await shared.othersHoldWork())) return;
      await pause(ownStaging() ? ROOM_POLL_MS : page.staging ? STAGING_POLL_MS : OTHERS_POLL_MS, signal);
      continue;
    }
    // --no-wait: accounts others left waiting are checked now, as a run takes up what earlier runs left.
    if (!input.wait) ledger.checksDueBy(monotonicNow());
    const below = page.numbers.some((number) => compareKeys(number, highest) <= 0 && highest !== '');
    for (const number of page.numbers) if (compareKeys(number, highest) > 0) highest = number;
    gate.advance(highest);
    if (below) gate.restart();
  }
}

/** Waits `ms`, or less when `signal` aborts. */
function pause(ms: number, signal: AbortSignal): Promise<void> {
  return delay(ms, undefined, { signal }).catch(() => undefined);
}
