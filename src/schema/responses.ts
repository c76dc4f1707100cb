import { z } from 'zod';

// Response bodies as the spec gives them ("Endpoints", "Errors"). Objects are loose: the spec
// says existing endpoints may gain fields, so unknown response fields are accepted.

export const V2_STATUSES = [
  'PENDING',
  'IN_PROGRESS',
  'PROCESSED',
  'CANCELLED',
  'ERRORED',
  'DRY_RUN_SUCCEEDED',
  'DRY_RUN_ERRORED',
] as const;
export const NOTE_STATUSES = ['NOTE_CREATION_SUCCESS', 'NOTE_ALREADY_EXISTS'] as const;
export const TRANSACTION_STATUSES = [
  'TRANSACTION_ADDED_TO_ACCOUNT',
  'TRANSACTION_ALREADY_EXISTS',
  'TRANSACTION_IMPORT_SUCCESS',
  'TRANSACTION_IMPORT_ERROR',
] as const;

export type V2Status = (typeof V2_STATUSES)[number];

/**
 * The real platform names what the spec calls platform_identifier `kraken_identifier`, and
 * platform_account_number `kraken_account_number` (with `account_number`, deprecated, beside it; the
 * v2 already-imported body says `account_id`). Responses are read under either name in both dialects,
 * so an answer never fails on a name: the spec's name wins when both are there.
 */
const ALIASES: Readonly<Record<string, readonly string[]>> = {
  platform_identifier: ['kraken_identifier'],
  platform_account_number: ['kraken_account_number', 'account_number', 'account_id'],
};

function withSpecNames(value: unknown): unknown {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return value;
  const object = value as Record<string, unknown>;
  let copy: Record<string, unknown> | undefined;
  for (const [name, aliases] of Object.entries(ALIASES)) {
    if (object[name] !== undefined) continue;
    const alias = aliases.find((key) => object[key] !== undefined);
    if (alias === undefined) continue;
    copy ??= { ...object };
    copy[name] = object[alias];
  }
  return copy ?? value;
}

/** A loose response object read under the spec's names or the real platform's. */
function named<S extends z.ZodType>(schema: S) {
  return z.preprocess(withSpecNames, schema);
}

export const latestErrorSchema = z.looseObject({
  code: z.string().nullable(),
  detail: z.string().nullable(),
  domain: z.string().nullable(),
});

/** 200 of GET /v2/data-import/accounts/<supplier>/<external-identifier>/ */
export const v2StatusSchema = named(
  z.looseObject({
    // Any word: the spec's enum may grow (spec "Versioning"); a word the engine does not know is "not finished".
    status: z.string(),
    // Optional on the real platform (null until processed).
    platform_identifier: z.string().nullable().default(null),
    created_at: z.string(),
    modified_at: z.string(),
    // Optional in tenants' documents (ImportStatusResponse): absent reads as none.
    latest_error: latestErrorSchema.nullable().default(null),
  }),
);

/** 200 of GET /v1/data-import/account-transfer-status/<supplier>/<external-account-number>/ */
export const v1StatusSchema = named(
  z.looseObject({
    // Any word: the spec's UNKNOWN, COMPLETED and IN_PROGRESS, and the words tenants add (Octopus Energy France and
    // Plenitude France: PENDING, REJECTED, the industry switch of an account that exists); the platform account number
    // decides whether the account exists (docs/service.md "Status and list endpoints").
    status: z.string(),
    // Optional in tenants' documents (AccountTransferStatus requires only status): absent, or null as the list items
    // write "no account yet", reads as the spec's "empty string when no account is created yet".
    platform_account_number: z
      .string()
      .nullish()
      .transform((value) => value ?? ''),
  }),
);

/** An item of the three list endpoints. */
export const listItemSchema = named(
  z.looseObject({
    external_account_number: z.string(),
    // Tenants' documents require only external_account_number (ImportProcess): absent reads as null, as pending.
    platform_account_number: z.string().nullable().default(null),
    account_created_at: z.string().nullable().default(null),
  }),
);

const noteCreatedSchema = z.looseObject({
  // Tenants' documents require only status (CreateAccountNotesResponse).
  created_at: z.string().nullable().default(null),
  body: z.string().nullable().optional(),
  status: z.enum(NOTE_STATUSES),
});

/**
 * 201 of notes create: one element per submitted note (spec). Tenants' documents give the answer as one object
 * (CreateAccountNotesResponse); it is read as the list of that one result.
 */
export const notesCreatedSchema = z.union([
  z.array(noteCreatedSchema),
  noteCreatedSchema.transform((result) => [result]),
]);

/** 201 of transactions create. */
export const transactionsCreatedSchema = z.looseObject({
  results: z.array(
    z.looseObject({ status: z.enum(TRANSACTION_STATUSES), transaction_data: z.record(z.string(), z.unknown()) }),
  ),
});

/** 400 of transactions create when a transaction fails to import. */
export const transactionImportErrorSchema = z.looseObject({
  status: z.literal('TRANSACTION_IMPORT_ERROR'),
  error_detail: z.string(),
  transaction_data: z.record(z.string(), z.unknown()),
});

/** 201 (or 200) of historical statements create: the validated data echoed. */
export const historicalStatementsCreatedSchema = z.looseObject({
  statements: z.array(z.record(z.string(), z.unknown())),
});

/** 201 of payment instruction create. */
export const paymentInstructionCreatedSchema = named(
  z.looseObject({
    platform_account_number: z.string(),
    reference: z.string(),
  }),
);

/** 400 of create account when the account was imported before. */
export const alreadyImportedSchema = z.preprocess(
  (value) => {
    const object = withSpecNames(value);
    if (typeof object !== 'object' || object === null || Array.isArray(object)) return object;
    const record = object as Record<string, unknown>;
    return record['account_id'] === undefined && record['platform_account_number'] !== undefined
      ? { ...record, account_id: record['platform_account_number'] }
      : record;
  },
  z.looseObject({
    non_field_errors: z.looseObject({ detail: z.string(), code: z.literal('account_import_process_already_imported') }),
    account_id: z.string(),
  }),
);

/** data.<field> of the GraphQL ObtainToken mutation. */
export const obtainTokenResultSchema = z.looseObject({
  token: z.string(),
  refreshToken: z.string().nullable().optional(),
  refreshExpiresIn: z.number().nullable().optional(),
  payload: z.looseObject({ exp: z.number() }),
});

export type V2StatusRecord = z.infer<typeof v2StatusSchema>;
export type V1StatusRecord = z.infer<typeof v1StatusSchema>;
export type ListItem = z.infer<typeof listItemSchema>;
