import type { ValidationIssue } from '../schema/index.js';
import { kindOfFile } from '../sources/kinds.js';
import { fieldType } from './fields.js';
import type { Origin, SourceIssue } from './types.js';

// Service `attr` -> file, line and source column (spec "Validation error body": a dot-delimited
// path with zero-based indexes). Works from plain JSON data, so the engine can store `origins`
// and `columnOf` in its ledger and locate a create 400 on a later run.

/** What locating needs: an account (ExportAccount fits) or a batch of post-import items (see originsOfItems). */
export interface Locatable {
  externalAccountNumber: string;
  /**
   * attr prefix -> the record it came from: `''` the account record, `customers.0`, `supply_addresses.1`, `notes.3`,
   * ...
   */
  origins: Record<string, Origin>;
  /** file -> field path -> source column, where a mapping file renamed the column. */
  columnOf?: Record<string, Record<string, string>>;
}

/**
 * Inline lists only a JSON accounts record can carry (docs/export-format.md "Columns"); in a CSV file they are never a
 * column.
 */
const JSON_ONLY: ReadonlySet<string> = new Set(['customers', 'supply_addresses']);

function longestOrigin(
  origins: Record<string, Origin>,
  parts: string[],
): { prefix: string[]; origin: Origin } | undefined {
  for (let length = parts.length; length >= 0; length -= 1) {
    const prefix = parts.slice(0, length);
    const origin = origins[prefix.join('.')];
    if (origin) return { prefix, origin };
  }
  return undefined;
}

/**
 * The source column holding `rest` (a path inside the record): the longest prefix that is a column of the file's kind.
 */
export function columnOfPath(
  file: string,
  rest: string[],
  columnOf: Record<string, Record<string, string>> | undefined,
): string | undefined {
  // A file whose name does not say its kind (found by a glob of the mapping file, or a legacy file a shape read) has
  // its columns in columnOf: those it holds, or, for a shaped record, those a view passes through; no other.
  const kind = kindOfFile(file);
  const isField = (field: string): boolean => kind !== undefined && !!fieldType(kind, field);
  for (let length = rest.length; length >= 1; length -= 1) {
    const field = rest.slice(0, length).join('.');
    const renamed = columnOf?.[file]?.[field];
    if (renamed !== undefined) return renamed;
    // Inline lists are fields of accounts records only, and never a column of a CSV file.
    if (isField(field) && !(JSON_ONLY.has(field) && file.toLowerCase().endsWith('.csv'))) return field;
  }
  return undefined;
}

/** The origin of a field path inside a record: the row holding its longest prefix that another row holds, if any. */
export function fieldOrigin(origin: Origin, path: readonly string[]): Origin | undefined {
  if (origin.fields === undefined) return undefined;
  for (let length = path.length; length >= 1; length -= 1) {
    const held = origin.fields[path.slice(0, length).join('.')];
    if (held !== undefined) return held;
  }
  return undefined;
}

export function locateIssue(source: Locatable, issue: ValidationIssue): SourceIssue {
  const parts = issue.attr === '' ? [] : issue.attr.split('.');
  const found = longestOrigin(source.origins, parts);
  const base = {
    externalAccountNumber: source.externalAccountNumber,
    code: issue.code,
    message: issue.detail,
    ...(issue.attr === '' ? {} : { attr: issue.attr }),
  };
  if (!found) return { file: '', line: 0, ...base };
  const rest = parts.slice(found.prefix.length);
  // A field another legacy row of the record holds (the record names its rows): named at that row and column.
  const held = fieldOrigin(found.origin, rest);
  if (held !== undefined)
    return { file: held.file, line: held.line, ...(held.column === undefined ? {} : { column: held.column }), ...base };
  // An origin with its own column (a customer given inline in a JSON accounts record) is the fallback.
  const column =
    (rest.length > 0 ? columnOfPath(found.origin.file, rest, source.columnOf) : undefined) ?? found.origin.column;
  return { file: found.origin.file, line: found.origin.line, ...(column === undefined ? {} : { column }), ...base };
}

/**
 * Origins of a batch of post-import items as sent in one request (`notes.0`, `notes.1`, ...), for locating that
 * request's 400.
 */
export function originsOfItems(listField: string, items: Array<{ origin: Origin }>): Record<string, Origin> {
  return Object.fromEntries(items.map((item, index) => [`${listField}.${index}`, item.origin]));
}
