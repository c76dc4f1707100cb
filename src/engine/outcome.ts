import { ExitCode } from '../errors.js';
import type { LedgerCounts } from '../ledger/index.js';
import type { StopReason } from './events.js';

/**
 * The exit code of a push (README "Exit codes"), from why the run stopped and what the ledger
 * holds: 0 only when every account of the state directory is done with all its records, with or
 * without --no-wait (a --no-wait run that leaves accounts processing on the service exits 1, as
 * `migrate status` does: the cut-over is not finished). A filtered run (--limit, --accounts,
 * --only) leaves other work untouched on purpose: work not yet attempted (staged accounts, pending
 * records, accounts waiting for processing) does not count against it; failures anywhere still do.
 */
export function exitCodeOf(reason: StopReason, counts: LedgerCounts, filtered = false): number {
  if (reason === 'interrupted') return ExitCode.interrupted;
  if (reason === 'fatal') return ExitCode.fatal;
  if (reason === 'wait_timeout' || reason === 'max_errors') return ExitCode.someFailed;
  const accounts = counts.accounts;
  const notAttempted = filtered ? 0 : (accounts.staged ?? 0);
  const left =
    (accounts.invalid ?? 0) +
    (accounts.errored ?? 0) +
    (accounts.unresolved ?? 0) +
    (accounts.creating ?? 0) +
    notAttempted;
  const waiting = !filtered ? (accounts.scheduled ?? 0) + (accounts.processed ?? 0) : 0;
  let items = 0;
  for (const states of Object.values(counts.items)) {
    items += (states.failed ?? 0) + (states.unknown ?? 0) + (states.held ?? 0) + (states.sending ?? 0);
    if (!filtered) items += states.pending ?? 0;
  }
  return left + waiting + items > 0 ? ExitCode.someFailed : ExitCode.ok;
}

/**
 * A runner sharing a PostgreSQL ledger (shared-feed.ts): its result counts the whole ledger, every runner's accounts,
 * once its own writes have landed, as a state directory's does; a ledger not shared leaves the result as it is.
 */
export async function settleShared<R extends { reason: StopReason; counts: LedgerCounts; exitCode: number }>(
  shared: { sync(): Promise<void>; counts(): Promise<LedgerCounts> } | undefined,
  result: R,
  filtered: boolean,
): Promise<R> {
  if (shared === undefined) return result;
  await shared.sync();
  const counts = await shared.counts();
  return { ...result, counts, exitCode: exitCodeOf(result.reason, counts, filtered) };
}
