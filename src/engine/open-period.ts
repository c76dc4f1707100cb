import type { ErrorInfo, OpenItem } from '../ledger/index.js';
import { EngineCode } from './engine-codes.js';
import { located } from './item-decision.js';

// The open statement period (spec "Transaction": a transaction_date "must lie in the currently open statement
// period"; "Create transactions": force_add_to_current_statement). Without forcing, the service refuses a transaction
// dated outside it (TRANSACTION_IMPORT_ERROR, its words naming the period); with forcing, it adds the transaction
// with its date moved into the period, a description added, and a note pinned to the account. Both are recorded
// with their own codes, so push's summary and status count them and name the period.

/** The service's words for a transaction outside the open statement period (the real platform's, and the sandbox's). */
const OUTSIDE_OPEN_PERIOD = /not within the statement\b.*\bperiod\b/i;
/** The open period as those words give it: `2019-10-01 - 2019-10-15 (OPEN)`. */
const OPEN_PERIOD = /(\d{4}-\d{2}-\d{2}) - (\d{4}-\d{2}-\d{2}) \(OPEN\)/;
/** The date a moved transaction was given, as its recorded detail says it. */
const MOVED_TO = /moved from \d{4}-\d{2}-\d{2} to (\d{4}-\d{2}-\d{2})/;

/** The code a TRANSACTION_IMPORT_ERROR is recorded under: its own where the service names the open period. */
export function importErrorCode(detail: string): string {
  return OUTSIDE_OPEN_PERIOD.test(detail) ? EngineCode.outsideOpenPeriod : EngineCode.transactionImportError;
}

/** The open statement period a refusal's or a move's recorded detail names, or undefined. */
export function openPeriodIn(detail: string): string | undefined {
  const period = OPEN_PERIOD.exec(detail);
  if (period) return `${period[1]} to ${period[2]}`;
  const moved = MOVED_TO.exec(detail);
  return moved ? `from ${moved[1]}` : undefined;
}

/**
 * A transaction the service added with another date than the one sent (force_add_to_current_statement moved it into
 * the open statement period): the outcome's note, in the service's words where it gave any; undefined when the date
 * is the one sent.
 */
export function movedIntoOpenPeriod(item: OpenItem, echoed: Record<string, unknown>): ErrorInfo | undefined {
  const stored = echoed['transaction_date'];
  let sent: unknown;
  try {
    sent = (JSON.parse(item.body) as Record<string, unknown>)['transaction_date'];
  } catch {
    return undefined;
  }
  if (typeof stored !== 'string' || typeof sent !== 'string' || stored === sent) return undefined;
  const description = typeof echoed['description'] === 'string' ? `: ${echoed['description']}` : '';
  return {
    code: EngineCode.movedIntoOpenPeriod,
    detail: `moved from ${sent} to ${stored} by the service (force_add_to_current_statement)${description}`,
    attr: 'transaction_date',
    ...located(item),
  };
}
