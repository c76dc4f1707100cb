import type { Transaction } from '../schema/index.js';
import { ExportCode } from './issue-codes.js';
import { columnOfPath } from './locate.js';
import type { JoinContext } from './sourced-record.js';
import type { MappedItem } from './types.js';

// The service's open statement period, when the command is told its first day (spec "Transaction": a transaction's
// date "must lie in the currently open statement period"; "Create transactions": force_add_to_current_statement).
// A transaction sent through the transactions endpoint dated before it is refused by the service, or, where the
// migration declares forcing, moved into it: its date changed, a description added, a note pinned to the account.
// History belongs in the account payload's ledgers instead (docs/from-a-legacy-system.md "History in ledgers").

const ISO_DATE = /^\d{4}-\d{2}-\d{2}$/;

/**
 * Transactions dated before the open period: without forcing, an error at each one's line; with forcing, counted
 * (validate warns with the count). Returns the count of those the service would move.
 */
export function checkOpenPeriod(
  transactions: Array<MappedItem<Transaction>>,
  number: string,
  context: JoinContext,
): number {
  const period = context.openPeriod;
  if (period === undefined) return 0;
  let moved = 0;
  for (const item of transactions) {
    const date = (item.value as { transaction_date?: unknown }).transaction_date;
    if (typeof date !== 'string' || !ISO_DATE.test(date) || date >= period.start) continue;
    if (period.force) {
      moved += 1;
      continue;
    }
    const column = columnOfPath(item.origin.file, ['transaction_date'], context.columnOf);
    item.issues.push({
      ...item.origin,
      ...(column === undefined ? {} : { column }),
      attr: 'transaction_date',
      externalAccountNumber: number,
      code: ExportCode.outsideOpenPeriod,
      message:
        `transaction_date ${date} is before the open statement period (from ${period.start}): the service refuses ` +
        "it. Send an account's history in its payload's ledgers, and through the transactions endpoint only what " +
        'happened after the extract; or declare "force_add_to_current_statement": true under mapping.transactions ' +
        'to have the service move it into the period (its date changed, a note pinned to the account).',
    });
  }
  return moved;
}
