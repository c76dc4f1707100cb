import { compareKeys } from '../intake/index.js';
import type { AccountState, Ledger } from '../ledger/index.js';
import type { EventSink } from './events.js';
import { stageExport, type ExportSource, type StageSummary } from './stage.js';
import type { StagingGate } from './staging-gate.js';

// A runner of a ledger shared with other runners (README "Several runners"): the export is staged once, by the first
// runner to take the stage lock, while no account is leased; then every runner leases accounts a page at a time into
// its working copy and its executor works on them, exactly as on accounts that staging has passed.

/** What the feed needs of the shared ledger (ledger/postgres SharedLedger). */
export interface LeaseSource {
  stage<T>(identity: string, signal: AbortSignal, work: (ledger: Ledger) => Promise<T>): Promise<T | undefined>;
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
  /** States of accounts the executor takes on (not those parked waiting for the service). */
  open: readonly AccountState[];
  /** How many such accounts the runner keeps in its working copy at most (a page leased tops it up). */
  lead: number;
  wait: boolean;
}

/** How often a runner looks again while another stages, or while others hold work that may come free. */
const STAGING_POLL_MS = 250;
const OTHERS_POLL_MS = 500;
/** How often a runner with its lead of accounts looks whether its executor has room for more. */
const ROOM_POLL_MS = 50;

/** The feed of a shared ledger's runner, for runPush's `feed`. */
export function leaseFeed(
  input: LeaseFeedInput,
): (gate: StagingGate, signal: AbortSignal) => Promise<StageSummary | undefined> {
  return async (gate, signal) => {
    const { source, shared, sink } = input;
    try {
      const staged =
        source === undefined
          ? undefined
          : await shared.stage(input.identity, signal, (ledger) => stageExport(ledger, source, sink, { signal }));
      await leaseUntilDone(input, gate, signal);
      return staged;
    } finally {
      gate.finish();
    }
  };
}

async function leaseUntilDone(input: LeaseFeedInput, gate: StagingGate, signal: AbortSignal): Promise<void> {
  const { ledger, shared } = input;
  let highest = '';
  while (!signal.aborted) {
    const open = input.open.reduce((sum, state) => sum + ledger.countInState(state), 0);
    if (open >= input.lead) {
      await pause(ROOM_POLL_MS, signal);
      continue;
    }
    const page = await shared.lease(input.lead - open);
    if (page.staging) {
      await pause(STAGING_POLL_MS, signal);
      continue;
    }
    if (page.numbers.length === 0) {
      if (!(await shared.othersHoldWork())) return;
      await pause(OTHERS_POLL_MS, signal);
      continue;
    }
    // --no-wait: accounts others left waiting are checked now, as a run takes up what earlier runs left.
    if (!input.wait) ledger.checksDueBy(Date.now());
    const below = page.numbers.some((number) => compareKeys(number, highest) <= 0 && highest !== '');
    for (const number of page.numbers) if (compareKeys(number, highest) > 0) highest = number;
    gate.advance(highest);
    if (below) gate.restart();
  }
}

function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
  });
}
