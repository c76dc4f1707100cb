// The shape file cut into its statements, each with where it starts in the file, so that an error of the engine
// (which counts lines within the statement it was given) is named at shape.sql:line:column. Semicolons inside
// strings, quoted names, comments and dollar-quoted text do not end a statement.

export interface SqlStatement {
  text: string;
  /** 1-based line and column of the statement's first character in the file. */
  line: number;
  column: number;
}

interface Scan {
  text: string;
  at: number;
}

/** Skips a quoted run ('...', "...": the quote doubled inside) from its opening quote; returns the index after it. */
function skipQuoted(scan: Scan, quote: string): number {
  let at = scan.at + 1;
  for (;;) {
    const close = scan.text.indexOf(quote, at);
    if (close === -1) return scan.text.length;
    if (scan.text[close + 1] !== quote) return close + 1;
    at = close + 2;
  }
}

function skipTo(scan: Scan, end: string, from: number): number {
  const found = scan.text.indexOf(end, from);
  return found === -1 ? scan.text.length : found + end.length;
}

/** The index after the token that starts at scan.at, or undefined when it is plain text. */
function skipToken(scan: Scan): number | undefined {
  const { text, at } = scan;
  const char = text[at];
  if (char === "'" || char === '"') return skipQuoted(scan, char);
  if (char === '-' && text[at + 1] === '-') return skipTo(scan, '\n', at);
  if (char === '/' && text[at + 1] === '*') return skipTo(scan, '*/', at + 2);
  if (char === '$') {
    const tag = /^\$[A-Za-z_]*\$/.exec(text.slice(at, at + 64))?.[0];
    if (tag !== undefined) return skipTo(scan, tag, at + tag.length);
  }
  return undefined;
}

/** True when the text holds nothing but white space and comments. */
function isBlank(text: string): boolean {
  return text.replace(/--[^\n]*|\/\*[\s\S]*?\*\//g, '').trim() === '';
}

function position(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let start = 0;
  for (let at = text.indexOf('\n'); at !== -1 && at < offset; at = text.indexOf('\n', at + 1)) {
    line += 1;
    start = at + 1;
  }
  return { line, column: offset - start + 1 };
}

/** The statements of a SQL text, blank ones left out, each from its first non-blank character. */
export function splitStatements(text: string): SqlStatement[] {
  const statements: SqlStatement[] = [];
  const scan: Scan = { text, at: 0 };
  let start = 0;
  const cut = (end: number): void => {
    const piece = text.slice(start, end);
    if (!isBlank(piece)) {
      // From its first character that is not white space or a comment: the engine counts lines from there.
      const lead = piece.length - piece.replace(/^(?:\s+|--[^\n]*|\/\*[\s\S]*?\*\/)*/, '').length;
      statements.push({ text: piece.slice(lead).trimEnd(), ...position(text, start + lead) });
    }
    start = end + 1;
  };
  while (scan.at < text.length) {
    const after = skipToken(scan);
    if (after !== undefined) scan.at = after;
    else {
      if (text[scan.at] === ';') cut(scan.at);
      scan.at += 1;
    }
  }
  cut(text.length);
  return statements;
}

/** The place a DuckDB message points at (its `LINE n:` and caret), in the file; the statement's start without one. */
export function errorPosition(statement: SqlStatement, message: string): { line: number; column: number } {
  const match = /LINE (\d+): ([^\n]*)\n( *)\^/.exec(message);
  if (!match) return { line: statement.line, column: statement.column };
  const lineInStatement = Number(match[1]);
  const shown = match[2] ?? '';
  let index = (match[3] ?? '').length - `LINE ${match[1]}: `.length;
  // Long lines are shown as a window ("...text..."): find the window in the statement's own line.
  const own = statement.text.split('\n')[lineInStatement - 1] ?? '';
  if (shown.startsWith('...')) {
    const inner = shown.slice(3).replace(/\.\.\.$/, '');
    const found = own.indexOf(inner);
    if (found !== -1) index = found + index - 3;
  }
  const line = statement.line + lineInStatement - 1;
  const column = (lineInStatement === 1 ? statement.column : 1) + Math.max(index, 0);
  return { line, column };
}

/** The engine's message without the excerpt of the statement it points into (the position says where). */
export function plainEngineMessage(message: string): string {
  return message
    .replace(/^Failed to extract statements: /, '')
    .replace(/\n+LINE \d+:[^\n]*\n *\^\s*$/, '')
    .replace(/\s*\n\s*/g, ' ')
    .trim();
}

const NAME = String.raw`(?:"(?:[^"]|"")*"|\w+)`;
const CREATE_VIEW = new RegExp(
  String.raw`^CREATE\s+(?:OR\s+REPLACE\s+)?(?:TEMP(?:ORARY)?\s+)?VIEW\s+(?:IF\s+NOT\s+EXISTS\s+)?` +
    `(?:${NAME}\\.)?(${NAME})`,
  'i',
);

/** The view a statement creates (its name in lower case, unquoted), or undefined for any other statement. */
export function createdView(statement: SqlStatement): string | undefined {
  const match = CREATE_VIEW.exec(statement.text);
  const name = match?.[1];
  if (name === undefined) return undefined;
  return (name.startsWith('"') ? name.slice(1, -1).replaceAll('""', '"') : name).toLowerCase();
}

/** Each view the shape file creates -> the line of its CREATE VIEW in the file (the last one, where made twice). */
export function viewLines(text: string): Map<string, number> {
  const lines = new Map<string, number>();
  for (const statement of splitStatements(text)) {
    const view = createdView(statement);
    if (view !== undefined) lines.set(view, statement.line);
  }
  return lines;
}
