import path from 'node:path';
import type { CountryCode } from 'libphonenumber-js';
import type { Contract, Dialect, TenantFields } from '../schema/index.js';
import type { FileGlobs } from '../sources/file-globs.js';
import { FILE_KINDS, type FileKind } from '../sources/kinds.js';
import { parseDateFormat, type DateFormat } from './date-format.js';
import { renameTargets, type FileMappingInput, type MappingFileInput } from './mapping-file.js';
import type { NumberFormat } from './number-format.js';
import type { DstChoice } from './time-zone.js';
import { compileValueMap, type CellValue, type ValueMap } from './value-map.js';
import type { ShapeLimits, ShapeSource } from '../shape/index.js';

// The mapping file's rules made complete (defaults filled in): what mapping a record needs, and
// nothing about where the rules came from beyond the file's path for the reports.

export type { CellValue } from './value-map.js';

/** One file kind's mapping rules, complete (defaults filled in). */
export interface FileMapping {
  /** The glob naming this kind's files (`mapping.<kind>.file`); undefined: found by base name. */
  file?: string | undefined;
  /** source column -> the field paths it fills (usually one; several where one column feeds several fields) */
  rename: Record<string, string[]>;
  ignore: string[];
  /** `ignore`: columns that are not documented fields are left out (listed once per file), not reported one by one. */
  unmapped: 'report' | 'ignore';
  constants: Record<string, CellValue>;
  defaults: Record<string, CellValue>;
  /** field path -> its value map (source value -> value; exact, then regardless of case, then `"*"`) */
  values: Record<string, ValueMap>;
  dateFormats: DateFormat[];
  datetimeFormats: DateFormat[];
  utcOffset: string | undefined;
  /** `timezone`: datetimes without an offset are local times in this IANA zone (exclusive with utcOffset). */
  timeZone?: string | undefined;
  /** `dst`: what a local time that occurs twice in timeZone means; undefined: such a time is an error. */
  dst?: DstChoice | undefined;
  scale: Record<string, number>;
  /** How amounts and numbers are written (`number_format`: currency, thousands separator, minus); undefined: plain. */
  numberFormat?: NumberFormat | undefined;
  /** `on_invalid: omit`: optional fields whose invalid value is dropped and listed, not held against the account. */
  omitInvalid?: readonly string[] | undefined;
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
  /**
   * `"force_add_to_current_statement": true` under the mapping file's `transactions`, or the command's run setting:
   * the service moves a transaction dated before its open statement period into it instead of refusing it (spec
   * "Create transactions"). Default false.
   */
  forceAddToCurrentStatement: boolean;
  /** The open statement period's first day, when the command was told it (set by the command). */
  openPeriodStart?: string | undefined;
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
  /** The engine's memory and temporary disk the command was given (flag, environment, run configuration). */
  limits?: Partial<ShapeLimits>;
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
    forceAddToCurrentStatement: file.mapping?.transactions?.force_add_to_current_statement ?? false,
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
    header: source.header ?? source.format !== 'fixed',
    quote: source.quote ?? '"',
    columns: source.format === 'fixed' ? undefined : source.columns?.filter((column) => typeof column === 'string'),
    layout: source.format === 'fixed' ? source.columns?.filter((column) => typeof column !== 'string') : undefined,
    ...(source.control === undefined
      ? {}
      : { control: { fileColumn: source.control.file_column, rowsColumn: source.control.rows_column } }),
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
    file: mapping.file,
    rename: Object.fromEntries(
      Object.entries(mapping.rename ?? {}).map(([column, targets]) => [column, renameTargets(targets)]),
    ),
    ignore: mapping.ignore ?? [],
    unmapped: mapping.unmapped ?? 'report',
    constants: mapping.constants ?? {},
    defaults: mapping.defaults ?? {},
    values: Object.fromEntries(
      Object.entries(mapping.values ?? {}).map(([field, entries]) => [field, compileValueMap(entries)]),
    ),
    dateFormats: formats(mapping.date_format, false),
    datetimeFormats: formats(mapping.datetime_format, true),
    utcOffset: mapping.utc_offset,
    timeZone: mapping.timezone,
    dst: mapping.dst,
    scale: mapping.scale ?? {},
    minorUnits: mapping.minor_units ?? [],
    omitInvalid: Object.keys(mapping.on_invalid ?? {}),
    numberFormat:
      mapping.number_format === undefined
        ? undefined
        : {
            currency: mapping.number_format.currency,
            thousands: mapping.number_format.thousands,
            negative: mapping.number_format.negative ?? 'leading',
          },
    delimiter: mapping.delimiter ?? file.delimiter ?? ',',
    encoding: mapping.encoding ?? file.encoding ?? 'utf8',
  };
}

/** The kinds whose files the mapping file declares by glob, for finding the export's files. */
export function fileGlobsOf(config: Pick<ExportMapping, 'mapping'>): FileGlobs {
  return Object.fromEntries(
    FILE_KINDS.flatMap((kind) => {
      const glob = config.mapping[kind].file;
      return glob === undefined ? [] : [[kind, glob]];
    }),
  );
}
