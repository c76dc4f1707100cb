import { z } from 'zod';
import { amount, date, documentPath } from './primitives.js';

/** Spec "Account payload" statements[]: the four fields an in-payload statement has. */
export const accountStatementSchema = z.strictObject({
  bill_period_from_date: date,
  bill_period_to_date: date,
  statement_path: documentPath.optional(),
  statement_id: z.string().min(1).max(255),
});

/** Spec "Historical statement" (post-import endpoint). gross_amount is a number per the spec. */
export const historicalStatementSchema = accountStatementSchema.extend({
  issued_date: date.optional(),
  number: z.string().min(1).max(255).optional(),
  gross_amount: amount.optional(),
});

export type HistoricalStatement = z.infer<typeof historicalStatementSchema>;
