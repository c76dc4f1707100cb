import type { Origin } from './types.js';

// The account payload's `ledgers` (spec "Account payload") carry an account's posting history, each transaction built
// from its own legacy row. A ledger or a transaction of it may name that row with the provenance keys `_file` and
// `_line` (docs/from-a-legacy-system.md "History in ledgers"): they are taken out of the payload (only documented
// fields are sent) and kept as the origin of that part of it, so that a problem inside it is named at its own row.

const TRANSACTION_LISTS = ['current_statement_transactions', 'historical_statement_transactions'] as const;

/** The provenance a JSON object carries, taken out of it; undefined when it carries none that names a row. */
function takeProvenance(object: Record<string, unknown>): Origin | undefined {
  if (!('_file' in object) && !('_line' in object)) return undefined;
  const { _file: file, _line: line } = object;
  delete object['_file'];
  delete object['_line'];
  const number = typeof line === 'string' && /^\d+$/.test(line) ? Number(line) : line;
  if (typeof file !== 'string' || file === '' || typeof number !== 'number' || !Number.isInteger(number) || number < 1)
    return undefined;
  return { file, line: number };
}

const objectOf = (value: unknown): Record<string, unknown> | undefined =>
  typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;

/**
 * Takes the provenance keys out of the payload's ledgers and their transactions (in place), adding an origin for each
 * part that names its legacy row: `ledgers.0`, `ledgers.0.historical_statement_transactions.3`, ...
 */
export function takeLedgerOrigins(payload: Record<string, unknown>, origins: Record<string, Origin>): void {
  const ledgers = payload['ledgers'];
  if (!Array.isArray(ledgers)) return;
  ledgers.forEach((entry, index) => {
    const ledger = objectOf(entry);
    if (!ledger) return;
    const at = `ledgers.${index}`;
    const own = takeProvenance(ledger);
    if (own) origins[at] = own;
    for (const list of TRANSACTION_LISTS) {
      const transactions = ledger[list];
      if (!Array.isArray(transactions)) continue;
      transactions.forEach((item, position) => {
        const transaction = objectOf(item);
        const origin = transaction ? takeProvenance(transaction) : undefined;
        if (origin) origins[`${at}.${list}.${position}`] = origin;
      });
    }
  });
}
