import { openLedgerReader } from '../../src/ledger/index.js';
import type { E2eExport } from '../e2e/export.js';
import { payloadDifferences, type ExpectedExport } from '../e2e/oracle.js';
import type { SandboxAccount } from './sandbox-child.js';

// The soak's verdict on a cell (docs/soak.md "exact"), shared by the cells of a state directory (soak.ts) and of a
// shared PostgreSQL ledger (soak-postgres.ts).

/** Differences between the sandbox's state and the export's expected outcome (empty: exact). */
export function compare(
  data: E2eExport,
  expected: ExpectedExport,
  accounts: SandboxAccount[],
  unknownPayments: Set<string>,
): string[] {
  // Every account created exactly as mapped from the whole export (customers, supply addresses, every field).
  const problems = payloadDifferences(accounts, expected);
  const byNumber = new Map(accounts.map((account) => [account.number, account]));
  const same = (a: string[], b: string[]): boolean => JSON.stringify([...a].sort()) === JSON.stringify([...b].sort());
  for (const number of data.valid) {
    const account = byNumber.get(number);
    if (!account) {
      problems.push(`${number}: not on the platform`);
      continue;
    }
    if (account.creates !== 1) problems.push(`${number}: created ${account.creates} times`);
    if (account.status !== 'PROCESSED') problems.push(`${number}: ${account.status}`);
    if (!same(account.notes, data.notes.get(number) ?? [])) problems.push(`${number}: notes ${account.notes.length}`);
    if (!same(account.transactions, data.transactions.get(number) ?? []))
      problems.push(`${number}: transactions ${account.transactions.join(' ')}`);
    if (!same(account.statements, data.statements.get(number) ?? []))
      problems.push(`${number}: statements ${account.statements.join(' ')}`);
    const reference = data.paymentInstructions.get(number);
    const expected = reference === undefined ? [] : [reference];
    const unknownAndAbsent = unknownPayments.has(number) && account.paymentInstructions.length === 0;
    if (!same(account.paymentInstructions, expected) && !unknownAndAbsent)
      problems.push(`${number}: payment instructions [${account.paymentInstructions.join(' ')}]`);
  }
  for (const number of data.failingPaymentInstructions)
    if ((byNumber.get(number)?.paymentInstructions.length ?? 0) > 0)
      problems.push(`${number}: refused instruction set up`);
  for (const number of data.invalid) if (byNumber.has(number)) problems.push(`${number}: invalid account sent`);
  for (const number of data.errored) {
    const account = byNumber.get(number);
    if (account?.status !== 'ERRORED' || account.creates !== 1)
      problems.push(`${number}: ${account?.status ?? 'absent'} after ${account?.creates ?? 0} creates`);
    else if (account.notes.length > 0) problems.push(`${number}: notes on an ERRORED account`);
  }
  const known = new Set([...data.valid, ...data.invalid, ...data.errored]);
  for (const account of accounts) if (!known.has(account.number)) problems.push(`${account.number}: extra account`);
  return problems;
}

/** Accounts whose payment instruction the ledger records `unknown` (sent, answer lost: never resent). */
export function unknownPaymentAccounts(stateDir: string): Set<string> {
  const ledger = openLedgerReader(stateDir);
  try {
    const rows = ledger.read.itemsInStates(['unknown'], { afterId: 0, limit: 100_000 });
    const accounts = new Map(ledger.read.accounts({ limit: 1_000_000 }).map((account) => [account.id, account]));
    return new Set(
      rows
        .filter((row) => row.kind === 'payment_instruction')
        .map((row) => accounts.get(row.accountId)?.externalAccountNumber ?? ''),
    );
  } finally {
    ledger.close();
  }
}
