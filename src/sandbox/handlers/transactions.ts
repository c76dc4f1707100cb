import {
  Code,
  DEFAULT_TRANSACTION_FLAGS,
  isContractCode,
  validateTransactionsRequest,
  type TransactionQueryFlags,
  type ValidationIssue,
} from '../../schema/index.js';
import { asList, asNumber, asObject, asString, type Raw } from '../../schema/read.js';
import type { Reply } from '../http-io.js';
import { isoWithOffset } from '../time.js';
import type { ProcessRecord, StoredTransaction } from '../records.js';
import { decodeTransactionsRequest } from '../kraken.js';
import { accountNumberOf } from '../store.js';
import {
  accountNotFound,
  decimalString,
  invalidRequest,
  supplierGate,
  supplierIssues,
  targetOf,
  withContract,
  type HandlerContext,
} from './common.js';

// Spec "Create transactions". Request-level problems get the standardized 400 body, as do a
// missing or repeated transaction_id (the platform's request-level codes, docs/service.md
// "Transactions"); another problem of one transaction gets the spec's TRANSACTION_IMPORT_ERROR
// body naming the first failing one.
// The request is atomic (the sandbox's choice; the platform documents none): if one transaction
// fails, none is added.

const TRUE = new Set(['true', '1', 'True']);
const FALSE = new Set(['false', '0', 'False']);
const ITEM_ATTR = /^transactions\.(\d+)(?:\.|$)/;
/** Problems of one transaction that the platform answers for the whole request. */
const REQUEST_LEVEL_CODES = new Set<string>([Code.missingTransactionId, Code.duplicateTransactionIds]);

function parseFlags(query: URLSearchParams): { flags: TransactionQueryFlags; issues: ValidationIssue[] } {
  const flags: TransactionQueryFlags = { ...DEFAULT_TRANSACTION_FLAGS };
  const issues: ValidationIssue[] = [];
  for (const name of ['check_previously_added', 'force_add_to_current_statement'] as const) {
    const value = query.get(name);
    if (value === null) continue;
    if (TRUE.has(value)) flags[name] = true;
    else if (FALSE.has(value)) flags[name] = false;
    else
      issues.push({
        attr: name,
        code: 'invalid',
        detail: `URL parameter ${name} must be true or false, not ${JSON.stringify(value)}.`,
      });
  }
  return { flags, issues };
}

/** The description added to a transaction moved into the open period (spec "Create transactions"). */
function movedDescription(submittedDate: string, periodStart: string): string {
  return `Moved into the open statement period (from ${periodStart}) from ${submittedDate}.`;
}

function echo(raw: Raw, stored?: StoredTransaction): Record<string, unknown> {
  const amount = asNumber(raw['amount']);
  const data: Record<string, unknown> = { ...raw, ...(amount === undefined ? {} : { amount: decimalString(amount) }) };
  if (stored?.description !== undefined) {
    data['transaction_date'] = stored.transactionDate;
    data['description'] = stored.description;
  }
  return data;
}

function importError(raw: Raw, detail: string, errors: ValidationIssue[]): Reply {
  return {
    status: 400,
    body: { status: 'TRANSACTION_IMPORT_ERROR', error_detail: detail, transaction_data: echo(raw), errors },
  };
}

type Planned = { kind: 'exists'; raw: Raw } | { kind: 'add'; raw: Raw; stored: StoredTransaction };

/** Decides every transaction before applying any; returns the first failure as a reply. */
function plan(
  context: HandlerContext,
  record: ProcessRecord,
  flags: TransactionQueryFlags,
  issues: ValidationIssue[],
): Planned[] | Reply {
  const existing = context.store.postImport(record).transactionIds ?? new Set<string>();
  const planned: Planned[] = [];
  for (const [index, item] of asList(asObject(context.body)?.['transactions']).entries()) {
    const raw = asObject(item) ?? {};
    const own = issues.filter((issue) => ITEM_ATTR.exec(issue.attr)?.[1] === String(index));
    if (own.length > 0)
      return importError(raw, `UnableToCreateTransaction - ${own.map((issue) => issue.detail).join(' ')}`, own);
    const id = asString(raw['transaction_id']) ?? '';
    if (flags.check_previously_added && existing.has(id)) {
      planned.push({ kind: 'exists', raw });
      continue;
    }
    const date = asString(raw['transaction_date']) ?? '';
    const outside = date < context.openPeriodStart;
    if (outside && !flags.force_add_to_current_statement) {
      const period = `${accountNumberOf(record)} ${context.openPeriodStart} - ${context.today} (OPEN)`;
      return importError(
        raw,
        `UnableToCreateTransaction - ${id} dated ${date} is not within the statement ${period} period`,
        [],
      );
    }
    const stored: StoredTransaction = {
      transactionId: id,
      transactionDate: outside ? context.openPeriodStart : date,
      submittedDate: date,
      amount: decimalString(asNumber(raw['amount']) ?? 0),
      type: asString(raw['type']) ?? '',
      movedIntoOpenPeriod: outside,
      ...(outside ? { description: movedDescription(date, context.openPeriodStart) } : {}),
      data: context.retainPayloads ? { ...raw } : {},
    };
    planned.push({ kind: 'add', raw, stored });
  }
  return planned;
}

/** POST /v1/data-import/transactions/create/?check_previously_added=&force_add_to_current_statement= */
export function createTransactions(received: HandlerContext): Reply {
  // The real platform takes money as decimal strings: read them into numbers, refuse JSON numbers.
  const decoded = received.dialect === 'kraken' ? decodeTransactionsRequest(received.body) : undefined;
  if (decoded && decoded.issues.length > 0) return invalidRequest(decoded.issues);
  const context = decoded ? { ...received, body: decoded.body } : received;
  const { flags, issues: flagIssues } = parseFlags(context.query);
  const supplier = asObject(context.body)?.['import_supplier'];
  const gate = supplierGate(context.store, supplier);
  if (gate) return gate;
  const spec = validateTransactionsRequest(context.body, { today: context.today });
  const judged = withContract(context, 'transactions', received.body, spec);
  const issues = [...flagIssues, ...supplierIssues(context.store, supplier), ...judged];
  // The tenant's document is read as the request is parsed: its problems refuse the whole request.
  const refused = judged.some((issue) => isContractCode(issue.code));
  if (refused || issues.some((issue) => !ITEM_ATTR.test(issue.attr) || REQUEST_LEVEL_CODES.has(issue.code)))
    return invalidRequest(issues);
  const target = targetOf(context.body);
  const record = context.store.get(target.supplier, target.externalAccountNumber, context.now);
  if (!record || record.status !== 'PROCESSED') return accountNotFound(target.supplier, target.externalAccountNumber);
  const planned = plan(context, record, flags, issues);
  if (!Array.isArray(planned)) return planned;
  const data = context.store.postImport(record);
  const transactions = (data.transactions ??= []);
  const ids = (data.transactionIds ??= new Set());
  const moved: string[] = [];
  const results = planned.map((item) => {
    if (item.kind === 'exists') return { status: 'TRANSACTION_ALREADY_EXISTS', transaction_data: echo(item.raw) };
    transactions.push(item.stored);
    ids.add(item.stored.transactionId);
    if (item.stored.movedIntoOpenPeriod) moved.push(`${item.stored.transactionId} (${item.stored.submittedDate})`);
    return { status: 'TRANSACTION_ADDED_TO_ACCOUNT', transaction_data: echo(item.raw, item.stored) };
  });
  if (moved.length > 0) {
    // Spec: with force_add_to_current_statement "a note is pinned to the account".
    (data.notes ??= []).push({
      body:
        `Imported transactions dated before the open statement period were moved to ` +
        `${context.openPeriodStart}: ${moved.join(', ')}.`,
      documentPaths: [],
      createdAt: isoWithOffset(context.now),
      createdAtGiven: false,
      isPinned: true,
      unpinAt: null,
      bySandbox: true,
    });
  }
  return { status: 201, body: { results } };
}
