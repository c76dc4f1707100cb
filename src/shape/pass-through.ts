// Which columns of a view are a legacy column passed through, as it is or under a new name (docs/export-format.md
// "Shaping legacy files with SQL"): read from the view's parse tree (DuckDB's json_serialize_sql). A select item
// that is a plain reference to a column of the table the view's `_file` comes from is a pass-through; anything
// computed is not. Both branches of a UNION ALL must pass the same column through. Pure: the tree in, names out.

/** The table a view's `_file` comes from, and its columns passed through: view column -> legacy column. */
export interface PassThrough {
  table: string | undefined;
  columns: Record<string, string>;
  /**
   * Every view column that is a plain reference to a column of a source table, of the `_file` table or another one
   * of a join (view column -> table in lower case and column): with the legacy rows a record names (`_rows`), the row
   * of that table holding the value. Absent when there is none.
   */
  references?: Record<string, { table: string; column: string }>;
}

interface Node {
  type?: string;
  select_list?: Item[];
  from_table?: TableRef;
  left?: Node;
  right?: Node;
  children?: Node[];
}

interface Item {
  class?: string;
  alias?: string;
  column_names?: string[];
  relation_name?: string;
  exclude_list?: unknown[];
  replace_list?: unknown[];
}

interface TableRef {
  type?: string;
  alias?: string;
  table_name?: string;
  left?: TableRef;
  right?: TableRef;
}

/** The source tables the FROM clause reads, by the name a column reference uses (alias or table). */
function baseTables(ref: TableRef | undefined, into: Map<string, string>): void {
  if (!ref) return;
  if (ref.type === 'BASE_TABLE' && ref.table_name !== undefined) {
    into.set((ref.alias || ref.table_name).toLowerCase(), ref.table_name.toLowerCase());
    return;
  }
  if (ref.type === 'JOIN') {
    baseTables(ref.left, into);
    baseTables(ref.right, into);
  }
}

/** The table (lower case) and column a plain column reference names; undefined when it cannot be told. */
/** The table a plain column reference reads (by the name the query gives it, and the table's own), and its column. */
function columnRef(item: Item, tables: Map<string, string>): { as: string; table: string; column: string } | undefined {
  if (item.class !== 'COLUMN_REF' || !item.column_names) return undefined;
  const names = item.column_names;
  if (names.length === 1 && tables.size === 1) {
    const [as, table] = [...tables.entries()][0] as [string, string];
    return { as, table, column: names[0] as string };
  }
  if (names.length === 2) {
    const as = (names[0] as string).toLowerCase();
    const table = tables.get(as);
    return table === undefined ? undefined : { as, table, column: names[1] as string };
  }
  return undefined;
}

interface Branch {
  table: string | undefined;
  pairs: Array<[string, string] | undefined>;
  /** Each select item that is a plain reference to a source table's column: that table and column. */
  refs: Array<{ name: string; table: string; column: string } | undefined>;
}

function selectPassThrough(node: Node, columnsOf: ReadonlyMap<string, readonly string[]>): Branch {
  const tables = new Map<string, string>();
  baseTables(node.from_table, tables);
  const list = node.select_list ?? [];
  const fileItem = list.find((item) => outputName(item) === '_file');
  const provenance = fileItem ? columnRef(fileItem, tables) : undefined;
  const out: Array<[string, string] | undefined> = [];
  const refs: Branch['refs'] = [];
  for (const item of list) {
    if (item.class === 'STAR' && tables.size === 1 && !item.relation_name && (item.exclude_list ?? []).length === 0) {
      const table = [...tables.values()][0] as string;
      for (const column of columnsOf.get(table) ?? []) {
        out.push([column, column]);
        refs.push({ name: column, table, column });
      }
      out.push(['_file', '_file'], ['_line', '_line']);
      refs.push(undefined, undefined);
      continue;
    }
    const ref = columnRef(item, tables);
    const source = ref && columnsOf.get(ref.table)?.includes(ref.column) ? ref : undefined;
    out.push(source && provenance && source.as === provenance.as ? [outputName(item), source.column] : undefined);
    refs.push(source ? { name: outputName(item), table: source.table, column: source.column } : undefined);
  }
  const starTable = tables.size === 1 ? [...tables.values()][0] : undefined;
  return {
    table: provenance?.table ?? (out.some((pair) => pair?.[0] === '_file') ? starTable : undefined),
    pairs: out,
    refs,
  };
}

function outputName(item: Item): string {
  return item.alias || (item.column_names?.[item.column_names.length - 1] ?? '');
}

function branches(node: Node): Node[] {
  if (node.type !== 'SET_OPERATION_NODE') return [node];
  const parts = node.children ?? [node.left, node.right].filter((part): part is Node => part !== undefined);
  return parts.flatMap(branches);
}

/**
 * The pass-through columns of a view, from its query's parse tree; `columnsOf` gives each source table's columns
 * (table names in lower case). Names of the output are the first branch's.
 */
export function passThroughOf(node: Node, columnsOf: ReadonlyMap<string, readonly string[]>): PassThrough {
  const [first, ...others] = branches(node).map((branch) => selectPassThrough(branch, columnsOf));
  const references = first ? referencesOf(first, others) : {};
  const found = Object.keys(references).length === 0 ? {} : { references };
  if (!first?.table || others.some((other) => other.table !== first.table))
    return { table: undefined, columns: {}, ...found };
  const columns: Record<string, string> = {};
  first.pairs.forEach((pair, index) => {
    if (!pair || pair[0] === '_file' || pair[0] === '_line') return;
    if (others.every((other) => other.pairs[index]?.[1] === pair[1])) columns[pair[0]] = pair[1];
  });
  return { table: first.table, columns, ...found };
}

/** The view columns every branch takes from one column of one source table (names: the first branch's). */
function referencesOf(first: Branch, others: Branch[]): NonNullable<PassThrough['references']> {
  const references: NonNullable<PassThrough['references']> = {};
  first.refs.forEach((ref, index) => {
    if (!ref || ref.name === '' || ref.name === '_file' || ref.name === '_line' || ref.name === '_rows') return;
    const same = (other: Branch): boolean =>
      other.refs[index]?.table === ref.table && other.refs[index]?.column === ref.column;
    if (others.every(same)) references[ref.name] = { table: ref.table, column: ref.column };
  });
  return references;
}
