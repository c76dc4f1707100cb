/**
 * Stable machine codes of validation problems. Where the real platform has a code
 * (docs/service.md) the same string is used; codes marked "ours" are
 * chosen here because the platform documents none for that rule.
 */
export const Code = {
  required: 'required',
  invalid: 'invalid',
  invalidChoice: 'invalid_choice',
  invalidInteger: 'invalid_integer', // DRF's code for "A valid integer is required."
  unknownField: 'unknown_field', // ours: the spec says only documented fields may be sent
  invalidDate: 'invalid_date', // ours
  invalidDatetime: 'invalid_datetime', // ours
  invalidEmail: 'invalid_email', // ours (DRF says "invalid")
  invalidPhoneNumber: 'invalid_phone_number',
  possibleTestEmailAddress: 'possible_test_email_address',
  billingEmailNotValid: 'billing_email_not_valid',
  customerWithUnknownOccupier: 'customer_with_unknown_occupier',
  customerFamilyNameRequired: 'customer_family_name_required',
  customerMayNotBeNamedTheOccupier: 'customer_may_not_be_named_the_occupier',
  invalidDocumentPath: 'invalid_document_path', // ours: a path may not leave the supplier's root
  noteBodyOrDocumentPathNotFound: 'note_body_or_document_path_not_found',
  noteUnpinAtEarlierThanCreationDate: 'note_unpin_at_earlier_than_creation_date',
  metadataHasDuplicateKeys: 'metadata_has_duplicate_keys',
  duplicateTransactionIds: 'duplicate_transaction_ids',
  missingTransactionId: 'missing_transaction_id',
  transactionInFuture: 'transaction_in_future',
  negativePaymentAmount: 'negative_payment_amount', // ours: the platform lists no code
  fieldNotAllowedForTransactionType: 'field_not_allowed_for_transaction_type', // ours
  startDateLaterThanEndDate: 'start_date_later_than_end_date',
  incorrectLineItemNetAmount: 'incorrect_line_item_net_amount',
  lineItemUnitsMustBeTwoValues: 'line_item_units_must_be_two_values',
  amountDoesNotMatchLineItems: 'ledger_transaction_amount_does_not_match_with_line_item_net_amount_and_tax_amount',
  duplicateStatementIds: 'duplicate_statement_ids', // ours, within one payload
  duplicateLedgerEntriesFound: 'duplicate_ledger_entries_found',
  currentTransactionBeforeClosingDate: 'current_statement_transaction_before_last_statement_closing_date',
  historicalTransactionAfterClosingDate: 'historical_statement_transaction_after_last_statement_closing_date',
  historicalTransactionsRequireClosingDate: 'historical_statement_transactions_require_last_statement_closing_date',
  ledgerBalancesNotEqualToTransferBalance: 'ledger_balances_not_equal_to_transfer_balance',
  industryBillingWithPeriodData: 'account_billing_options_industry_billing_with_period_data',
  periodDataRequired: 'account_billing_options_period_data_required',
  periodStartMonthRequired: 'account_billing_options_period_start_month_required',
  streetAddressAndStructured: 'fields_are_mutually_exclusive',
  // Errors that are not about one payload's shape.
  accountFailedValidation: 'account_failed_validation',
  alreadyImported: 'account_import_process_already_imported',
  migrationNotOngoing: 'import_supplier_migration_not_ongoing',
  historicalStatementAlreadyExists: 'historical_statement_already_exists',
  notFound: 'not_found',
} as const;
