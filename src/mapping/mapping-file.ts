import { getCountries } from 'libphonenumber-js';
import { z } from 'zod';
import { DIALECTS, TENANT_FIELD_KINDS, TENANT_SCOPES, type TenantScope } from '../schema/index.js';
import { fieldType, isScalable } from './fields.js';
import { FILE_KINDS, type FileKind } from '../sources/kinds.js';
import { parseDateFormat } from './date-format.js';
import { caseClashes } from './value-map.js';
import { isTimeZone } from './time-zone.js';
import { isOptionalField } from './field-schema.js';
import { sourceProblems } from './source-options.js';

/** Fields that join a record to its account: never optional. */
const KEY_FIELDS: ReadonlySet<string> = new Set(['external_account_number', 'import_supplier']);

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
// A factor every value of the field is multiplied by, exactly: 0.01 (pence -> pounds), -1 or -0.01 (a legacy sign
// convention flipped). 0 would erase every amount.
const SCALE_ACCEPTS =
  'scale takes a finite number other than 0, such as 0.01 (pence -> pounds) or -0.01 (pence, the sign flipped)';
const scaleFactor = z
  .number({ error: SCALE_ACCEPTS })
  .refine((value) => Number.isFinite(value) && value !== 0, SCALE_ACCEPTS);
const encoding = z.enum(ENCODINGS);
const tenantFields = z
  .record(z.string().regex(/^[a-z][a-z0-9_]*$/, 'a field name such as meter_points'), z.enum(TENANT_FIELD_KINDS))
  .optional();
const tenantScopes = Object.fromEntries(TENANT_SCOPES.map((scope) => [scope, tenantFields])) as Record<
  TenantScope,
  typeof tenantFields
>;

// A glob of file names in the export directory (THISTLE_NOTES_*.csv): subdirectories are not read.
const fileGlob = z
  .string()
  .min(1)
  .refine(
    (glob) => !/[\\/]/u.test(glob),
    'file is a glob of names in the export directory, such as "THISTLE_NOTES_*.csv" (no / or \\: subdirectories ' +
      'are not read)',
  );

const fileMappingShape = {
  // Which files of the export directory hold this kind (every match, read as one in name order); default: its base
  // name (notes.csv, notes.json, ...).
  file: fileGlob.optional(),
  // A field path, or a list of them: one source column feeding several fields (`"PHONE": ["mobile", "landline"]`).
  rename: z.record(z.string(), z.union([z.string().min(1), z.array(z.string().min(1)).min(1)])).optional(),
  ignore: z.array(z.string()).optional(),
  // "ignore": every column that is not a documented field (nor renamed to one) is left out without listing it.
  unmapped: z.enum(['report', 'ignore']).optional(),
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
  // Datetimes without an offset are local times in this IANA zone, DST included (exclusive with utc_offset).
  timezone: z
    .string()
    .refine(isTimeZone, 'timezone must be an IANA time zone such as "Europe/London" (as the tz database names it)')
    .optional(),
  // What a local time the clocks go through twice (the autumn change) means: the earlier or the later instant.
  dst: z.enum(['earlier', 'later']).optional(),
  scale: z.record(z.string(), scaleFactor).optional(),
  // How amounts and numbers are written: a currency sign, a thousands separator, where a minus goes.
  number_format: z
    .strictObject({
      currency: z
        .string()
        .min(1)
        .max(4)
        .regex(/^[^\d.+\-()\s]+$/u, 'a currency sign such as "£" (no digit, sign, point or space)')
        .optional(),
      thousands: z
        .enum([',', "'", ' ', '\u00a0', '_'], 'thousands takes one of "," "\'" " " (a space), a no-break space or "_"')
        .optional(),
      negative: z.enum(['leading', 'trailing', 'parentheses', 'any']).optional(),
    })
    .optional(),
  // Optional fields whose invalid value is dropped (listed by validate) instead of holding the account back.
  on_invalid: z
    .record(z.string(), z.literal('omit', { error: 'on_invalid takes "omit" (the value is dropped and listed)' }))
    .optional(),
  // Amount columns already in minor units (pence, cents): statements' gross_amount is sent as they give it.
  minor_units: z.array(z.string()).optional(),
  // transactions only: the service moves a transaction dated before its open statement period into it (its date
  // changed, a note pinned to the account) instead of refusing it (spec "Create transactions"). Default false.
  force_add_to_current_statement: z.boolean().optional(),
  delimiter: delimiter.optional(),
  encoding: encoding.optional(),
};

export const fileMappingSchema = z.strictObject(fileMappingShape);

const QUOTE_TAKES =
  'quote takes one character such as "\'" (fields quoted with it), or false (fields are never quoted)';

// A column of a fixed-width file: its name, its first character (1-based) and its width in characters.
const fixedColumn = z.strictObject({
  name: z.string().min(1),
  start: z
    .number()
    .refine(
      (start) => Number.isInteger(start) && start >= 1,
      "start is the column's first character, a whole number counted from 1 (the line's first character is 1)",
    ),
  width: z
    .number()
    .refine((width) => Number.isInteger(width) && width >= 1, 'width is a whole number of characters, 1 or more'),
});

// A legacy file (or files) read as one table of the shape's SQL (docs/export-format.md "Shaping legacy files with
// SQL"): `file` a glob matching exactly one file, `files` one matching one or more (appended in name order). A
// delimited file may quote with another character, or not at all (`"quote": false`), and name its columns itself
// when it has no header row (`"header": false, "columns": [...]`); a fixed-width one declares each column's place.
const shapeSourceSchema = z
  .strictObject({
    file: z.string().min(1).optional(),
    files: z.string().min(1).optional(),
    format: z.enum(['csv', 'json', 'ndjson', 'fixed']).optional(),
    encoding: encoding.optional(),
    delimiter: delimiter.optional(),
    header: z.boolean().optional(),
    quote: z
      .union([z.literal(false), z.string()], { error: QUOTE_TAKES })
      .refine((quote) => quote === false || /^[\x21-\x7e]$/.test(quote), QUOTE_TAKES)
      .optional(),
    columns: z
      .array(z.union([z.string().min(1), fixedColumn]))
      .min(1)
      .optional(),
    // A control file of the extract (docs/control-totals.md "Control files"): each row names a file and the rows it
    // holds, compared with the rows read.
    control: z.strictObject({ file_column: z.string().min(1), rows_column: z.string().min(1) }).optional(),
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

/** The fields a `rename` entry fills: one field path, or several. */
export function renameTargets(targets: string | string[]): string[] {
  return typeof targets === 'string' ? [targets] : targets;
}

/** `sources` and `shape` come together: a shape reads only its sources, and sources are read only by a shape. */
export function shapeProblems(file: MappingFileInput): Array<{ key: string; message: string }> {
  const problems = Object.entries(file.sources ?? {}).flatMap(([name, source]) => {
    const message = tableProblem(name);
    const table = message === undefined ? [] : [{ key: `sources.${name}`, message }];
    return [...table, ...sourceProblems(`sources.${name}`, source, file.delimiter ?? ',')];
  });
  if (file.shape === undefined && file.sources !== undefined)
    problems.push({ key: 'shape', message: 'is required with "sources": the .sql file that makes the record kinds' });
  if (file.sources === undefined && file.shape !== undefined)
    problems.push({ key: 'sources', message: 'is required with "shape": the legacy files it reads, as tables' });
  return problems;
}

export type FileMappingInput = z.infer<typeof fileMappingSchema>;
export type MappingFileInput = z.infer<typeof mappingFileSchema>;
/** utc_offset or timezone with datetime_format, never both; dst only with a timezone. */
function timeProblems(at: string, mapping: FileMappingInput): Array<{ key: string; message: string }> {
  if (mapping.utc_offset !== undefined && mapping.timezone !== undefined)
    return [
      {
        key: `${at}.timezone`,
        message:
          'and utc_offset both say what a datetime without an offset means; keep one (timezone for local times ' +
          'that follow the clocks, utc_offset for one fixed offset)',
      },
    ];
  if (mapping.dst !== undefined && mapping.timezone === undefined)
    return [{ key: `${at}.dst`, message: 'applies to local times in a timezone; declare the timezone too' }];
  if (mapping.datetime_format !== undefined && mapping.utc_offset === undefined && mapping.timezone === undefined)
    return [
      {
        key: `${at}.utc_offset`,
        message:
          'or timezone is required with datetime_format (a datetime is sent with its UTC offset; it is never guessed)',
      },
    ];
  return [];
}

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
  for (const [source, targets] of Object.entries(mapping.rename ?? {}))
    for (const target of renameTargets(targets)) check(`${at}.rename.${source}`, target);
  for (const field of Object.keys(mapping.constants ?? {})) check(`${at}.constants.${field}`, field);
  for (const field of Object.keys(mapping.defaults ?? {})) check(`${at}.defaults.${field}`, field);
  for (const [field, entries] of Object.entries(mapping.values ?? {})) {
    check(`${at}.values.${field}`, field);
    for (const [one, other] of caseClashes(entries))
      problems.push({
        key: `${at}.values.${field}`,
        message:
          `"${one}" and "${other}" differ only in case but map to different values ` +
          '(keys match regardless of case)',
      });
  }
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
  problems.push(...timeProblems(at, mapping));
  if (mapping.force_add_to_current_statement !== undefined && kind !== 'transactions')
    problems.push({
      key: `${at}.force_add_to_current_statement`,
      message: 'applies to transactions only: declare it under mapping.transactions',
    });
  for (const field of Object.keys(mapping.on_invalid ?? {})) {
    if (!fieldType(kind, field)) check(`${at}.on_invalid.${field}`, field);
    else if (kind === 'accounts' && (field === 'customers' || field === 'supply_addresses'))
      problems.push({
        key: `${at}.on_invalid.${field}`,
        message: `an inline list cannot be omitted whole; declare on_invalid for the fields of mapping.${field}`,
      });
    else if (!isOptionalField(kind, field) || KEY_FIELDS.has(field))
      problems.push({
        key: `${at}.on_invalid.${field}`,
        message:
          `"${field}" is required in ${kind} records, so it cannot be omitted; only an optional field's invalid ` +
          'value may be dropped',
      });
  }
  const targets = Object.values(mapping.rename ?? {}).flatMap(renameTargets);
  const twice = targets.find((target, index) => targets.indexOf(target) !== index);
  if (twice) problems.push({ key: `${at}.rename`, message: `two columns are renamed to "${twice}"` });
  return problems;
}
