/**
 * Stable codes of the problems found while reading and mapping an export, before any payload
 * rule runs (docs/export-format.md "Errors"). Payload rules use the
 * codes of src/schema/codes.ts (the platform's where it has one).
 */
export const ExportCode = {
  unknownColumn: 'unknown_column',
  wrongColumnCount: 'wrong_column_count',
  repeatedHeader: 'repeated_header',
  missingExternalAccountNumber: 'missing_external_account_number',
  externalAccountNumberNotAddressable: 'external_account_number_not_addressable',
  missingImportSupplier: 'missing_import_supplier',
  importSupplierDiffers: 'import_supplier_differs',
  duplicateExternalAccountNumber: 'duplicate_external_account_number',
  accountNotInAccountsFile: 'account_not_in_accounts_file',
  multiplePaymentInstructions: 'multiple_payment_instructions',
  conflictingNotes: 'conflicting_notes',
  duplicateCustomer: 'duplicate_customer',
  invalidBoolean: 'invalid_boolean',
  invalidNumber: 'invalid_number',
  invalidInteger: 'invalid_integer',
  tooManyDecimalPlaces: 'too_many_decimal_places',
  numberOutOfRange: 'number_out_of_range',
  numberTooPrecise: 'number_too_precise',
  invalidDate: 'invalid_date',
  ambiguousDate: 'ambiguous_date',
  invalidDatetime: 'invalid_datetime',
  invalidJson: 'invalid_json',
  invalidType: 'invalid_type',
} as const;
