import path from 'node:path';
import type { ExportMapping } from '../mapping/mapping-rules.js';
import type { LegacyRow, ShapedExport } from '../shape/index.js';
import { readCsv } from '../sources/index.js';
import { kindOfFile } from '../sources/kinds.js';

// The rows `validate --show` prints for chosen accounts: the export's rows as the files hold them (file:line and
// raw values) and, for a shaped export, the records each view made of them.

export interface ShownRow {
  /** The source table (shaped export), the view (`accounts`, ...), or the export file's kind. */
  what: string;
  file: string;
  line: number;
  values: Array<[string, string | null]>;
  /** A legacy row a record of this account names among its rows (`_rows`): the account's external account number. */
  account?: string;
}

export interface ShownRows {
  /** The legacy rows (a shaped export's source tables) or the export's own rows. */
  legacy: ShownRow[];
  /** The records a shape made (empty for an export in the tool's own layout). */
  shaped: ShownRow[];
}

export type KeyColumnOf = (kind: string) => string;

/** The rows of the chosen accounts in a shaped export: each view's records, then the legacy rows they carry. */
export async function shapedRowsOf(
  shaped: ShapedExport,
  keyColumnOf: KeyColumnOf,
  keys: readonly string[],
): Promise<ShownRows> {
  const records: Array<ShownRow & { rows?: LegacyRow[] | undefined }> = [];
  const named = new Map<string, string>();
  for (const view of shaped.views) {
    const keyIndex = view.columns.indexOf(keyColumnOf(view.kind));
    for await (const batch of shaped.rows(view, keyColumnOf(view.kind), keys))
      for (const row of batch) {
        records.push({
          what: view.kind,
          file: row.file,
          line: row.line,
          values: view.columns.map((column, index): [string, string] => [column, row.cells[index] ?? '']),
          rows: row.rows,
        });
        for (const other of row.rows ?? []) named.set(`${other.file}:${other.line}`, row.cells[keyIndex]?.trim() ?? '');
      }
  }
  // Every legacy row of each record: the one it carries and those it names in `_rows`.
  const lines = [
    ...new Map(
      records.flatMap((row) => [row, ...(row.rows ?? [])]).map((row) => [`${row.file}:${row.line}`, row]),
    ).values(),
  ];
  const legacy = await shaped.sourceRows(lines, keys);
  return {
    shaped: records.map(({ rows: _rows, ...record }) => record),
    legacy: legacy.map((row) => {
      const account = named.get(`${row.file}:${row.line}`);
      return { what: row.table, file: row.file, line: row.line, values: row.values, ...(account ? { account } : {}) };
    }),
  };
}

/** Rows of an export in the tool's own layout at the given lines (CSV files; a JSON record is named by its line). */
export async function exportRowsAt(
  dir: string,
  config: ExportMapping,
  lines: ReadonlyArray<{ file: string; line: number }>,
): Promise<ShownRows> {
  const byFile = new Map<string, Set<number>>();
  for (const { file, line } of lines) byFile.set(file, (byFile.get(file) ?? new Set()).add(line));
  const legacy: ShownRow[] = [];
  for (const [file, wanted] of byFile) {
    const kind = kindOfFile(file);
    if (!kind || !file.toLowerCase().endsWith('.csv')) {
      for (const line of wanted) legacy.push({ what: kind ?? '', file, line, values: [] });
      continue;
    }
    const mapping = config.mapping[kind];
    let header: string[] | undefined;
    const options = { file, encoding: mapping.encoding, delimiter: mapping.delimiter };
    for await (const row of readCsv(path.join(dir, file), options)) {
      if (!header) header = row.cells;
      else if (wanted.has(row.line))
        legacy.push({
          what: kind,
          file,
          line: row.line,
          values: row.cells.map((cell, index) => [header?.[index] ?? `#${index + 1}`, cell]),
        });
    }
  }
  return { legacy, shaped: [] };
}
