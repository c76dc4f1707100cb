import type { z } from 'zod';
import {
  accountPayloadSchema,
  customerSchema,
  historicalStatementSchema,
  noteSchema,
  paymentInstructionRequestSchema,
  supplyAddressSchema,
  toValidationIssues,
  transactionSchema,
} from '../schema/index.js';
import type { FileKind } from '../sources/kinds.js';

// The spec's rule for one field of a record kind, alone: whether the field may be left out (only an optional field
// may be dropped under the mapping file's `on_invalid`), and what is wrong with one value of it. Pure.

const RECORD_SCHEMAS: Record<FileKind, z.ZodType> = {
  accounts: accountPayloadSchema,
  customers: customerSchema,
  supply_addresses: supplyAddressSchema,
  notes: noteSchema,
  transactions: transactionSchema,
  statements: historicalStatementSchema,
  payment_instructions: paymentInstructionRequestSchema,
};

interface Wrapped {
  shape?: Record<string, z.ZodType>;
  unwrap?: () => z.ZodType;
}

/** The schema of `field` (a dotted path) inside a record of `kind`; undefined where the record has no such field. */
export function fieldSchemaOf(kind: FileKind, field: string): z.ZodType | undefined {
  let node: z.ZodType | undefined = RECORD_SCHEMAS[kind];
  for (const key of field.split('.')) {
    let inner = node as Wrapped | undefined;
    while (inner !== undefined && inner.shape === undefined && typeof inner.unwrap === 'function')
      inner = inner.unwrap() as Wrapped;
    node = inner?.shape !== undefined && Object.hasOwn(inner.shape, key) ? inner.shape[key] : undefined;
    if (node === undefined) return undefined;
  }
  return node;
}

/** Whether a record of `kind` may leave `field` out (its schema takes no value). */
export function isOptionalField(kind: FileKind, field: string): boolean {
  return fieldSchemaOf(kind, field)?.safeParse(undefined).success === true;
}

/** What the spec's rule says of one value of a field: undefined when it holds, else its code and words. */
export function fieldValueProblem(schema: z.ZodType, value: unknown): { code: string; message: string } | undefined {
  const parsed = schema.safeParse(value);
  if (parsed.success) return undefined;
  const [first] = toValidationIssues(parsed.error, value);
  return first === undefined ? undefined : { code: first.code, message: first.detail };
}
