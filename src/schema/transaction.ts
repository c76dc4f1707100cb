import { z } from 'zod';
import { amount, date } from './primitives.js';

// Spec "Transaction": the values listed as occurring. `type` is a closed set on the real
// platform (the request is discriminated by it), so it is enforced; `reason`, `rate_band` and
// `tax_type` are tenant-specific open lists and stay free text.
export const TRANSACTION_TYPES = ['CHARGE', 'CREDIT', 'PAYMENT', 'REPAYMENT', 'SUPPLY_CHARGE'] as const;
export const PAYMENT_TYPES = [
  'DEBIT_CARD',
  'CREDIT_CARD',
  'DD_REGULAR_COLLECTION',
  'DIRECT_CREDIT',
  'DD_FIRST_COLLECTION',
  'DD_RE_PRESENTATION',
  'DD_FINAL_COLLECTION',
  'CHEQUE',
  'BACS_DEPOSIT',
  'BACS',
  'CASH',
  'BPAY',
  'EFT',
  'CARD_REFUND',
] as const;
export const TAX_UNIT_TYPES = ['PROPORTION', 'CURRENCY_PER_KWH'] as const;

export const lineItemSchema = z.strictObject({
  rate_band: z.string().min(1).max(255).optional(),
  start_date: date,
  end_date: date,
  number_of_units: amount,
  net_amount: amount,
  price_per_unit: amount.optional(),
  units: z.array(amount).optional(),
});

export const taxItemSchema = z.strictObject({
  amount,
  tax_type: z.string().min(1).max(255),
  value_taxed: amount,
  rate: amount,
  unit_type: z.enum(TAX_UNIT_TYPES),
});

export const transactionSchema = z.strictObject({
  transaction_id: z.string().min(1).max(255),
  transaction_date: date,
  amount,
  type: z.enum(TRANSACTION_TYPES),
  reason: z.string().min(1).max(255).optional(),
  reference: z.string().min(1).max(255).optional(),
  payment_type: z.enum(PAYMENT_TYPES).optional(),
  display_note: z.string().max(1000).optional(),
  note: z.string().max(1000).optional(),
  product_code: z.string().min(1).max(255).optional(),
  line_items: z.array(lineItemSchema).optional(),
  tax_items: z.array(taxItemSchema).optional(),
});

export type Transaction = z.infer<typeof transactionSchema>;
