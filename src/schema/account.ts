import { z } from 'zod';
import { noteSchema } from './note.js';
import { amount, date, email, metadata, phone } from './primitives.js';
import { accountStatementSchema } from './statement.js';
import { transactionSchema } from './transaction.js';

// Enumerations the real platform documents (docs/service.md "Validation rules the platform applies"); the spec lists
// one value of each as occurring and says the rest is "not shown".
export const ACCOUNT_TYPES = [
  'DOMESTIC',
  'BUSINESS',
  'MANAGED',
  'PORTFOLIO_LEAD',
  'DOMESTIC_VACANT',
  'BUSINESS_VACANT',
  'DOMESTIC_OCCUPIER',
  'BUSINESS_OCCUPIER',
  'SYSTEM',
  'DOMESTIC_THIRD_PARTY_BILLED',
  'BUSINESS_THIRD_PARTY_BILLED',
] as const;
export const COMMUNICATION_PREFERENCES = ['ONLINE', 'PRINT'] as const;
export const DOCUMENT_ACCESSIBILITY = ['LARGE_PRINT', 'BRAILLE', 'SPOKEN'] as const;
export const PERIOD_LENGTHS = ['MONTHLY', 'QUARTERLY'] as const;

const text = (max: number) => z.string().min(1).max(max);

export const customerPreferencesSchema = z.strictObject({
  opted_into_sms: z.boolean().optional(),
  opted_into_recommended: z.boolean().optional(),
  opted_into_updates: z.boolean().optional(),
  opted_into_third_parties: z.boolean().optional(),
  opted_into_offers: z.boolean().optional(),
  is_user_psr_consent_obtained: z.boolean().optional(),
});

export const customerSchema = z.strictObject({
  given_name: text(255).optional(),
  family_name: text(255).optional(),
  email: email.optional(),
  mobile: phone.optional(),
  landline: phone.optional(),
  date_of_birth: date.optional(),
  title: text(20).optional(),
  salutation: text(128).optional(),
  customer_preferences: customerPreferencesSchema.optional(),
});

export const billingAddressSchema = z.strictObject({
  name: text(512).optional(),
  organization: text(512).optional(),
  street_address: text(1024).optional(),
  locality: text(512).optional(),
  postal_code: text(512).optional(),
  country: z.string().regex(/^[A-Z]{2}$/, 'country must be an ISO 3166-1 alpha-2 code such as GB.'),
  delivery_point_identifier: text(11).optional(),
  // Structure "not shown" in the spec: any JSON object, or null.
  structured_street_address: z.record(z.string(), z.unknown()).nullable().optional(),
});

export const accountBillingOptionsSchema = z.strictObject({
  period_length: z.enum(PERIOD_LENGTHS).optional(),
  period_start_day: z.number().int().min(1).max(28).optional(),
  period_start_month: z.number().int().min(1).max(12).nullable().optional(),
  use_industry_billing: z.boolean().optional(),
});

export const ledgerSchema = z.strictObject({
  ledger_code: text(255),
  last_statement_balance: amount.optional(),
  last_statement_closing_date: date.optional(),
  ledger_balance: amount.optional(),
  current_statement_transactions: z.array(transactionSchema).optional(),
  historical_statement_transactions: z.array(transactionSchema).optional(),
});

export const supplyAddressSchema = z.strictObject({
  primary_place_of_residence_since: date.optional(),
  customer_at_supply_address_from_date: date,
  supply_postcode: text(10),
  supply_address1: text(512),
});

/** Spec "Account payload (v2 create and validate)". Cross-field rules live in account-rules.ts. */
export const accountPayloadSchema = z.strictObject({
  import_supplier: text(255),
  external_account_number: text(128),
  unknown_occupier: z.boolean().optional(),
  customers: z.array(customerSchema).optional(),
  billing_email: email.optional(),
  billing_name: text(510).optional(),
  billing_sub_name: text(256).optional(),
  billing_customer_reference: text(256).optional(),
  billing_address: billingAddressSchema.optional(),
  account_billing_options: accountBillingOptionsSchema.optional(),
  account_type: z.enum(ACCOUNT_TYPES).optional(),
  date_of_sale: date.optional(),
  sales_channel: text(255).optional(),
  sales_subchannel: text(255).optional(),
  communication_preference: z.enum(COMMUNICATION_PREFERENCES).optional(),
  document_accessibility: z.enum(DOCUMENT_ACCESSIBILITY).optional(),
  notes: z.array(noteSchema).optional(),
  ledgers: z.array(ledgerSchema).optional(),
  transfer_balance: amount.optional(),
  statements: z.array(accountStatementSchema).optional(),
  metadata: metadata.optional(),
  operations_team_name: text(255).optional(),
  supply_addresses: z.array(supplyAddressSchema).optional(),
});

export type AccountPayload = z.infer<typeof accountPayloadSchema>;
