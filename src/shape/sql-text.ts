// Small pieces of SQL text the shape stage writes itself (the team's SQL is never rewritten).

/** A name as a DuckDB identifier, whatever characters it holds ("Account No" -> "Account No", quotes doubled). */
export function quoteIdentifier(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/** A text as a DuckDB string literal. */
export function quoteLiteral(text: string): string {
  return `'${text.replaceAll("'", "''")}'`;
}
