// The cross-key checks of a source of the mapping file (docs/export-format.md "Shaping legacy files with SQL"), which
// the schema alone cannot say: which options go with which format, and a fixed-width layout whose columns fit
// together. Every problem names the setting at fault.

type Problem = { key: string; message: string };
type FixedColumnInput = { name: string; start: number; width: number };

/** What these checks read of a source as the mapping file's schema parsed it (the schema's own type fits it). */
interface SourceInput {
  format?: 'csv' | 'json' | 'ndjson' | 'fixed' | undefined;
  delimiter?: string | undefined;
  header?: boolean | undefined;
  quote?: string | false | undefined;
  columns?: Array<string | FixedColumnInput> | undefined;
}

const CSV_ONLY = ['quote', 'header', 'delimiter'] as const;
const PROVENANCE = ['_file', '_line'];

export function sourceProblems(at: string, source: SourceInput, topDelimiter: string): Problem[] {
  if (source.format === 'fixed') return fixedProblems(at, source);
  const problems: Problem[] = [];
  if (source.format === 'json' || source.format === 'ndjson')
    for (const key of [...CSV_ONLY, 'columns'] as const)
      if (source[key] !== undefined)
        problems.push({
          key: `${at}.${key}`,
          message: `applies to delimited files ("format": "csv"), not ${source.format}`,
        });
  const delimiter = source.delimiter ?? topDelimiter;
  if (typeof source.quote === 'string' && delimiter.includes(source.quote))
    problems.push({ key: `${at}.quote`, message: `${JSON.stringify(source.quote)} is in the delimiter` });
  const columns = source.columns ?? [];
  columns.forEach((column, index) => {
    if (typeof column !== 'string')
      problems.push({
        key: `${at}.columns.${index}`,
        message:
          'a column of a delimited file is its name; {"name", "start", "width"} places a column of a fixed-width ' +
          'file ("format": "fixed")',
      });
  });
  if (source.columns !== undefined && source.header !== false)
    problems.push({
      key: `${at}.columns`,
      message:
        'names the columns of a file without a header row: give "header": false too (a file with a header row is ' +
        "read by its header's names)",
    });
  problems.push(
    ...nameProblems(
      at,
      columns.map((column) => (typeof column === 'string' ? column : column.name)),
    ),
  );
  return problems;
}

/** A fixed-width source: a layout of placed columns that do not overlap, and no delimited file's options. */
function fixedProblems(at: string, source: SourceInput): Problem[] {
  const problems: Problem[] = [];
  // A header is a first line of column titles, skipped ("header": true); a quote or delimiter has no meaning here.
  for (const key of ['quote', 'delimiter'] as const)
    if (source[key] !== undefined) problems.push({ key: `${at}.${key}`, message: `a fixed-width file has no ${key}` });
  if (source.columns === undefined)
    return [
      ...problems,
      {
        key: `${at}.columns`,
        message:
          'is required with "format": "fixed": each column\'s name, first character (from 1) and width, such as ' +
          '[{"name": "VKONT", "start": 1, "width": 12}, {"name": "SORT_CODE", "start": 13, "width": 6}]',
      },
    ];
  const placed: Array<FixedColumnInput & { index: number }> = [];
  source.columns.forEach((column, index) => {
    if (typeof column === 'string')
      problems.push({
        key: `${at}.columns.${index}`,
        message: `a fixed-width column is placed: {"name": ${JSON.stringify(column)}, "start": ..., "width": ...}`,
      });
    else placed.push({ ...column, index });
  });
  const byStart = [...placed].sort((a, b) => a.start - b.start || a.index - b.index);
  byStart.forEach((column, position) => {
    const before = byStart[position - 1];
    if (before && column.start < before.start + before.width) {
      const [first, second] = before.index < column.index ? [before, column] : [column, before];
      problems.push({
        key: `${at}.columns.${second.index}`,
        message: `${span(second)} overlaps ${span(first)}`,
      });
    }
  });
  problems.push(
    ...nameProblems(
      at,
      placed.map((column) => column.name),
    ),
  );
  return problems;
}

const span = (column: FixedColumnInput): string =>
  `${column.name} (characters ${column.start} to ${column.start + column.width - 1})`;

/** Column names a table can hold: each once (SQL names are not case-sensitive), and not a provenance column. */
function nameProblems(at: string, names: string[]): Problem[] {
  const problems: Problem[] = [];
  const seen = new Map<string, number>();
  names.forEach((name, index) => {
    const folded = name.toLowerCase();
    if (PROVENANCE.includes(folded))
      problems.push({
        key: `${at}.columns.${index}`,
        message: `${name} is a column the tool adds (where a row comes from)`,
      });
    const earlier = seen.get(folded);
    if (earlier !== undefined)
      problems.push({
        key: `${at}.columns.${index}`,
        message: `${name} is the name of column ${earlier} too (SQL names are not case-sensitive)`,
      });
    else seen.set(folded, index);
  });
  return problems;
}
