// Small pieces of SQL text the shape stage writes itself (the team's SQL is never rewritten).

/** A name as a DuckDB identifier, whatever characters it holds ("Account No" -> "Account No", quotes doubled). */
export function quoteIdentifier(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/** A text as a DuckDB string literal. */
export function quoteLiteral(text: string): string {
  return `'${text.replaceAll("'", "''")}'`;
}

/**
 * A text expression as it must be selected for the client to hand it over whole: @duckdb/node-api decodes each VARCHAR
 * with a default TextDecoder, which drops a U+FEFF that opens the value (a byte order mark to it). A value opening
 * with one is selected with a second, so that the one the data holds arrives.
 */
export function clientText(expression: string): string {
  return `CASE WHEN starts_with(${expression}, chr(65279)) THEN chr(65279) || ${expression} ELSE ${expression} END`;
}
