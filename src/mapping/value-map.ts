// A field's value map (docs/export-format.md "The mapping file", `values`): the cell's trimmed text is looked up
// exactly, then regardless of case, then the `"*"` entry, the default for any other value that is not empty. Pure.

/** A value the mapping file gives for a field (constants, defaults, value maps). */
export type CellValue = string | number | boolean | null | unknown[] | Record<string, unknown>;

/** The key of a value map's default entry. */
export const ANY_VALUE = '*';

export interface ValueMap {
  exact: ReadonlyMap<string, CellValue>;
  /** Keys in lower case (two keys equal but for case with different values are refused in the mapping file). */
  folded: ReadonlyMap<string, CellValue>;
  /** `"*"`: the value of every other non-empty cell; undefined without one (the cell is read as it is). */
  fallback: { value: CellValue } | undefined;
}

export function compileValueMap(entries: Record<string, CellValue>): ValueMap {
  const exact = new Map<string, CellValue>();
  const folded = new Map<string, CellValue>();
  for (const [key, value] of Object.entries(entries)) {
    if (key === ANY_VALUE) continue;
    exact.set(key, value);
    folded.set(key.toLowerCase(), value);
  }
  const fallback = Object.hasOwn(entries, ANY_VALUE) ? { value: entries[ANY_VALUE] as CellValue } : undefined;
  return { exact, folded, fallback };
}

/** What a cell's trimmed text maps to; `found: false` when the map says nothing of it (the cell is read as it is). */
export function lookUpValue(map: ValueMap, key: string): { found: true; value: CellValue } | { found: false } {
  const exact = map.exact.get(key);
  if (exact !== undefined || map.exact.has(key)) return { found: true, value: exact as CellValue };
  const folded = map.folded.get(key.toLowerCase());
  if (folded !== undefined || map.folded.has(key.toLowerCase())) return { found: true, value: folded as CellValue };
  if (map.fallback !== undefined && key !== '') return { found: true, value: map.fallback.value };
  return { found: false };
}

/** Keys of one value map equal but for case that map to different values: the map cannot say which one a cell means. */
export function caseClashes(entries: Record<string, CellValue>): Array<[string, string]> {
  const seen = new Map<string, string>();
  const clashes: Array<[string, string]> = [];
  for (const [key, value] of Object.entries(entries)) {
    const folded = key.toLowerCase();
    const earlier = seen.get(folded);
    if (earlier === undefined) seen.set(folded, key);
    else if (JSON.stringify(entries[earlier]) !== JSON.stringify(value)) clashes.push([earlier, key]);
  }
  return clashes;
}
