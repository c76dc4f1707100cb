import { getCountries } from 'libphonenumber-js';
import { z } from 'zod';
import { DIALECTS, TENANT_FIELD_KINDS, TENANT_SCOPES, type TenantScope } from '../schema/index.js';
import { fieldType, isScalable } from './fields.js';
import { FILE_KINDS, type FileKind } from '../sources/kinds.js';
import { parseDateFormat } from './date-format.js';

// The schema of `migrate.config.json` (docs/export-format.md "The mapping file"). Every
// key is checked here, once, so that a typo in the mapping file is a configuration error naming
// the key, never a silently ignored rule.

export const ENCODINGS = ['utf8', 'utf-8', 'latin1', 'iso-8859-1', 'windows-1252', 'cp1252', 'utf-16le'] as const;

const cellValue = z.union([
  z.string(),
  z.number(),
  z.boolean(),
  z.null(),
  z.array(z.unknown()),
  z.record(z.string(), z.unknown()),
]);
const dateFormat = z.string().check((ctx) => {
  const problem = parseDateFormat(ctx.value, false).problem;
  if (problem) ctx.issues.push({ code: 'custom', input: ctx.value, message: problem });
});
const datetimeFormat = z.string().check((ctx) => {
  const problem = parseDateFormat(ctx.value, true).problem;
  if (problem) ctx.issues.push({ code: 'custom', input: ctx.value, message: problem });
});
const delimiter = z.string().min(1).max(4);
const encoding = z.enum(ENCODINGS);
const tenantFields = z
  .record(z.string().regex(/^[a-z][a-z0-9_]*$/, 'a field name such as meter_points'), z.enum(TENANT_FIELD_KINDS))
  .optional();
const tenantScopes = Object.fromEntries(TENANT_SCOPES.map((scope) => [scope, tenantFields])) as Record<
  TenantScope,
  typeof tenantFields
>;

const fileMappingShape = {
  rename: z.record(z.string(), z.string().min(1)).optional(),
  ignore: z.array(z.string()).optional(),
  constants: z.record(z.string(), cellValue).optional(),
  defaults: z.record(z.string(), cellValue).optional(),
  values: z.record(z.string(), z.record(z.string(), cellValue)).optional(),
  // One format or a list (a value matching two of them differently is ambiguous, never guessed).
  date_format: z
    .preprocess((value) => (typeof value === 'string' ? [value] : value), z.array(dateFormat).min(1))
    .optional(),
  datetime_format: z
    .preprocess((value) => (typeof value === 'string' ? [value] : value), z.array(datetimeFormat).min(1))
    .optional(),
  utc_offset: z
    .string()
    .regex(/^(Z|[+-]\d{2}:\d{2})$/, 'utc_offset must be Z or +HH:MM / -HH:MM')
    .optional(),
  scale: z.record(z.string(), z.number().positive().finite()).optional(),
  // Amount columns already in minor units (pence, cents): statements' gross_amount is sent as they give it.
  minor_units: z.array(z.string()).optional(),
  delimiter: delimiter.optional(),
  encoding: encoding.optional(),
};

export const fileMappingSchema = z.strictObject(fileMappingShape);

// A legacy file (or files) read as one table of the shape's SQL (docs/export-format.md "Shaping legacy files with
// SQL"): `file` a glob matching exactly one file, `files` one matching one or more (appended in name order).
const shapeSourceSchema = z
  .strictObject({
    file: z.string().min(1).optional(),
    files: z.string().min(1).optional(),
    format: z.enum(['csv', 'json', 'ndjson']).optional(),
    encoding: encoding.optional(),
    delimiter: delimiter.optional(),
    header: z.boolean().optional(),
  })
  .refine((source) => (source.file === undefined) !== (source.files === undefined), {
    message: 'give "file" (a glob matching one file) or "files" (a glob matching one or more), not both or neither',
  });

/** A source's table name: a plain SQL name that is not a record kind (those are the shape's views). */
function tableProblem(name: string): string | undefined {
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) return 'is not a table name such as legacy_accounts (letters, digits, _)';
  if ((FILE_KINDS as readonly string[]).includes(name.toLowerCase()))
    return 'is the name of a record kind, which the shape file defines as a view; name the source table otherwise';
  return undefined;
}

export const mappingFileSchema = z.strictObject({
  $schema: z.string().optional(),
  import_supplier: z.string().min(1).max(255).optional(),
  phone_default_country: z
    .string()
    .refine(
      (value) => (getCountries() as string[]).includes(value),
      'phone_default_country must be an ISO 3166-1 alpha-2 code such as GB',
    )
    .optional(),
  delimiter: delimiter.optional(),
  encoding: encoding.optional(),
  // The platform keeps one active payment instruction per account; true where a deployment allows more.
  multiple_payment_instructions: z.boolean().optional(),
  mapping: z.partialRecord(z.enum(FILE_KINDS), fileMappingSchema).optional(),
  // Legacy files as tables, and the SQL that shapes them into the record kinds (relative to this file).
  sources: z.record(z.string(), shapeSourceSchema).optional(),
  shape: z
    .string()
    .min(1)
    .regex(/\.sql$/i, 'the shape file is a .sql file')
    .optional(),
  // The service's wire format (docs/real-platform.md); --dialect and MIGRATE_DIALECT win over it.
  dialect: z.enum(DIALECTS).optional(),
  // kraken: the v2 create's task_params (default {}).
  task_params: z.record(z.string(), z.unknown()).optional(),
  // Payload fields beyond the spec's that a tenant defines: name -> JSON kind, per level of the payload.
  tenant_fields: z.strictObject(tenantScopes).optional(),
  // The tenant's OpenAPI document (docs/real-platform.md "The tenant's contract"), relative to this file;
  // --contract wins over it.
  contract: z.string().min(1).optional(),
  // The results ledger is named by --ledger or MIGRATE_LEDGER_URL only: status and report read no mapping file (they
  // would read another ledger than push), and this file travels with the export (a URL in it could carry a password).
  ledger: z
    .never({
      error:
        'the results ledger is not read from the mapping file (status and report read none); give --ledger or ' +
        'MIGRATE_LEDGER_URL to every command',
    })
    .optional(),
});

/** `sources` and `shape` come together: a shape reads only its sources, and sources are read only by a shape. */
export function shapeProblems(file: MappingFileInput): Array<{ key: string; message: string }> {
  const problems = Object.keys(file.sources ?? {}).flatMap((name) => {
    const message = tableProblem(name);
    return message === undefined ? [] : [{ key: `sources.${name}`, message }];
  });
  if (file.shape === undefined && file.sources !== undefined)
    problems.push({ key: 'shape', message: 'is required with "sources": the .sql file that makes the record kinds' });
  if (file.sources === undefined && file.shape !== undefined)
    problems.push({ key: 'sources', message: 'is required with "shape": the legacy files it reads, as tables' });
  return problems;
}

export type FileMappingInput = z.infer<typeof fileMappingSchema>;
export type MappingFileInput = z.infer<typeof mappingFileSchema>;

/**
 * Field names used by a file's rules must be documented fields of that file (the cross-key check zod cannot express).
 */
export function fieldProblems(kind: FileKind, mapping: FileMappingInput): Array<{ key: string; message: string }> {
  const problems: Array<{ key: string; message: string }> = [];
  const at = `mapping.${kind}`;
  const check = (key: string, field: string): void => {
    if (!fieldType(kind, field))
      problems.push({ key, message: `"${field}" is not a documented field of ${kind} files` });
  };
  for (const [source, target] of Object.entries(mapping.rename ?? {})) check(`${at}.rename.${source}`, target);
  for (const field of Object.keys(mapping.constants ?? {})) check(`${at}.constants.${field}`, field);
  for (const field of Object.keys(mapping.defaults ?? {})) check(`${at}.defaults.${field}`, field);
  for (const field of Object.keys(mapping.values ?? {})) check(`${at}.values.${field}`, field);
  for (const field of Object.keys(mapping.scale ?? {})) {
    if (!isScalable(kind, field))
      problems.push({ key: `${at}.scale.${field}`, message: `"${field}" is not an amount field of ${kind} files` });
  }
  for (const field of mapping.minor_units ?? []) {
    if (fieldType(kind, field) !== 'minor-amount')
      problems.push({
        key: `${at}.minor_units`,
        message: `"${field}" is not an amount sent in minor units (only statements' gross_amount is)`,
      });
  }
  if (mapping.datetime_format !== undefined && mapping.utc_offset === undefined) {
    problems.push({
      key: `${at}.utc_offset`,
      message: 'is required with datetime_format (a datetime is sent with its UTC offset; it is never guessed)',
    });
  }
  const targets = Object.values(mapping.rename ?? {});
  const twice = targets.find((target, index) => targets.indexOf(target) !== index);
  if (twice) problems.push({ key: `${at}.rename`, message: `two columns are renamed to "${twice}"` });
  return problems;
}
