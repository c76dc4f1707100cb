import type { CountryCode } from 'libphonenumber-js';
import type { FileMapping, MigrateConfig } from '../config/index.js';
import { InputError } from '../errors.js';
import type { FileKind } from '../sources/kinds.js';
import { coerceValue, isEmptyCell, type CoerceContext } from './coerce.js';
import { fieldType, NESTED_OBJECTS, type FieldType } from './fields.js';
import { ExportCode } from './issue-codes.js';

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

export interface MappedRecord {
  kind: FileKind;
  line: number;
  externalAccountNumber: string | undefined;
  importSupplier: string | undefined;
  fields: Record<string, unknown>;
  issues: RecordIssue[];
}

/** A field filled by a column, a default or a constant, compiled once per file. */
interface FieldPlan {
  field: string;
  path: string[];
  type: FieldType;
  /** Built once per field, not once per cell (issue 4: one object per cell of 600,000 rows). */
  context: CoerceContext;
  /** The external account number or supplier of a kind whose payload does not carry them: kept aside for the join. */
  lifted: boolean;
}

interface ColumnPlan extends FieldPlan {
  index: number;
  column: string;
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
  /** field path -> source column where the two differ (renames), for locating errors. */
  columnOf: Record<string, string>;
  phoneCountry: CountryCode | undefined;
  importSupplier: string | undefined;
  /** Index of the external_account_number column (CSV). */
  keyIndex: number | undefined;
  defaults: ValuePlan[];
  constants: ValuePlan[];
}

/** Keeps the external account number and supplier in the fragment only where the payload has them. */
const KEYS_IN_PAYLOAD: ReadonlySet<FileKind> = new Set(['accounts', 'payment_instructions']);
const KEY_FIELDS: ReadonlySet<string> = new Set(['external_account_number', 'import_supplier']);

function fieldPlan(kind: FileKind, mapping: FileMapping, field: string, type: FieldType, phoneCountry: CountryCode | undefined): FieldPlan {
  return { field, path: field.split('.'), type, context: { mapping, field, phoneCountry }, lifted: KEY_FIELDS.has(field) && !KEYS_IN_PAYLOAD.has(kind) };
}

function valuePlans(kind: FileKind, mapping: FileMapping, values: Record<string, unknown>, phoneCountry: CountryCode | undefined): ValuePlan[] {
  return Object.entries(values).map(([field, value]) => ({ ...fieldPlan(kind, mapping, field, fieldType(kind, field) ?? 'string', phoneCountry), value }));
}

/** Compiles a CSV header (or, with an empty header, the rules of a JSON file, whose keys vary by record). */
export function planFile(kind: FileKind, file: string, header: string[], config: MigrateConfig): FilePlan {
  const mapping = config.mapping[kind];
  const ignore = new Set(mapping.ignore);
  const phoneCountry = config.phoneDefaultCountry;
  const plan: FilePlan = {
    kind, mapping, columns: [], width: header.length, unknownColumns: [], columnOf: {}, phoneCountry, importSupplier: config.importSupplier, keyIndex: undefined,
    defaults: valuePlans(kind, mapping, mapping.defaults, phoneCountry), constants: valuePlans(kind, mapping, mapping.constants, phoneCountry),
  };
  if (header.length === 0) {
    // JSON: keys vary by record; every rename may occur.
    for (const [source, field] of Object.entries(mapping.rename)) plan.columnOf[field] = source;
  }
  const byField = new Map<string, string>();
  header.forEach((raw, index) => {
    const column = raw.trim();
    if (ignore.has(column)) return;
    const field = mapping.rename[column] ?? column;
    const type = fieldType(kind, field);
    if (!type) {
      plan.unknownColumns.push(column);
      return;
    }
    const earlier = byField.get(field);
    if (earlier !== undefined) throw new InputError(file, 1, `columns "${earlier}" and "${column}" both fill ${field}; rename or ignore one of them in the mapping file.`, 'input_duplicate_column');
    byField.set(field, column);
    if (field === 'external_account_number') plan.keyIndex = index;
    if (field !== column) plan.columnOf[field] = column;
    plan.columns.push({ ...fieldPlan(kind, mapping, field, type, phoneCountry), index, column });
  });
  if (header.length > 0 && !byField.has('external_account_number') && mapping.constants['external_account_number'] === undefined) {
    throw new InputError(file, 1, 'has no external_account_number column (every record needs it to join its account); add the column, or rename the source column to it in the mapping file.', 'input_missing_key_column');
  }
  return plan;
}

function setPath(target: Record<string, unknown>, path: string[], value: unknown): void {
  // Most fields are top-level: skip the walk (issue 4 profile: setPath 350 ms self on 100k accounts).
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
  for (const key of path) node = typeof node === 'object' && node !== null ? (node as Record<string, unknown>)[key] : undefined;
  return node;
}

/** Where a record's lifted fields (external account number, supplier) go while it is mapped. */
type Lifted = Record<string, unknown>;

function assign(plan: FilePlan, record: MappedRecord, lifted: Lifted, target: FieldPlan, raw: unknown, column: string | undefined): void {
  const { field } = target;
  const valueMap = plan.mapping.values[field];
  // The trimmed key is only needed where the field has a value map (most have none).
  const key = valueMap && typeof raw === 'string' ? raw.trim() : raw;
  const mapped = valueMap && typeof key === 'string' && Object.hasOwn(valueMap, key) ? valueMap[key] : raw;
  if (isEmptyCell(mapped)) return;
  const result = coerceValue(target.type, mapped, target.context);
  setPath(target.lifted ? lifted : record.fields, target.path, result.value);
  if (result.issue) record.issues.push({ attr: field, ...(column === undefined ? {} : { column }), ...result.issue });
}

/** Constants always apply; defaults fill fields the record left empty (input-format "The mapping file"). */
function finish(plan: FilePlan, record: MappedRecord, lifted: Lifted): MappedRecord {
  for (const target of plan.defaults) {
    if (getPath(target.lifted ? lifted : record.fields, target.path) === undefined) assign(plan, record, lifted, target, target.value, undefined);
  }
  for (const target of plan.constants) assign(plan, record, lifted, target, target.value, undefined);
  const keys = KEYS_IN_PAYLOAD.has(plan.kind) ? record.fields : lifted;
  const number = keys['external_account_number'];
  const supplier = keys['import_supplier'];
  record.externalAccountNumber = typeof number === 'string' && number !== '' ? number : undefined;
  record.importSupplier = typeof supplier === 'string' && supplier !== '' ? supplier : plan.importSupplier;
  if (KEYS_IN_PAYLOAD.has(plan.kind) && record.importSupplier !== undefined) record.fields['import_supplier'] = record.importSupplier;
  return record;
}

export function mapCsvRow(plan: FilePlan, line: number, cells: string[]): MappedRecord {
  const record: MappedRecord = { kind: plan.kind, line, externalAccountNumber: undefined, importSupplier: undefined, fields: {}, issues: [] };
  const lifted: Lifted = {};
  if (cells.length !== plan.width) {
    // Cells of a shifted row land in the wrong fields: report the row once, not each symptom.
    record.issues.push({ attr: '', code: ExportCode.wrongColumnCount, message: `the row has ${cells.length} cells but the header has ${plan.width} columns (an unquoted delimiter in a value?); none of its cells is used.` });
    const key = plan.keyIndex === undefined ? undefined : cells[plan.keyIndex];
    if (key !== undefined) (KEYS_IN_PAYLOAD.has(plan.kind) ? record.fields : lifted)['external_account_number'] = key.trim();
    return finish(plan, record, lifted);
  }
  for (const column of plan.columns) assign(plan, record, lifted, column, cells[column.index], column.column);
  return finish(plan, record, lifted);
}

/** Flattens the nested objects a JSON record may use (`billing_address: {...}`) into dotted columns. */
function jsonColumns(object: Record<string, unknown>): Array<[string, unknown]> {
  const columns: Array<[string, unknown]> = [];
  for (const [key, value] of Object.entries(object)) {
    if (NESTED_OBJECTS.has(key) && typeof value === 'object' && value !== null && !Array.isArray(value)) {
      for (const [inner, innerValue] of Object.entries(value)) columns.push([`${key}.${inner}`, innerValue]);
    } else columns.push([key, value]);
  }
  return columns;
}

/** Maps a JSON/NDJSON record; undocumented keys are skipped here (jsonKey reports them once per file). */
export function mapJsonRecord(plan: FilePlan, line: number, object: Record<string, unknown>): MappedRecord {
  const record: MappedRecord = { kind: plan.kind, line, externalAccountNumber: undefined, importSupplier: undefined, fields: {}, issues: [] };
  const lifted: Lifted = {};
  const ignore = new Set(plan.mapping.ignore);
  for (const [column, value] of jsonColumns(object)) {
    if (ignore.has(column)) continue;
    const field = plan.mapping.rename[column] ?? column;
    const type = fieldType(plan.kind, field);
    if (!type) continue;
    assign(plan, record, lifted, fieldPlan(plan.kind, plan.mapping, field, type, plan.phoneCountry), value, column);
  }
  return finish(plan, record, lifted);
}

function keyText(value: unknown): string | undefined {
  const text = typeof value === 'string' ? value.trim() : typeof value === 'number' ? String(value) : undefined;
  return text === '' ? undefined : text;
}

/** The external account number of a CSV row, read before mapping so the row can be staged under it. */
export function csvKey(plan: FilePlan, cells: string[]): string | undefined {
  const constant = plan.mapping.constants['external_account_number'];
  return keyText(constant ?? (plan.keyIndex === undefined ? undefined : cells[plan.keyIndex]));
}

/** The external account number of a JSON record; reports undocumented keys through `unknown`. */
export function jsonKey(plan: FilePlan, object: Record<string, unknown>, unknown: (column: string) => void): string | undefined {
  const ignore = new Set(plan.mapping.ignore);
  let key: unknown;
  for (const [column, value] of jsonColumns(object)) {
    if (ignore.has(column)) continue;
    const field = plan.mapping.rename[column] ?? column;
    if (field === 'external_account_number') key = value;
    else if (!fieldType(plan.kind, field)) unknown(column);
  }
  return keyText(plan.mapping.constants['external_account_number'] ?? key);
}
