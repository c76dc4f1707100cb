import { openPeriodIn } from '../../engine/open-period.js';
import type { OpenPeriodCounts } from '../../ledger/index.js';

// The service's open statement period (spec "Create transactions"), as push's summary and status name it: the
// transactions it refused as dated before it, and those it moved into it where forcing was declared, with the period
// as the service's words give it.

/** The period the recorded details name, or a plain description when they name none. */
function periodOf(counts: OpenPeriodCounts): string {
  const named = counts.details.map(openPeriodIn).find((period) => period !== undefined);
  return named === undefined ? 'the open statement period' : `the open statement period (${named})`;
}

/** One line each for the transactions refused for, and moved into, the open statement period; none when neither. */
export function openPeriodLines(counts: OpenPeriodCounts | undefined): string[] {
  if (counts === undefined) return [];
  const period = periodOf(counts);
  const lines: string[] = [];
  if (counts.refused > 0)
    lines.push(
      `${counts.refused} transactions refused as dated outside ${period} (transaction_outside_open_period, the ` +
        "service's words in fix-data.csv): send history in the accounts' ledgers, or declare " +
        'force_add_to_current_statement to have the service move them into the period',
    );
  if (counts.moved > 0)
    lines.push(
      `${counts.moved} transactions moved into ${period} by the service (force_add_to_current_statement): their ` +
        `dates changed, a note pinned to each of ${counts.movedAccounts} accounts`,
    );
  return lines;
}
