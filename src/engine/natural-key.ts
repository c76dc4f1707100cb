import type { HistoricalStatement, Note, PaymentInstructionRequest, Transaction } from '../schema/index.js';
import type { ItemKind } from '../ledger/index.js';

// The natural key of a post-import record: what the service itself deduplicates it by (spec
// "Create notes": body and created_at; transactions by transaction_id with
// check_previously_added; statements by statement_id), so that one ledger item is one record
// on the platform. A payment instruction is keyed by its reference at the vendor.

const SEP = '\u001f';

export function naturalKeyOf(kind: ItemKind, value: unknown): string {
  switch (kind) {
    case 'note': {
      const note = value as Note;
      const paths = (note.document_paths ?? []).map((path) => path.document_path).join(SEP);
      return [note.body ?? '', note.created_at ?? '', paths].join(SEP);
    }
    case 'transaction':
      return (value as Transaction).transaction_id;
    case 'statement':
      return (value as HistoricalStatement).statement_id;
    case 'payment_instruction':
      return (value as PaymentInstructionRequest).reference;
  }
}
