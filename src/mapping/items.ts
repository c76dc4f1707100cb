import type {
  HistoricalStatement,
  Note,
  PaymentInstructionRequest,
  Transaction,
  ValidationIssue,
} from '../schema/index.js';
import {
  validateHistoricalStatementsRequest,
  validateNotesRequest,
  validatePaymentInstructionRequest,
  validateTransactionsRequest,
  withoutTenantFields,
} from '../schema/index.js';
import type { FileKind } from '../sources/kinds.js';
import { ExportCode } from './issue-codes.js';
import {
  originOf,
  recordIssue,
  REQUEST_BODIES,
  requestIssues,
  type JoinContext,
  type SourcedRecord,
} from './sourced-record.js';
import { columnOfPath, fieldOrigin } from './locate.js';
import { collapseNotes } from './note-identity.js';
import type { MappedItem, SourceIssue } from './types.js';

// Post-import records of one account -> items, each validated as part of the request that will
// carry it (so a transaction_id repeated on two rows is caught as in one request: spec
// "Create transactions", docs/service.md "Transactions" duplicate_transaction_ids).

export interface ItemSet {
  notes: Array<MappedItem<Note>>;
  transactions: Array<MappedItem<Transaction>>;
  statements: Array<MappedItem<HistoricalStatement>>;
  paymentInstructions: Array<MappedItem<PaymentInstructionRequest>>;
  /** Note rows identical to an earlier one of the account, counted once (note-identity.ts). */
  duplicateNotes: number;
}

/** An account's records, by kind, each list in file order: the join reads each kind once. */
export type RecordsByKind = Partial<Record<FileKind, SourcedRecord[]>>;

export function recordsByKind(records: SourcedRecord[]): RecordsByKind {
  const byKind: RecordsByKind = {};
  for (const staged of records) (byKind[staged.record.kind] ??= []).push(staged);
  return byKind;
}

function toItems<T>(records: SourcedRecord[] | undefined, number: string): Array<MappedItem<T>> {
  if (!records) return [];
  return records.map((staged) => ({
    value: staged.record.fields as T,
    origin: originOf(staged),
    issues:
      staged.record.issues.length === 0 ? [] : staged.record.issues.map((issue) => recordIssue(staged, number, issue)),
  }));
}

/** Puts the request's issues on the items they concern; attrs become relative to the item. */
function attach<T>(
  items: Array<MappedItem<T>>,
  listField: string | undefined,
  issues: ValidationIssue[],
  number: string,
  context: JoinContext,
  offset = 0,
): void {
  for (const issue of issues) {
    const parts = issue.attr === '' ? [] : issue.attr.split('.');
    let index = offset;
    let rest = parts;
    if (listField !== undefined && parts[0] === listField && parts.length > 1) {
      index = Number(parts[1]);
      rest = parts.slice(2);
    }
    const item = items[index];
    if (!item) continue;
    const attr = rest.join('.');
    if (
      item.issues.some(
        (known) =>
          known.attr !== undefined && attr !== '' && (attr === known.attr || attr.startsWith(`${known.attr}.`)),
      )
    )
      continue;
    const held = fieldOrigin(item.origin, rest);
    const column =
      held?.column ?? (rest.length > 0 ? columnOfPath(item.origin.file, rest, context.columnOf) : undefined);
    const located: SourceIssue = {
      file: held?.file ?? item.origin.file,
      line: held?.line ?? item.origin.line,
      ...(column === undefined ? {} : { column }),
      ...(attr === '' ? {} : { attr }),
      externalAccountNumber: number,
      code: issue.code,
      message: issue.detail,
    };
    item.issues.push(located);
  }
}

/**
 * A payment instruction carries its own import_supplier (spec, Create payment instruction); a record without one is
 * its account's, as every record of an account is (the account's cell, else the configured supplier), never a data
 * error of its own.
 */
function withAccountSupplier(
  item: MappedItem<PaymentInstructionRequest>,
  supplier: string | undefined,
): MappedItem<PaymentInstructionRequest> {
  if (supplier === undefined || item.value.import_supplier !== undefined) return item;
  return { ...item, value: { ...item.value, import_supplier: supplier } };
}

export function itemsOf(
  number: string,
  supplier: string | undefined,
  records: RecordsByKind,
  context: JoinContext,
): ItemSet {
  const set: ItemSet = {
    notes: toItems<Note>(records.notes, number),
    transactions: toItems<Transaction>(records.transactions, number),
    statements: toItems<HistoricalStatement>(records.statements, number),
    paymentInstructions: toItems<PaymentInstructionRequest>(records.payment_instructions, number).map((item) =>
      withAccountSupplier(item, supplier),
    ),
    duplicateNotes: 0,
  };
  set.duplicateNotes = collapseNotes(set.notes, number);
  if (supplier === undefined) {
    for (const list of [set.notes, set.transactions, set.statements, set.paymentInstructions] as Array<
      Array<MappedItem<unknown>>
    >) {
      const first = list[0];
      first?.issues.push({
        ...first.origin,
        attr: 'import_supplier',
        externalAccountNumber: number,
        code: ExportCode.missingImportSupplier,
        message:
          'No import supplier: give --supplier, set MIGRATE_SUPPLIER or import_supplier in migrate.config.json, ' +
          'or fill the import_supplier column.',
      });
    }
  }
  const values = <T>(items: Array<MappedItem<T>>): T[] => items.map((item) => item.value);
  const request = (list: string, items: Array<MappedItem<unknown>>) => ({
    import_supplier: supplier,
    external_account_number: number,
    [list]: values(items),
  });
  const tenant = context.tenantFields;
  if (set.notes.length > 0) {
    const body = request('notes', set.notes);
    const spec = validateNotesRequest(withoutTenantFields('notes', body, tenant));
    attach(set.notes, 'notes', requestIssues(context, REQUEST_BODIES.notes, body, spec), number, context);
  }
  if (set.transactions.length > 0) {
    const body = request('transactions', set.transactions);
    const spec = validateTransactionsRequest(withoutTenantFields('transactions', body, tenant), {
      today: context.today,
    });
    const issues = requestIssues(context, REQUEST_BODIES.transactions, body, spec);
    attach(set.transactions, 'transactions', issues, number, context);
  }
  if (set.statements.length > 0) {
    const body = request('statements', set.statements);
    const spec = validateHistoricalStatementsRequest(withoutTenantFields('statements', body, tenant));
    attach(
      set.statements,
      'statements',
      requestIssues(context, REQUEST_BODIES.statements, body, spec),
      number,
      context,
    );
  }
  set.paymentInstructions.forEach((item, index) => {
    const spec = validatePaymentInstructionRequest(withoutTenantFields('payment_instruction', item.value, tenant));
    const issues = requestIssues(context, REQUEST_BODIES.paymentInstruction, item.value, spec);
    attach(set.paymentInstructions, undefined, issues, number, context, index);
  });
  if (!context.multiplePaymentInstructions) onePaymentInstruction(set.paymentInstructions, number);
  return set;
}

/**
 * The platform keeps one active payment instruction per account and refuses a second
 * (docs/service.md "Payment instructions"): every row after the first is an error at its own
 * file and line, so the account is held back until the export says which instruction is current.
 */
function onePaymentInstruction(items: Array<MappedItem<PaymentInstructionRequest>>, number: string): void {
  const [first, ...rest] = items;
  if (first === undefined) return;
  for (const item of rest) {
    item.issues.push({
      ...item.origin,
      externalAccountNumber: number,
      code: ExportCode.multiplePaymentInstructions,
      message:
        `account ${number} already has a payment instruction (${first.origin.file} line ` +
        `${first.origin.line}); the platform keeps one active instruction per account: keep only the current one ` +
        `(or set "multiple_payment_instructions": true in the mapping file if this platform deployment accepts ` +
        `several).`,
    });
  }
}
