import type { CountryCode } from 'libphonenumber-js';
import type { ExportMapping, FileMapping } from './mapping-rules.js';
import { InputError } from '../errors.js';
import { tenantFieldsOf, type TenantFieldKind } from '../schema/index.js';
import { accountKeyOf } from '../sources/key-order.js';
import { kindOfFile, type FileKind } from '../sources/kinds.js';
import { legacyRowsOfText, PROVENANCE_COLUMNS, ROWS_COLUMN, type LegacyRow } from '../shape/index.js';
import { isJsonNumber, jsonNumberText } from '../sources/json-value.js';
import { coerceValue, isEmptyCell, type CoerceContext, type Coerced } from './coerce.js';
import { fieldType, NESTED_OBJECTS, type FieldType } from './fields.js';
import { ExportCode } from './issue-codes.js';
import { readJsonCell, withExactNumbers } from './json-cell.js';
import { lookUpValue } from './value-map.js';
import { fieldSchemaOf, fieldValueProblem } from './field-schema.js';
import type { z } from 'zod';
import type { Origin } from './types.js';

// One source record -> one mapped record (pure): mapping-file rules, then coercion. The
// external account number and supplier are lifted out for the join; `fields` holds the payload
// fragment this record contributes, in the payload's own nested shape.

export interface RecordIssue {
  /** Payload path relative to the record (e.g. `mobile`), '' for the whole record. */
  attr: string;
  column?: string;
  code: string;
  message: string;
}

/** A value dropped under the mapping file's `on_invalid: omit`, with why: listed by validate, never silent. */
export interface OmittedValue extends RecordIssue {
  value: string;
}

export interface MappedRecord {
  kind: FileKind;
  line: number;
  externalAccountNumber: string | undefined;
  importSupplier: string | undefined;
  fields: Record<string, unknown>;
  issues: RecordIssue[];
  /** Values dropped under `on_invalid: omit` (the record goes on without them). */
  omitted: OmittedValue[];
  /** Fields held by another legacy row than the record's own (Origin.fields), where the record names its rows. */
  fieldOrigins?: Record<string, Origin>;
}

/** A field filled by a column, a default or a constant, compiled once per file. */
interface FieldPlan {
  field: string;
  path: string[];
  type: FieldType;
  /** Built once per field, not once per cell (one object per cell of 600,000 rows otherwise). */
  context: CoerceContext;
  /** The external account number or supplier of a kind whose payload does not carry them: kept aside for the join. */
  lifted: boolean;
}

interface ColumnPlan extends FieldPlan {
  index: number;
  /** The source column its problems are named at; none where a shape computed the value (no legacy column holds it). */
  column: string | undefined;
  /**
   * A shape's view column that is a column of a source table (of the record's own row's table or another): that
   * table's legacy files and column, to find the row holding the value among the record's `_rows`.
   */
  from?: { files: readonly string[]; column: string };
}

interface ValuePlan extends FieldPlan {
  value: unknown;
}

/** How the columns of one file map to fields; compiled once per file from its header. */
export interface FilePlan {
  kind: FileKind;
  mapping: FileMapping;
  columns: ColumnPlan[];
  width: number;
  /** Source columns that are neither documented fields nor ignored. */
  unknownColumns: string[];
  /**
   * Source columns (JSON keys: as met) left out because the kind's `unmapped` is `ignore`: listed once per file by
   * validate, never one by one.
   */
  unmappedIgnored: string[];
  /** field path -> source column where the two differ (renames), for locating errors. */
  columnOf: Record<string, string>;
  phoneCountry: CountryCode | undefined;
  importSupplier: string | undefined;
  /** Index of the external_account_number column (CSV). */
  keyIndex: number | undefined;
  defaults: ValuePlan[];
  constants: ValuePlan[];
  /** Source columns (JSON keys) the mapping ignores. */
  ignored: ReadonlySet<string>;
  /** Accounts: the plans of the customers and supply addresses a JSON record may carry inline. */
  inline?: Record<InlineList, FilePlan>;
  /** Tenant fields the mapping file declares for this file kind: field -> type. */
  tenant: Readonly<Record<string, FieldType>>;
  /** `on_invalid: omit`: field -> the spec's rule for its value alone; an invalid value is dropped and listed. */
  omit: ReadonlyMap<string, z.ZodType>;
  /**
   * The cells holding the legacy file and line a shaped record comes from (`_file`, `_line`: a shape's view, or the
   * shaped export `migrate shape` writes); its problems are named there.
   */
  provenance?: { file: number; line: number; rows?: number };
}

const TENANT_TYPES: Record<TenantFieldKind, FieldType> = {
  array: 'json-array',
  object: 'json',
  string: 'string',
  number: 'number',
  boolean: 'boolean',
};

/** The type of a field: documented by the spec, or a declared tenant field (copied as given, checked for its kind). */
function typeOf(plan: Pick<FilePlan, 'kind' | 'tenant'>, field: string): FieldType | undefined {
  return fieldType(plan.kind, field) ?? (Object.hasOwn(plan.tenant, field) ? plan.tenant[field] : undefined);
}

function tenantPlan(kind: FileKind, config: ExportMapping): Record<string, FieldType> {
  // Every file kind is a tenant scope of its own name.
  const declared = tenantFieldsOf(config.tenantFields, kind);
  return Object.fromEntries(Object.entries(declared).map(([field, tenantKind]) => [field, TENANT_TYPES[tenantKind]]));
}

function omitPlan(kind: FileKind, mapping: FileMapping): ReadonlyMap<string, z.ZodType> {
  const plan = new Map<string, z.ZodType>();
  for (const field of mapping.omitInvalid ?? []) {
    const schema = fieldSchemaOf(kind, field);
    if (schema !== undefined) plan.set(field, schema);
  }
  return plan;
}

/** Lists an accounts record may carry inline (docs/export-format.md "Columns"), mapped with their own files' rules. */
type InlineList = 'customers' | 'supply_addresses';
const INLINE_LISTS: ReadonlySet<string> = new Set<InlineList>(['customers', 'supply_addresses']);

/** Keeps the external account number and supplier in the fragment only where the payload has them. */
const KEYS_IN_PAYLOAD: ReadonlySet<FileKind> = new Set(['accounts', 'payment_instructions']);
const KEY_FIELDS: ReadonlySet<string> = new Set(['external_account_number', 'import_supplier']);

function fieldPlan(
  kind: FileKind,
  mapping: FileMapping,
  field: string,
  type: FieldType,
  phoneCountry: CountryCode | undefined,
): FieldPlan {
  return {
    field,
    path: field.split('.'),
    type,
    context: { mapping, field, phoneCountry },
    lifted: KEY_FIELDS.has(field) && !KEYS_IN_PAYLOAD.has(kind),
  };
}

function valuePlans(
  kind: FileKind,
  mapping: FileMapping,
  values: Record<string, unknown>,
  phoneCountry: CountryCode | undefined,
): ValuePlan[] {
  return Object.entries(values).map(([field, value]) => ({
    ...fieldPlan(kind, mapping, field, fieldType(kind, field) ?? 'string', phoneCountry),
    value,
  }));
}

/** Compiles a CSV header (or, with an empty header, the rules of a JSON file, whose keys vary by record). */
export function planFile(kind: FileKind, file: string, header: string[], config: ExportMapping): FilePlan {
  const mapping = config.mapping[kind];
  const ignore = new Set(mapping.ignore);
  const phoneCountry = config.phoneDefaultCountry;
  const plan: FilePlan = {
    kind,
    mapping,
    columns: [],
    width: header.length,
    unknownColumns: [],
    unmappedIgnored: [],
    columnOf: {},
    phoneCountry,
    importSupplier: config.importSupplier,
    keyIndex: undefined,
    defaults: valuePlans(kind, mapping, mapping.defaults, phoneCountry),
    constants: valuePlans(kind, mapping, mapping.constants, phoneCountry),
    ignored: ignore,
    tenant: tenantPlan(kind, config),
    omit: omitPlan(kind, mapping),
  };
  if (kind === 'accounts')
    plan.inline = {
      customers: planFile('customers', file, [], config),
      supply_addresses: planFile('supply_addresses', file, [], config),
    };
  if (header.length === 0) {
    // JSON: keys vary by record; every rename may occur.
    for (const [source, fields] of Object.entries(mapping.rename))
      for (const field of fields) plan.columnOf[field] = source;
  }
  const byField = new Map<string, string>();
  const fileAt = header.indexOf('_file');
  const lineAt = header.indexOf('_line');
  const rowsAt = header.indexOf(ROWS_COLUMN);
  if (fileAt !== -1 && lineAt !== -1)
    plan.provenance = { file: fileAt, line: lineAt, ...(rowsAt === -1 ? {} : { rows: rowsAt }) };
  const provenance: readonly string[] = [...PROVENANCE_COLUMNS, ROWS_COLUMN];
  header.forEach((raw, index) => {
    const column = raw.trim();
    if (ignore.has(column) || (plan.provenance && provenance.includes(column))) return;
    for (const field of mapping.rename[column] ?? [column]) planColumn(plan, file, byField, { column, index, field });
  });
  if (
    header.length > 0 &&
    !byField.has('external_account_number') &&
    mapping.constants['external_account_number'] === undefined
  ) {
    throw new InputError(
      file,
      1,
      'has no external_account_number column (every record needs it to join its account); add the column, or ' +
        'rename the source column to it in the mapping file.',
      'input_missing_key_column',
    );
  }
  return plan;
}

/**
 * With `"unmapped": "ignore"`, a column (or JSON key) that is not a documented field is noted once in the plan's
 * `unmappedIgnored` and left out; true when it was.
 */
export function ignoresUnmapped(plan: FilePlan, column: string): boolean {
  if (plan.mapping.unmapped !== 'ignore') return false;
  if (!plan.unmappedIgnored.includes(column)) plan.unmappedIgnored.push(column);
  return true;
}

/** One field a CSV column fills (a column renamed to several fields fills each). */
function planColumn(
  plan: FilePlan,
  file: string,
  byField: Map<string, string>,
  { column, index, field }: { column: string; index: number; field: string },
): void {
  const type = typeOf(plan, field);
  if (!type) {
    if (!ignoresUnmapped(plan, column)) plan.unknownColumns.push(column);
    return;
  }
  const earlier = byField.get(field);
  if (earlier !== undefined)
    throw new InputError(
      file,
      1,
      `columns "${earlier}" and "${column}" both fill ${field}; rename or ignore one of them in the mapping file.`,
      'input_duplicate_column',
    );
  byField.set(field, column);
  if (field === 'external_account_number') plan.keyIndex = index;
  // A tenant field is not in the spec's column list, and a file found by a glob (THISTLE_NOTES_1.csv) does not say its
  // kind by its name: name their columns for locating errors (mapping/locate.ts).
  if (field !== column || fieldType(plan.kind, field) === undefined || kindOfFile(file) !== plan.kind)
    plan.columnOf[field] = column;
  plan.columns.push({ ...fieldPlan(plan.kind, plan.mapping, field, type, plan.phoneCountry), index, column });
}

function setPath(target: Record<string, unknown>, path: string[], value: unknown): void {
  // Most fields are top-level: skip the walk (profiled: setPath 350 ms self on 100k accounts).
  if (path.length === 1) {
    target[path[0] as string] = value;
    return;
  }
  let node = target;
  for (let index = 0; index < path.length - 1; index += 1) {
    const key = path[index] as string;
    const next = node[key];
    if (typeof next === 'object' && next !== null && !Array.isArray(next)) node = next as Record<string, unknown>;
    else node = node[key] = {};
  }
  node[path[path.length - 1] as string] = value;
}

function getPath(target: Record<string, unknown>, path: string[]): unknown {
  let node: unknown = target;
  for (const key of path)
    node = typeof node === 'object' && node !== null ? (node as Record<string, unknown>)[key] : undefined;
  return node;
}

/** Where a record's lifted fields (external account number, supplier) go while it is mapped. */
type Lifted = Record<string, unknown>;

function assign(
  plan: FilePlan,
  record: MappedRecord,
  lifted: Lifted,
  target: FieldPlan,
  raw: unknown,
  column: string | undefined,
): void {
  const { field } = target;
  const valueMap = plan.mapping.values[field];
  // The trimmed key is only needed where the field has a value map (most have none); a JSON number's is its text.
  const found =
    valueMap && typeof raw === 'string'
      ? lookUpValue(valueMap, isJsonNumber(raw) ? jsonNumberText(raw) : raw.trim())
      : undefined;
  const mapped = found?.found ? found.value : raw;
  // A field under `on_invalid: omit` drops such a value instead (omitted below).
  const unnamed = found?.found === false && typeof raw === 'string' && !plan.omit.has(field);
  if (unnamed) unnamedChoice(plan, record, field, raw.trim(), column);
  if (typeof mapped === 'string' && !isJsonNumber(mapped)) {
    // Most cells are text: trimmed once, and a text field's value set with no coercion result built (coerceValue's
    // 'string' case, the same value; profiled: one object per cell of every row otherwise).
    const text = mapped.trim();
    if (text === '') return;
    if (target.type === 'string' && plan.omit.size === 0 && !INLINE_LISTS.has(field)) {
      setPath(target.lifted ? lifted : record.fields, target.path, text);
      return;
    }
  } else if (isEmptyCell(mapped)) return;
  const inlinePlan = plan.inline && INLINE_LISTS.has(field) ? plan.inline[field as InlineList] : undefined;
  const result = inlinePlan ? inlineList(mapped, field) : coerceValue(target.type, mapped, target.context);
  const value =
    inlinePlan && Array.isArray(result.value)
      ? mapInline(inlinePlan, record, field, result.value, column)
      : result.value;
  if (plan.omit.size > 0 && omitted(plan, record, target, { mapped, value, column, issue: result.issue })) return;
  setPath(target.lifted ? lifted : record.fields, target.path, value);
  if (result.issue) record.issues.push({ attr: field, ...(column === undefined ? {} : { column }), ...result.issue });
}

/**
 * A value its field's value map does not name, that no `"*"` covers and that the field does not take as it is (a code
 * the map forgot): an issue quoting the value and the map, in place of the schema's list of choices alone (an issue of
 * the record at a field hides the schema's verdict on it).
 */
function unnamedChoice(
  plan: FilePlan,
  record: MappedRecord,
  field: string,
  value: string,
  column: string | undefined,
): void {
  const schema = value === '' ? undefined : fieldSchemaOf(plan.kind, field);
  const problem = schema === undefined ? undefined : fieldValueProblem(schema, value);
  if (problem?.code !== 'invalid_choice') return;
  const named = [...(plan.mapping.values[field]?.exact.keys() ?? [])].map((key) => JSON.stringify(key)).join(', ');
  record.issues.push({
    attr: field,
    ...(column === undefined ? {} : { column }),
    code: problem.code,
    message:
      `${JSON.stringify(value)} is not named by the value map mapping.${plan.kind}.values.${field} (${named}), and ` +
      `the map has no "*": the value would go as it is, which ${field} does not take (${problem.message}). Add the ` +
      'value to the map, or a "*" for every other value.',
  });
}

/**
 * `on_invalid: omit`: a value of the field that cannot be read, or that the spec's rule for the field refuses, is
 * dropped and noted in the record's `omitted` (true), instead of holding the record back.
 */
function omitted(
  plan: FilePlan,
  record: MappedRecord,
  target: FieldPlan,
  cell: { mapped: unknown; value: unknown; column: string | undefined; issue: Coerced['issue'] },
): boolean {
  const schema = plan.omit.get(target.field);
  if (schema === undefined) return false;
  const problem = cell.issue ?? fieldValueProblem(schema, cell.value);
  if (problem === undefined) return false;
  record.omitted.push({
    attr: target.field,
    ...(cell.column === undefined ? {} : { column: cell.column }),
    code: problem.code,
    message: problem.message,
    value: isJsonNumber(cell.mapped)
      ? jsonNumberText(cell.mapped)
      : typeof cell.mapped === 'string'
        ? cell.mapped
        : JSON.stringify(cell.mapped),
  });
  return true;
}

/** Inline customers or supply addresses: a JSON list whose items are mapped field by field (numbers still marked). */
function inlineList(value: unknown, field: string): Coerced {
  const read = readJsonCell(value, field);
  if (read.issue || Array.isArray(read.value)) return read;
  return { value: read.value, issue: { code: ExportCode.invalidType, message: `${field} must be a JSON array.` } };
}

/**
 * Customers or supply addresses given inline in an accounts record, mapped as the records of
 * their own files are (the mapping file's customers or supply_addresses section: renames, value
 * maps, date formats, phone numbers, defaults); their problems at `customers.N.field`, in the
 * accounts record's column. An item that is not an object is left to the schema to refuse.
 */
function mapInline(
  itemPlan: FilePlan,
  record: MappedRecord,
  list: string,
  items: unknown[],
  column: string | undefined,
): unknown[] {
  const where = column === undefined ? {} : { column };
  return items.map((item, index) => {
    const prefix = `${list}.${index}`;
    if (typeof item !== 'object' || item === null || Array.isArray(item)) {
      const exact = withExactNumbers(item, prefix);
      if ('value' in exact) return exact.value;
      record.issues.push({ attr: prefix, ...where, code: exact.code, message: `${exact.problem}.` });
      return isJsonNumber(item) ? jsonNumberText(item) : item;
    }
    const unknownKey = (key: string): void => {
      if (itemPlan.mapping.unmapped === 'ignore') return;
      record.issues.push({
        attr: `${prefix}.${key}`,
        ...where,
        code: ExportCode.unknownColumn,
        message:
          `"${key}" is not a documented field of ${itemPlan.kind}; rename it to a field or list it under ` +
          `mapping.${itemPlan.kind}.ignore in the mapping file (only documented fields may be sent).`,
      });
    };
    const mapped = mapJsonRecord(itemPlan, record.line, item as Record<string, unknown>, unknownKey);
    for (const dropped of mapped.omitted)
      record.omitted.push({ ...dropped, attr: `${prefix}.${dropped.attr}`, ...where });
    // The item's problems sit in the accounts record's column, not in the item's key.
    for (const issue of mapped.issues)
      record.issues.push({
        attr: issue.attr === '' ? prefix : `${prefix}.${issue.attr}`,
        ...where,
        code: issue.code,
        message: issue.message,
      });
    return mapped.fields;
  });
}

/** Constants always apply; defaults fill fields the record left empty (docs/export-format.md "The mapping file"). */
function finish(plan: FilePlan, record: MappedRecord, lifted: Lifted): MappedRecord {
  for (const target of plan.defaults) {
    if (getPath(target.lifted ? lifted : record.fields, target.path) === undefined)
      assign(plan, record, lifted, target, target.value, undefined);
  }
  for (const target of plan.constants) assign(plan, record, lifted, target, target.value, undefined);
  const keys = KEYS_IN_PAYLOAD.has(plan.kind) ? record.fields : lifted;
  // Sent as the join and the ledger know it: NFC (sources/key-order.ts).
  const read = keys['external_account_number'];
  const number = typeof read === 'string' ? (accountKeyOf(read) ?? '') : read;
  if (number !== read) keys['external_account_number'] = number;
  const supplier = keys['import_supplier'];
  record.externalAccountNumber = typeof number === 'string' && number !== '' ? number : undefined;
  record.importSupplier = typeof supplier === 'string' && supplier !== '' ? supplier : plan.importSupplier;
  if (KEYS_IN_PAYLOAD.has(plan.kind) && record.importSupplier !== undefined)
    record.fields['import_supplier'] = record.importSupplier;
  return record;
}

/**
 * Where a CSV record of a shaped export comes from: its `_file` and `_line` cells, and every legacy row it names in a
 * `_rows` cell; undefined for other records.
 */
export function recordOrigin(
  plan: FilePlan,
  data: unknown,
): { file: string; line: number; rows?: LegacyRow[] | undefined } | undefined {
  if (!plan.provenance || !Array.isArray(data)) return undefined;
  const file = (data[plan.provenance.file] as string | undefined)?.trim();
  const line = Number(data[plan.provenance.line]);
  if (!file || !Number.isInteger(line) || line < 1) return undefined;
  const rows = plan.provenance.rows === undefined ? undefined : (data[plan.provenance.rows] as string | undefined);
  return rows === undefined ? { file, line } : { file, line, rows: legacyRowsOfText(rows) };
}

/**
 * The fields of a record held by another of its legacy rows than its own: for each column a shape took from a source
 * table's column, the one row of the record's `_rows` from that table's files (none where it names none or several
 * of them: the record's own row is named then).
 */
export function fieldOriginsOf(
  plan: FilePlan,
  own: { file: string; line: number },
  rows: readonly LegacyRow[],
): Record<string, Origin> | undefined {
  let origins: Record<string, Origin> | undefined;
  for (const column of plan.columns) {
    if (column.from === undefined) continue;
    const { files, column: legacy } = column.from;
    const holding = rows.filter((row) => files.includes(row.file));
    const [row] = holding;
    if (holding.length !== 1 || row === undefined || (row.file === own.file && row.line === own.line)) continue;
    (origins ??= {})[column.field] = { file: row.file, line: row.line, column: legacy };
  }
  return origins;
}

function emptyRecord(plan: FilePlan, line: number): MappedRecord {
  return {
    kind: plan.kind,
    line,
    externalAccountNumber: undefined,
    importSupplier: undefined,
    fields: {},
    issues: [],
    omitted: [],
  };
}

export function mapCsvRow(plan: FilePlan, line: number, cells: string[]): MappedRecord {
  const record = emptyRecord(plan, line);
  const lifted: Lifted = {};
  if (cells.length !== plan.width) {
    // Cells of a shifted row land in the wrong fields: report the row once, not each symptom.
    record.issues.push({
      attr: '',
      code: ExportCode.wrongColumnCount,
      message:
        `the row has ${cells.length} cells but the header has ${plan.width} columns (an unquoted delimiter ` +
        `in a value?); none of its cells is used.`,
    });
    const key = plan.keyIndex === undefined ? undefined : cells[plan.keyIndex];
    if (key !== undefined)
      (KEYS_IN_PAYLOAD.has(plan.kind) ? record.fields : lifted)['external_account_number'] = key.trim();
    return finish(plan, record, lifted);
  }
  for (const column of plan.columns) assign(plan, record, lifted, column, cells[column.index], column.column);
  return finish(plan, record, lifted);
}

type JsonFieldVisitor = (key: string, value: unknown, field: string, type: FieldType | undefined) => void;

/**
 * Visits the keys of a JSON record the mapping does not ignore, nested objects
 * (`billing_address: {...}`) as dotted keys, with the field each fills and its type (undefined:
 * not a documented field). No array per record: this runs for every JSON record, twice.
 */
function eachJsonField(plan: FilePlan, object: Record<string, unknown>, visit: JsonFieldVisitor): void {
  const visitKey = (key: string, value: unknown): void => {
    if (plan.ignored.has(key)) return;
    const fields = plan.mapping.rename[key];
    if (fields === undefined) visit(key, value, key, typeOf(plan, key));
    else for (const field of fields) visit(key, value, field, typeOf(plan, field));
  };
  for (const [key, value] of Object.entries(object)) {
    if (NESTED_OBJECTS.has(key) && typeof value === 'object' && value !== null && !Array.isArray(value)) {
      for (const [inner, innerValue] of Object.entries(value)) visitKey(`${key}.${inner}`, innerValue);
    } else visitKey(key, value);
  }
}

/**
 * Maps a JSON/NDJSON record. Undocumented keys are skipped, or handed to `unknown` (a file's
 * records leave them to jsonKey, which reports them once per file).
 */
export function mapJsonRecord(
  plan: FilePlan,
  line: number,
  object: Record<string, unknown>,
  unknown?: (key: string) => void,
): MappedRecord {
  const record = emptyRecord(plan, line);
  const lifted: Lifted = {};
  eachJsonField(plan, object, (key, value, field, type) => {
    if (type)
      assign(plan, record, lifted, fieldPlan(plan.kind, plan.mapping, field, type, plan.phoneCountry), value, key);
    else unknown?.(key);
  });
  return finish(plan, record, lifted);
}

/** A JSON number's text as written (90000000000000000001 stays that, never 90000000000000000000). */
function keyText(value: unknown): string | undefined {
  if (isJsonNumber(value)) return jsonNumberText(value);
  if (typeof value === 'string') return accountKeyOf(value);
  return typeof value === 'number' ? String(value) : undefined;
}

/** The external account number of a CSV row, read before mapping so the row can be staged under it. */
export function csvKey(plan: FilePlan, cells: string[]): string | undefined {
  const constant = plan.mapping.constants['external_account_number'];
  return keyText(constant ?? (plan.keyIndex === undefined ? undefined : cells[plan.keyIndex]));
}

/** The external account number of a JSON record; reports undocumented keys through `unknown`. */
export function jsonKey(
  plan: FilePlan,
  object: Record<string, unknown>,
  unknown: (column: string) => void,
): string | undefined {
  let key: unknown;
  eachJsonField(plan, object, (column, value, field, type) => {
    if (field === 'external_account_number') key = value;
    else if (!type) unknown(column);
  });
  return keyText(plan.mapping.constants['external_account_number'] ?? key);
}
