import { Code } from './codes.js';
import type { ValidationIssue } from './issues.js';
import { isCalendarDate } from './primitives.js';
import { asList, asNumber, asObject, asString, attrOf, type Raw } from './read.js';
import { noteRules, statementRules, transactionListRules } from './rules.js';

// Account-level cross-field rules (docs/service.md "Validation rules the platform applies"). Input is the raw payload.

const AMOUNT_TOLERANCE = 0.005;

function issue(attr: string, code: string, detail: string): ValidationIssue {
  return { attr, code, detail };
}

export function accountRules(payload: unknown, today: string): ValidationIssue[] {
  const raw = asObject(payload);
  if (!raw) return [];
  const issues = [...requiredParts(raw), ...customerRules(raw), ...billingRules(raw)];
  if (raw['ledgers'] !== undefined) issues.push(...ledgerRules(raw, today));
  if (raw['statements'] !== undefined) issues.push(...statementRules(raw['statements'], 'statements'));
  asList(raw['notes']).forEach((note, index) => issues.push(...noteRules(note, attrOf('notes', index))));
  return issues;
}

/** Account types that the platform refuses with a supply address (portfolio_lead_has_a_supply_address, ...). */
const WITHOUT_SUPPLY_ADDRESS = new Set(['PORTFOLIO_LEAD', 'SYSTEM']);
/** Account types without an occupant: like unknown_occupier, they need no customer. */
const WITHOUT_CUSTOMER = new Set(['PORTFOLIO_LEAD', 'SYSTEM', 'DOMESTIC_VACANT', 'BUSINESS_VACANT']);

/**
 * The parts an energy account cannot be created without, which no endpoint can add later: a customer (unless the
 * occupier is unknown or the account type has none) and a supply address (unless the type may not have one). An
 * account sent without them is refused, never created half (docs/service.md "Validation rules the platform applies").
 */
function requiredParts(raw: Raw): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  const type = asString(raw['account_type']) ?? '';
  if (asList(raw['customers']).length === 0 && raw['unknown_occupier'] !== true && !WITHOUT_CUSTOMER.has(type))
    issues.push(
      issue(
        'customers',
        Code.required,
        'An account needs at least one customer (unless unknown_occupier is true); none was given.',
      ),
    );
  if (asList(raw['supply_addresses']).length === 0 && !WITHOUT_SUPPLY_ADDRESS.has(type))
    issues.push(
      issue('supply_addresses', Code.required, 'An account needs at least one supply address; none was given.'),
    );
  return issues;
}

/** Whether a customer's name may read "The Occupier": a cheap test before the exact one (this runs per customer). */
const MAY_BE_THE_OCCUPIER = /occupier\s*$/i;

function customerRules(raw: Raw): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  const customers = asList(raw['customers']);
  if (raw['unknown_occupier'] === true && customers.length > 0) {
    issues.push(
      issue('customers', Code.customerWithUnknownOccupier, 'An unknown-occupier account may not have customers.'),
    );
  }
  const domestic = (asString(raw['account_type']) ?? '').startsWith('DOMESTIC');
  customers.forEach((customer, index) => {
    const person = asObject(customer) ?? {};
    const familyName = asString(person['family_name']);
    if (domestic && !familyName) {
      issues.push(
        issue(
          attrOf('customers', index, 'family_name'),
          Code.customerFamilyNameRequired,
          'A customer of a domestic account needs a family name.',
        ),
      );
    }
    const givenName = asString(person['given_name']);
    const mayBe = MAY_BE_THE_OCCUPIER.test(familyName ?? '') || MAY_BE_THE_OCCUPIER.test(givenName ?? '');
    if (mayBe && [givenName, familyName].filter(Boolean).join(' ').trim().toLowerCase() === 'the occupier') {
      issues.push(
        issue(
          attrOf('customers', index),
          Code.customerMayNotBeNamedTheOccupier,
          'A customer may not be named "The Occupier"; use unknown_occupier instead.',
        ),
      );
    }
  });
  return issues;
}

function billingRules(raw: Raw): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  if ((asString(raw['billing_email']) ?? '').includes('blackhole+')) {
    issues.push(
      issue('billing_email', Code.billingEmailNotValid, 'A blackhole+ address is not a valid billing e-mail.'),
    );
  }
  const address = asObject(raw['billing_address']);
  if (address && address['street_address'] !== undefined && address['structured_street_address'] != null) {
    issues.push(
      issue(
        'billing_address.structured_street_address',
        Code.streetAddressAndStructured,
        'Send street_address or structured_street_address, not both.',
      ),
    );
  }
  const options = asObject(raw['account_billing_options']);
  if (options) {
    const periodData =
      options['period_length'] != null || options['period_start_day'] != null || options['period_start_month'] != null;
    if (options['use_industry_billing'] === true && periodData) {
      issues.push(
        issue(
          'account_billing_options',
          Code.industryBillingWithPeriodData,
          'Industry billing cannot be combined with period_length, period_start_day or period_start_month.',
        ),
      );
    } else if (options['use_industry_billing'] !== true && options['period_length'] === undefined) {
      issues.push(
        issue(
          'account_billing_options.period_length',
          Code.periodDataRequired,
          'Without industry billing, period_length is required.',
        ),
      );
    }
    if (options['period_length'] === 'QUARTERLY' && options['period_start_month'] == null) {
      issues.push(
        issue(
          'account_billing_options.period_start_month',
          Code.periodStartMonthRequired,
          'A QUARTERLY period needs period_start_month.',
        ),
      );
    }
  }
  return issues;
}

function ledgerRules(raw: Raw, today: string): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  const ledgers = asList(raw['ledgers']);
  const codes = new Set<string>();
  const allTransactions: Listed[] = [];
  ledgers.forEach((entry, index) => {
    const ledger = asObject(entry) ?? {};
    const at = attrOf('ledgers', index);
    const code = asString(ledger['ledger_code']);
    if (code !== undefined && codes.has(code))
      issues.push(
        issue(
          attrOf(at, 'ledger_code'),
          Code.duplicateLedgerEntriesFound,
          `ledger_code ${code} appears more than once.`,
        ),
      );
    if (code !== undefined) codes.add(code);
    const current = asList(ledger['current_statement_transactions']).map((item, i) => ({
      item,
      attr: attrOf(at, 'current_statement_transactions', i),
    }));
    const historical = asList(ledger['historical_statement_transactions']).map((item, i) => ({
      item,
      attr: attrOf(at, 'historical_statement_transactions', i),
    }));
    issues.push(...closingDateRules(ledger, at, current, historical));
    allTransactions.push(...current, ...historical);
  });
  issues.push(...transactionListRules(allTransactions, today), ...transferBalanceRules(raw, ledgers));
  return issues;
}

/** A transaction of a ledger's list, with its path. */
interface Listed {
  item: unknown;
  attr: string;
}

/** A ledger's statement transactions against its last_statement_closing_date. */
function closingDateRules(ledger: Raw, at: string, current: Listed[], historical: Listed[]): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  const closing = asString(ledger['last_statement_closing_date']);
  const closingDate = closing !== undefined && isCalendarDate(closing) ? closing : undefined;
  if (historical.length > 0 && closing === undefined) {
    issues.push(
      issue(
        attrOf(at, 'last_statement_closing_date'),
        Code.historicalTransactionsRequireClosingDate,
        'Historical statement transactions need last_statement_closing_date.',
      ),
    );
  }
  if (!closingDate) return issues;
  for (const { item, attr } of current) {
    const date = asString(asObject(item)?.['transaction_date']);
    if (date && isCalendarDate(date) && date <= closingDate) {
      issues.push(
        issue(
          attrOf(attr, 'transaction_date'),
          Code.currentTransactionBeforeClosingDate,
          `A current statement transaction (${date}) must be after last_statement_closing_date ${closingDate}.`,
        ),
      );
    }
  }
  for (const { item, attr } of historical) {
    const date = asString(asObject(item)?.['transaction_date']);
    if (date && isCalendarDate(date) && date > closingDate) {
      issues.push(
        issue(
          attrOf(attr, 'transaction_date'),
          Code.historicalTransactionAfterClosingDate,
          `A historical statement transaction (${date}) must not be after last_statement_closing_date ` +
            `${closingDate}.`,
        ),
      );
    }
  }
  return issues;
}

/** transfer_balance is the sum of the ledger balances, when every ledger gives one. */
function transferBalanceRules(raw: Raw, ledgers: unknown[]): ValidationIssue[] {
  const transferBalance = asNumber(raw['transfer_balance']);
  const balances = ledgers.map((entry) => asNumber(asObject(entry)?.['ledger_balance']));
  if (transferBalance === undefined || balances.length === 0 || !balances.every((balance) => balance !== undefined))
    return [];
  const sum = balances.reduce<number>((total, balance) => total + (balance ?? 0), 0);
  if (Math.abs(sum - transferBalance) <= AMOUNT_TOLERANCE) return [];
  return [
    issue(
      'transfer_balance',
      Code.ledgerBalancesNotEqualToTransferBalance,
      `transfer_balance ${transferBalance} is not the sum of the ledger balances (${sum.toFixed(2)}).`,
    ),
  ];
}
