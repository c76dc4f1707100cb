import { z } from 'zod';
import { Code } from './codes.js';
import { date, documentPath, fail } from './primitives.js';

/** Spec "Account payload" statements[]: the four fields an in-payload statement has. */
export const accountStatementSchema = z.strictObject({
  bill_period_from_date: date,
  bill_period_to_date: date,
  statement_path: documentPath.optional(),
  statement_id: z.string().min(1).max(255),
});

/**
 * gross_amount: an integer in minor units (pence, cents), as the real platform types it; the spec's
 * "number" allows it. A fraction means major units were sent (40.5 for 4050): refused.
 */
const grossAmount = z.number().check((ctx) => {
  if (!Number.isSafeInteger(ctx.value))
    fail(
      ctx,
      Code.invalidInteger,
      `${ctx.value} is not a whole number: gross_amount is an integer in minor units (pence, cents), e.g. 4050 ` +
        `for 40.50.`,
    );
});

/** Spec "Historical statement" (post-import endpoint). */
export const historicalStatementSchema = accountStatementSchema.extend({
  issued_date: date.optional(),
  number: z.string().min(1).max(255).optional(),
  gross_amount: grossAmount.optional(),
});

export type HistoricalStatement = z.infer<typeof historicalStatementSchema>;
