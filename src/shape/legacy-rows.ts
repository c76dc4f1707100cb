// Every legacy row a record comes from (docs/export-format.md "The shape"): a view's optional
// `_rows` column, a list of `'file:line'` texts (`list(_file || ':' || _line)`) or of structs with `file` (or `_file`)
// and `line` (or `_line`) (`list({'file': _file, 'line': _line})`). Carried on as a JSON list of `file:line` texts,
// the form `migrate shape --out` writes in a `_rows` column and any CSV export file may carry. Pure.

/** A legacy row: its file (as `_file` names it) and the line it starts on. */
export interface LegacyRow {
  file: string;
  line: number;
}

export const ROWS_COLUMN = '_rows';

function rowOf(item: unknown): LegacyRow | undefined {
  if (typeof item === 'string') {
    const at = item.lastIndexOf(':');
    const line = Number(item.slice(at + 1));
    return at > 0 && Number.isInteger(line) && line > 0 ? { file: item.slice(0, at), line } : undefined;
  }
  if (typeof item !== 'object' || item === null) return undefined;
  const record = item as Record<string, unknown>;
  const file = record['file'] ?? record['_file'];
  const line = Number(record['line'] ?? record['_line']);
  return typeof file === 'string' && file !== '' && Number.isInteger(line) && line > 0 ? { file, line } : undefined;
}

/** The rows of a parsed `_rows` value, in order, each once; undefined when it is no such list. */
export function legacyRowsOf(value: unknown): LegacyRow[] | undefined {
  if (value === null || value === undefined) return [];
  if (!Array.isArray(value)) return undefined;
  const rows: LegacyRow[] = [];
  const seen = new Set<string>();
  for (const item of value) {
    const row = item === null ? undefined : rowOf(item);
    if (row === undefined) {
      if (item === null) continue;
      return undefined;
    }
    const key = `${row.file}:${row.line}`;
    if (!seen.has(key)) rows.push(row);
    seen.add(key);
  }
  return rows;
}

/** The rows of a `_rows` cell (JSON text); undefined when it cannot be read as one. */
export function legacyRowsOfText(text: string): LegacyRow[] | undefined {
  if (text.trim() === '') return [];
  try {
    return legacyRowsOf(JSON.parse(text));
  } catch {
    return undefined;
  }
}

/** The rows as a `_rows` cell holds them: a JSON list of `file:line` texts. */
export function legacyRowsText(rows: readonly LegacyRow[]): string {
  return JSON.stringify(rows.map((row) => `${row.file}:${row.line}`));
}
