import { ExitCode, exitCodeOfLeft, type Left } from '../errors.js';
import { ACCOUNT_STATES, ITEM_STATES, type AccountState, type LedgerCounts } from '../ledger/index.js';
import { ITEMS_FOR_A_PERSON, STATE_FACTS } from './account-states.js';
import type { StopReason } from './events.js';

/**
 * What a push leaves in the ledger (README "Exit codes"): for a person, the accounts whose state needs one (invalid,
 * ERRORED) and the records held invalid, refused or of unknown outcome; for a later run, everything else not done
 * (accounts not sent yet, creates to settle, accounts waiting for processing, records waiting to be sent). A filtered
 * run (--limit, --accounts, --only) leaves other work untouched on purpose: work not yet attempted (staged accounts,
 * pending records, accounts waiting for processing) does not count against it; failures anywhere still do.
 */
export function leftIn(counts: Pick<LedgerCounts, 'accounts' | 'items'>, filtered = false): Left {
  const left = { forPerson: 0, forLaterRun: 0 };
  for (const state of ACCOUNT_STATES) {
    const count = counts.accounts[state] ?? 0;
    if (STATE_FACTS[state].needsPerson === true) left.forPerson += count;
    else if (state !== 'done' && !(filtered && NOT_ATTEMPTED_ACCOUNTS.includes(state))) left.forLaterRun += count;
  }
  for (const states of Object.values(counts.items)) {
    for (const state of ITEM_STATES) {
      const count = states[state] ?? 0;
      if (ITEMS_FOR_A_PERSON.includes(state)) left.forPerson += count;
      else if (state !== 'done' && !(filtered && state === 'pending')) left.forLaterRun += count;
    }
  }
  return left;
}

/** Accounts a filtered run may leave alone on purpose: not sent yet, or waiting for processing. */
const NOT_ATTEMPTED_ACCOUNTS: readonly AccountState[] = ['staged', 'scheduled', 'processed'];

/**
 * The exit code of a push (README "Exit codes"), from why the run stopped and what the ledger holds: 0 only when every
 * account of the state directory is done with all its records, with or without --no-wait (a --no-wait run that leaves
 * accounts processing on the service exits 1, as `migrate status` does: the cut-over is not finished); 5 when anything
 * left needs a person, whatever else waits. A run stopped early (the wait's limit, --max-errors) leaves work for a
 * later run. `rowsNotSent`: rows of the export outside any account, named at the end: a person fixes the export.
 */
export function exitCodeOf(reason: StopReason, counts: LedgerCounts, filtered = false, rowsNotSent = 0): number {
  if (reason === 'interrupted') return ExitCode.interrupted;
  if (reason === 'fatal') return ExitCode.fatal;
  const left = leftIn(counts, filtered);
  const stoppedEarly = reason === 'wait_timeout' || reason === 'max_errors' ? 1 : 0;
  return exitCodeOfLeft({ forPerson: left.forPerson + rowsNotSent, forLaterRun: left.forLaterRun + stoppedEarly });
}

/**
 * A runner sharing a PostgreSQL ledger (shared-feed.ts): its result counts the whole ledger, every runner's accounts,
 * once its own writes have landed, as a state directory's does; a ledger not shared leaves the result as it is.
 */
export async function settleShared<
  R extends { reason: StopReason; counts: LedgerCounts; exitCode: number; filtered: boolean },
>(shared: { sync(): Promise<void>; counts(): Promise<LedgerCounts> } | undefined, result: R): Promise<R> {
  if (shared === undefined) return result;
  await shared.sync();
  const counts = await shared.counts();
  return { ...result, counts, exitCode: exitCodeOf(result.reason, counts, result.filtered) };
}
