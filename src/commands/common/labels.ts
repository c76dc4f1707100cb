import type { AccountState, ItemKind } from '../../ledger/index.js';

// The words a person reads for the ledger's account states and post-import record kinds (docs/glossary.md): one
// table each, which push's summary, status, the report's page and push's progress all print.

/** Account states as the output says them, in the order status lists them: done first, those needing a person last. */
export const STATE_LABELS: Readonly<Record<AccountState, string>> = {
  done: 'done',
  processed: 'imported, records left',
  scheduled: 'waiting for processing',
  creating: 'create unconfirmed',
  staged: 'not sent yet',
  unresolved: 'records wait for their account',
  invalid: 'held back: invalid (fix the export)',
  errored: 'ERRORED on the platform',
};

/** Post-import record kinds as the output says them. */
export const KIND_LABELS: Readonly<Record<ItemKind, string>> = {
  note: 'notes',
  transaction: 'transactions',
  statement: 'statements',
  payment_instruction: 'payment instructions',
};
