import path from 'node:path';
import type { CountryCode } from 'libphonenumber-js';
import type { Contract, Dialect, TenantFields } from '../schema/index.js';
import { FILE_KINDS, type FileKind } from '../sources/kinds.js';
import { parseDateFormat, type DateFormat } from './date-format.js';
import type { FileMappingInput, MappingFileInput } from './mapping-file.js';
import type { ShapeSource } from '../shape/index.js';

// The mapping file's rules made complete (defaults filled in): what mapping a record needs, and
// nothing about where the rules came from beyond the file's path for the reports.

export type CellValue = string | number | boolean | null | unknown[] | Record<string, unknown>;

/** One file kind's mapping rules, complete (defaults filled in). */
export interface FileMapping {
  /** source column -> field path */
  rename: Record<string, string>;
  ignore: string[];
  constants: Record<string, CellValue>;
  defaults: Record<string, CellValue>;
  /** field path -> source value -> value */
  values: Record<string, Record<string, CellValue>>;
  dateFormats: DateFormat[];
  datetimeFormats: DateFormat[];
  utcOffset: string | undefined;
  scale: Record<string, number>;
  /** Amount fields whose column is already in minor units (see the mapping file's `minor_units`). */
  minorUnits: string[];
  delimiter: string;
  encoding: string;
}

/** Everything reading and mapping an export needs: the supplier to fill in, the phone country, each kind's rules. */
export interface ExportMapping {
  /** --supplier, else MIGRATE_SUPPLIER, else the file's import_supplier; used where a record has none. */
  importSupplier: string | undefined;
  /** Absolute path of the mapping file read, or undefined when none was found. */
  configFile: string | undefined;
  phoneDefaultCountry: CountryCode | undefined;
  /**
   * The mapping file's `multiple_payment_instructions`: the platform deployment accepts several
   * payment instructions per account. Default false: a second one for an account is an export error.
   */
  multiplePaymentInstructions: boolean;
  mapping: Record<FileKind, FileMapping>;
  /** Declared payload fields beyond the spec's (`tenant_fields`), copied into the payload as given. */
  tenantFields: TenantFields;
  /**
   * The tenant's contract (--contract, else the mapping file's `contract`): every body push would send is checked
   * against it; undefined without one.
   */
  contract?: Contract | undefined;
  /**
   * The mapping file's `sources` and `shape` (docs/export-format.md "Shaping legacy files with SQL"): the export is
   * legacy files shaped by SQL into the record kinds; undefined for an export in the tool's own layout.
   */
  shape?: ShapeRules | undefined;
  /**
   * The wire dialect the payloads are checked for: the command's (--dialect, MIGRATE_DIALECT, the mapping file, the
   * state directory's), set by the command before the export is read; the spec dialect when not set.
   */
  dialect?: Dialect | undefined;
}

/** The shaping stage's rules: the shape file (absolute, and as messages name it) and its sources, complete. */
export interface ShapeRules {
  file: string;
  name: string;
  sources: ShapeSource[];
}

/** The complete rules of a validated mapping file (`{}` when there is none). */
export function exportMappingOf(
  file: MappingFileInput,
  importSupplier: string | undefined,
  configFile: string | undefined,
): ExportMapping {
  return {
    importSupplier,
    configFile,
    phoneDefaultCountry: file.phone_default_country as CountryCode | undefined,
    multiplePaymentInstructions: file.multiple_payment_instructions ?? false,
    mapping: Object.fromEntries(
      FILE_KINDS.map((kind) => [kind, completeMapping(file, file.mapping?.[kind] ?? {})]),
    ) as Record<FileKind, FileMapping>,
    tenantFields: file.tenant_fields ?? {},
    shape: shapeRulesOf(file, configFile),
  };
}

function shapeRulesOf(file: MappingFileInput, configFile: string | undefined): ShapeRules | undefined {
  if (file.shape === undefined || file.sources === undefined || configFile === undefined) return undefined;
  const absolute = path.resolve(path.dirname(configFile), file.shape);
  const sources = Object.entries(file.sources).map(([table, source]): ShapeSource => ({
    table,
    glob: source.file ?? source.files ?? '',
    several: source.files !== undefined,
    format: source.format,
    encoding: source.encoding ?? file.encoding ?? 'utf8',
    delimiter: source.delimiter ?? file.delimiter ?? ',',
    header: source.header ?? true,
  }));
  return { file: absolute, name: file.shape, sources };
}

function formats(value: string | string[] | undefined, withTime: boolean): DateFormat[] {
  const list = value === undefined ? [] : Array.isArray(value) ? value : [value];
  return list.map((source) => {
    const { format } = parseDateFormat(source, withTime);
    if (!format) throw new Error(`unreachable: ${source} passed the schema`);
    return format;
  });
}

function completeMapping(file: MappingFileInput, mapping: FileMappingInput): FileMapping {
  return {
    rename: mapping.rename ?? {},
    ignore: mapping.ignore ?? [],
    constants: mapping.constants ?? {},
    defaults: mapping.defaults ?? {},
    values: mapping.values ?? {},
    dateFormats: formats(mapping.date_format, false),
    datetimeFormats: formats(mapping.datetime_format, true),
    utcOffset: mapping.utc_offset,
    scale: mapping.scale ?? {},
    minorUnits: mapping.minor_units ?? [],
    delimiter: mapping.delimiter ?? file.delimiter ?? ',',
    encoding: mapping.encoding ?? file.encoding ?? 'utf8',
  };
}
