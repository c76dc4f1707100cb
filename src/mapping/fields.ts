import type { FileKind } from '../sources/kinds.js';

// The documented columns of each file kind (docs/export-format.md "Columns") and the type
// each cell is coerced to ("Values"). A column named here fills the payload field of the same
// dotted path; any other column is an error unless the mapping file ignores it (the spec: only
// documented fields may be sent).

export type FieldType =
  | 'string'
  | 'boolean'
  | 'integer'
  | 'number'
  | 'amount'
  | 'minor-amount'
  | 'date'
  | 'datetime'
  | 'phone'
  | 'json'
  | 'json-array'
  | 'document-paths';

const common = { external_account_number: 'string', import_supplier: 'string' } as const satisfies Record<
  string,
  FieldType
>;

const accounts = {
  ...common,
  unknown_occupier: 'boolean',
  billing_email: 'string',
  billing_name: 'string',
  billing_sub_name: 'string',
  billing_customer_reference: 'string',
  'billing_address.name': 'string',
  'billing_address.organization': 'string',
  'billing_address.street_address': 'string',
  'billing_address.locality': 'string',
  'billing_address.postal_code': 'string',
  'billing_address.country': 'string',
  'billing_address.delivery_point_identifier': 'string',
  'billing_address.structured_street_address': 'json',
  'account_billing_options.period_length': 'string',
  'account_billing_options.period_start_day': 'integer',
  'account_billing_options.period_start_month': 'integer',
  'account_billing_options.use_industry_billing': 'boolean',
  account_type: 'string',
  date_of_sale: 'date',
  sales_channel: 'string',
  sales_subchannel: 'string',
  communication_preference: 'string',
  document_accessibility: 'string',
  transfer_balance: 'amount',
  operations_team_name: 'string',
  metadata: 'json-array',
  ledgers: 'json-array',
  statements: 'json-array',
  notes: 'json-array',
  // JSON records only (docs/export-format.md: an accounts record in JSON may carry them inline).
  customers: 'json-array',
  supply_addresses: 'json-array',
} as const satisfies Record<string, FieldType>;

const customers = {
  ...common,
  given_name: 'string',
  family_name: 'string',
  email: 'string',
  mobile: 'phone',
  landline: 'phone',
  date_of_birth: 'date',
  title: 'string',
  salutation: 'string',
  'customer_preferences.opted_into_sms': 'boolean',
  'customer_preferences.opted_into_recommended': 'boolean',
  'customer_preferences.opted_into_updates': 'boolean',
  'customer_preferences.opted_into_third_parties': 'boolean',
  'customer_preferences.opted_into_offers': 'boolean',
  'customer_preferences.is_user_psr_consent_obtained': 'boolean',
} as const satisfies Record<string, FieldType>;

const supplyAddresses = {
  ...common,
  primary_place_of_residence_since: 'date',
  customer_at_supply_address_from_date: 'date',
  supply_postcode: 'string',
  supply_address1: 'string',
} as const satisfies Record<string, FieldType>;

const notes = {
  ...common,
  body: 'string',
  created_at: 'datetime',
  is_pinned: 'boolean',
  unpin_at: 'datetime',
  document_paths: 'document-paths',
} as const satisfies Record<string, FieldType>;

const transactions = {
  ...common,
  transaction_id: 'string',
  transaction_date: 'date',
  amount: 'amount',
  type: 'string',
  reason: 'string',
  reference: 'string',
  payment_type: 'string',
  display_note: 'string',
  note: 'string',
  product_code: 'string',
  line_items: 'json-array',
  tax_items: 'json-array',
} as const satisfies Record<string, FieldType>;

const statements = {
  ...common,
  statement_id: 'string',
  bill_period_from_date: 'date',
  bill_period_to_date: 'date',
  issued_date: 'date',
  number: 'string',
  gross_amount: 'minor-amount',
  statement_path: 'string',
} as const satisfies Record<string, FieldType>;

const paymentInstructions = {
  ...common,
  vendor: 'string',
  reference: 'string',
  type: 'string',
} as const satisfies Record<string, FieldType>;

export const FIELDS: Record<FileKind, Readonly<Record<string, FieldType>>> = {
  accounts,
  customers,
  supply_addresses: supplyAddresses,
  notes,
  transactions,
  statements,
  payment_instructions: paymentInstructions,
};

/** Objects whose dotted fields a JSON record may give nested (`{"billing_address": {"country": "GB"}}`). */
export const NESTED_OBJECTS: ReadonlySet<string> = new Set([
  'billing_address',
  'account_billing_options',
  'customer_preferences',
]);

export function fieldType(kind: FileKind, field: string): FieldType | undefined {
  return Object.hasOwn(FIELDS[kind], field) ? FIELDS[kind][field] : undefined;
}

/** Fields that hold amounts or other numbers a mapping file may scale (pence -> pounds). */
export function isScalable(kind: FileKind, field: string): boolean {
  const type = fieldType(kind, field);
  return type === 'amount' || type === 'number';
}
