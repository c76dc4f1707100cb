import type { KindTotal, MoneyTotals } from '../ledger/index.js';
import { addDecimals, parseDecimal, plainDecimal, type Decimal } from '../mapping/decimal.js';
import type { ExportEntry, MappedItem } from '../mapping/types.js';
import type { PostImportKind } from '../schema/index.js';
import { FILE_KINDS, type FileKind } from '../sources/kinds.js';

// Control totals (docs/control-totals.md): per record kind, how many records reached each stage between the legacy
// file and the platform, and the money they carry, summed exactly (decimal arithmetic on each number's text, never
// binary floating point: a million balances summed as doubles drift by pennies). The stages `shaped` (every record
// the export or the shape made) and `valid` (what push may send) are counted here as the export is read; `sent` and
// `accepted` are the ledger's (report/control-totals.ts). Pure: entries in, totals out.

export const CONTROL_STAGES = ['shaped', 'valid', 'sent', 'accepted'] as const;
export type ControlStage = (typeof CONTROL_STAGES)[number];

/**
 * The transactions an account's payload carries inside its ledgers (spec "Account payload", ledger object): counted
 * as kinds of their own beside the accounts, so that the history the ledgers carry is reconciled as the transactions
 * sent through the endpoint are.
 */
export const LEDGER_TRANSACTION_KINDS = [
  'historical_statement_transactions',
  'current_statement_transactions',
] as const;
type LedgerTransactionKind = (typeof LEDGER_TRANSACTION_KINDS)[number];

/** What the control totals count: the record kinds, and the transactions inside the accounts' ledgers after them. */
export type ControlKind = FileKind | LedgerTransactionKind;
export const CONTROL_KINDS: readonly ControlKind[] = [
  'accounts',
  ...LEDGER_TRANSACTION_KINDS,
  ...FILE_KINDS.filter((kind) => kind !== 'accounts'),
];

/**
 * The sums a kind carries, in the platform's units and sign: an account's `transfer_balance` and the sums of its
 * ledgers' `ledger_balance` and `last_statement_balance`; a transaction's (sent through the endpoint, or inside a
 * ledger) `amount` as given (positive) and `net_amount`, signed as the balance moves (payments and credits raise it,
 * charges and repayments lower it); a statement's `gross_amount` in major units (the payload carries minor units).
 */
export const MONEY_FIELDS = [
  'transfer_balance',
  'ledger_balance',
  'last_statement_balance',
  'amount',
  'net_amount',
  'gross_amount',
] as const;
export type MoneyField = (typeof MONEY_FIELDS)[number];

const TRANSACTION_MONEY: readonly MoneyField[] = ['amount', 'net_amount'];

const MONEY_OF_KIND: Partial<Record<ControlKind, readonly MoneyField[]>> = {
  accounts: ['transfer_balance', 'ledger_balance', 'last_statement_balance'],
  historical_statement_transactions: TRANSACTION_MONEY,
  current_statement_transactions: TRANSACTION_MONEY,
  transactions: TRANSACTION_MONEY,
  statements: ['gross_amount'],
};

/** The sums a kind carries (empty for customers, notes, ...). */
export const moneyFieldsOf = (kind: ControlKind): readonly MoneyField[] => MONEY_OF_KIND[kind] ?? [];

/** How a transaction type moves the balance in the platform's sign (+: the customer's credit grows). */
const BALANCE_SIGN: Record<string, 1 | -1> = {
  CREDIT: 1,
  PAYMENT: 1,
  CHARGE: -1,
  REPAYMENT: -1,
  SUPPLY_CHARGE: -1,
};

type Json = Record<string, unknown>;

const zero: Decimal = { negative: false, digits: '', exponent: 0 };

const decimalOf = (value: unknown): Decimal | undefined =>
  typeof value === 'number' && Number.isFinite(value) ? parseDecimal(String(value)) : undefined;

const negated = (value: Decimal): Decimal => ({ ...value, negative: value.digits !== '' && !value.negative });

/**
 * The money one record carries, field by field (a value that is absent or not a number is left out: its error names
 * it). `record`: an account's payload, or the body of a post-import record, as sent.
 */
export function moneyOf(kind: ControlKind, record: Json): Array<[MoneyField, Decimal]> {
  const money: Array<[MoneyField, Decimal | undefined]> = [];
  if (kind === 'accounts') {
    money.push(['transfer_balance', decimalOf(record['transfer_balance'])]);
    for (const ledger of ledgersOf(record))
      money.push(
        ['ledger_balance', decimalOf(ledger['ledger_balance'])],
        ['last_statement_balance', decimalOf(ledger['last_statement_balance'])],
      );
  } else if (moneyFieldsOf(kind) === TRANSACTION_MONEY) {
    const amount = decimalOf(record['amount']);
    const sign = BALANCE_SIGN[String(record['type'])];
    money.push(['amount', amount]);
    if (amount !== undefined && sign !== undefined) money.push(['net_amount', sign > 0 ? amount : negated(amount)]);
  } else if (kind === 'statements') {
    const minor = decimalOf(record['gross_amount']);
    if (minor !== undefined) money.push(['gross_amount', { ...minor, exponent: minor.exponent - 2 }]);
  }
  return money.filter((entry): entry is [MoneyField, Decimal] => entry[1] !== undefined);
}

const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null;
const listOf = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);

/** The ledger objects of an account's payload. */
const ledgersOf = (payload: Json): Json[] => listOf(payload['ledgers']).filter(isObject);

/** Each transaction inside an account's ledgers, with the kind it is counted as. */
function ledgerTransactionsOf(payload: Json): Array<[LedgerTransactionKind, unknown]> {
  return ledgersOf(payload).flatMap((ledger) =>
    LEDGER_TRANSACTION_KINDS.flatMap((kind) =>
      listOf(ledger[kind]).map((transaction): [LedgerTransactionKind, unknown] => [kind, transaction]),
    ),
  );
}

/** Counts and sums of one kind at one stage, added to record by record. */
export class StageTally {
  records = 0;
  readonly #sums = new Map<MoneyField, Decimal>();

  constructor(readonly kind: ControlKind) {
    for (const field of moneyFieldsOf(kind)) this.#sums.set(field, zero);
  }

  add(record: Json): void {
    this.records += 1;
    for (const [field, value] of moneyOf(this.kind, record))
      this.#sums.set(field, addDecimals(this.#sums.get(field) ?? zero, value));
  }

  /** Each sum as plain decimal text with at least two decimals (`-1234.50`). */
  money(): MoneyTotals {
    return Object.fromEntries([...this.#sums].map(([field, sum]) => [field, plainDecimal(sum, 2)]));
  }
}

const ITEM_LISTS = [
  ['notes', 'notes'],
  ['transactions', 'transactions'],
  ['statements', 'statements'],
  ['payment_instructions', 'paymentInstructions'],
] as const;

/** Tallies per kind and stage. */
class KindStages {
  readonly #stages = new Map<string, StageTally>();

  add(kind: ControlKind, stage: ControlStage, record: unknown): void {
    const key = `${kind}\u0000${stage}`;
    let tally = this.#stages.get(key);
    if (tally === undefined) this.#stages.set(key, (tally = new StageTally(kind)));
    tally.add(isObject(record) ? record : {});
  }

  /** An account's payload: the account, the transactions inside its ledgers, its customers and supply addresses. */
  addAccount(payload: Json, stage: ControlStage): void {
    this.add('accounts', stage, payload);
    for (const [kind, transaction] of ledgerTransactionsOf(payload)) this.add(kind, stage, transaction);
    for (const kind of ['customers', 'supply_addresses'] as const)
      for (const record of listOf(payload[kind])) this.add(kind, stage, record);
  }

  /** Every kind at these stages, in kind order (a kind with no record: zero). */
  totals(stages: readonly ControlStage[]): KindTotal[] {
    return CONTROL_KINDS.flatMap((kind) =>
      stages.map((stage) => {
        const tally = this.#stages.get(`${kind}\u0000${stage}`) ?? new StageTally(kind);
        return { kind, stage, records: tally.records, money: tally.money() };
      }),
    );
  }
}

/** The `shaped` and `valid` stages of every kind, counted over the entries of an export as they are read. */
export class ControlTally {
  readonly #stages = new KindStages();

  #add(kind: FileKind, record: unknown, valid: boolean): void {
    this.#stages.add(kind, 'shaped', record);
    if (valid) this.#stages.add(kind, 'valid', record);
  }

  #addAccount(payload: Json, valid: boolean): void {
    this.#stages.addAccount(payload, 'shaped');
    if (valid) this.#stages.addAccount(payload, 'valid');
  }

  /**
   * One entry: an account is valid as a whole (an account with any error, its records' included, is held back with
   * all of them); a post-import record of an account not in this export is valid on its own.
   */
  take(entry: ExportEntry): void {
    const holder = entry.kind === 'account' ? entry.account : entry.items;
    const accountValid = entry.kind === 'account' ? entry.account.issues.length === 0 : true;
    if (entry.kind === 'account') this.#addAccount(entry.account.payload, accountValid);
    for (const [kind, list] of ITEM_LISTS)
      for (const item of holder[list] as Array<MappedItem<unknown>>)
        this.#add(kind, item.value, accountValid && item.issues.length === 0);
  }

  totals(): KindTotal[] {
    return this.#stages.totals(['shaped', 'valid']);
  }
}

/** Where a record got to on the service, as the ledger knows it. */
export interface Reached {
  sent: boolean;
  accepted: boolean;
}

const KIND_OF_ITEM: Record<PostImportKind, FileKind> = {
  note: 'notes',
  transaction: 'transactions',
  statement: 'statements',
  payment_instruction: 'payment_instructions',
};

/**
 * The `sent` and `accepted` stages, counted over the ledger: an account's payload (its customers and supply
 * addresses travel inside it), and each post-import record's body as sent.
 */
export class LedgerTally {
  readonly #stages = new KindStages();

  account(payload: Json, reached: Reached): void {
    if (reached.sent) this.#stages.addAccount(payload, 'sent');
    if (reached.accepted) this.#stages.addAccount(payload, 'accepted');
  }

  item(kind: PostImportKind, body: Json, reached: Reached): void {
    if (reached.sent) this.#stages.add(KIND_OF_ITEM[kind], 'sent', body);
    if (reached.accepted) this.#stages.add(KIND_OF_ITEM[kind], 'accepted', body);
  }

  totals(): KindTotal[] {
    return this.#stages.totals(['sent', 'accepted']);
  }
}

/** Numbers that must agree and do not, one line each: a kind's records and sums from one stage to the next. */
export function controlMismatches(totals: readonly KindTotal[]): string[] {
  const lines: string[] = [];
  for (const kind of CONTROL_KINDS) {
    const at = (stage: ControlStage): KindTotal | undefined =>
      totals.find((total) => total.kind === kind && total.stage === stage);
    for (const [from, to] of STEPS) {
      const [a, b] = [at(from), at(to)];
      if (a === undefined || b === undefined) continue;
      const sums = moneyFieldsOf(kind).filter((field) => a.money[field] !== b.money[field]);
      if (a.records === b.records && sums.length === 0) continue;
      const money = sums.map((field) => `, ${field} ${a.money[field] ?? '0.00'} -> ${b.money[field] ?? '0.00'}`);
      lines.push(`${kind}: ${a.records} ${from}, ${b.records} ${to}${money.join('')} (${STEP_MEANING[to]})`);
    }
  }
  return lines;
}

const STEPS: ReadonlyArray<[ControlStage, ControlStage]> = [
  ['shaped', 'valid'],
  ['valid', 'sent'],
  ['sent', 'accepted'],
];

const STEP_MEANING: Record<ControlStage, string> = {
  shaped: '',
  valid: 'the difference is held back by its errors',
  sent: 'valid but not sent yet, or sent by an earlier export',
  accepted: 'sent but not accepted by the service: refused, or its outcome not known yet',
};
