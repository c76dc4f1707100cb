// The shape file cut into its statements, each with where it starts in the file, so that an error of the engine is
// named at shape.sql:line:column and a statement the engine refuses by its kind is named where it stands. The cut
// follows the engine's own reading of SQL text (DuckDB's PostgreSQL lexer): a -- comment ends at a carriage return or
// a line feed; block comments nest; '...' and "..." double their quote; E'...' also takes backslash escapes; a dollar
// quote ($$ or $tag$, the tag any letters, digits after the first, or characters past ASCII) runs to the same tag.
// The engine is the judge of what runs (run-shape.ts); this reading only says where each of its statements is.

export interface SqlStatement {
  /** The statement from its first character that is not white space or a comment to its end (its ;, left out). */
  text: string;
  /** The offset of its end in the file. */
  end: number;
  /** 1-based line and column of `start`: a line ends at CR LF, CR or LF, as the engine counts them. */
  line: number;
  column: number;
}

/**
 * The engine's white space: ASCII's, and the Unicode spaces it turns into plain ones before it reads a statement
 * (no-break, en to zero-width, narrow no-break, medium mathematical, word joiner, ideographic, byte order mark). Any
 * other character past ASCII is a letter to it.
 */
const SPACE = /[ \t\n\r\f\v\u00a0\u2000-\u200b\u202f\u205f\u2060\u3000\ufeff]/;
/** A character that continues a word: a `$` or an `E` after one is part of the word, not a quote. */
const WORD = /[A-Za-z0-9_$\u0080-\uffff]/;
const DOLLAR_TAG = /\$(?:[A-Za-z_\u0080-\uffff][A-Za-z0-9_\u0080-\uffff]*)?\$/y;

/** The index after a quoted run ('...' or "...", the quote doubled inside) opening at `at`; with `escapes`, \x too. */
function quotedEnd(text: string, at: number, quote: string, escapes: boolean): number {
  for (let next = at + 1; next < text.length; next += 1) {
    const char = text[next];
    if (escapes && char === '\\') next += 1;
    else if (char === quote) {
      if (text[next + 1] !== quote) return next + 1;
      next += 1;
    }
  }
  return text.length;
}

/** The index after a block comment opening at `at`, comments inside it nested as the engine nests them. */
function blockCommentEnd(text: string, at: number): number {
  let depth = 0;
  for (let next = at; next < text.length - 1; next += 1) {
    const pair = text.slice(next, next + 2);
    if (pair !== '/*' && pair !== '*/') continue;
    depth += pair === '/*' ? 1 : -1;
    next += 1;
    if (depth === 0) return next + 1;
  }
  return text.length;
}

type Token = { kind: 'comment' | 'text'; end: number };

/** The comment, quoted run or dollar quote opening at `at`, or undefined where a plain character stands. */
function tokenAt(text: string, at: number): Token | undefined {
  const char = text[at];
  const next = text[at + 1];
  const afterWord = at > 0 && WORD.test(text[at - 1] ?? '');
  if (char === '-' && next === '-') {
    const lineEnd = text.slice(at).search(/[\r\n]/);
    return { kind: 'comment', end: lineEnd === -1 ? text.length : at + lineEnd };
  }
  if (char === '/' && next === '*') return { kind: 'comment', end: blockCommentEnd(text, at) };
  if (char === "'" || char === '"') return { kind: 'text', end: quotedEnd(text, at, char, false) };
  if ((char === 'E' || char === 'e') && next === "'" && !afterWord)
    return { kind: 'text', end: quotedEnd(text, at + 1, "'", true) };
  if (char === '$' && !afterWord) {
    DOLLAR_TAG.lastIndex = at;
    const tag = DOLLAR_TAG.exec(text)?.[0];
    if (tag === undefined) return undefined;
    const close = text.indexOf(tag, at + tag.length);
    return { kind: 'text', end: close === -1 ? text.length : close + tag.length };
  }
  return undefined;
}

/** Where each line of `text` starts (a line ends at CR LF, CR or LF). */
function lineStarts(text: string): number[] {
  const starts = [0];
  for (const match of text.matchAll(/\r\n|\r|\n/g)) starts.push(match.index + match[0].length);
  return starts;
}

/** 1-based line and column of `offset` in `text`. */
export function positionIn(text: string, offset: number): { line: number; column: number } {
  return positionOf(lineStarts(text), offset);
}

/** 1-based line and column of `offset` in a text whose lines start at `starts` (a binary search: big files too). */
function positionOf(starts: number[], offset: number): { line: number; column: number } {
  let low = 0;
  let high = starts.length - 1;
  while (low < high) {
    const middle = Math.ceil((low + high) / 2);
    if ((starts[middle] ?? 0) <= offset) low = middle;
    else high = middle - 1;
  }
  return { line: low + 1, column: offset - (starts[low] ?? 0) + 1 };
}

/** The statements of a SQL text, blank ones (white space, comments, a lone ;) left out. */
export function splitStatements(text: string): SqlStatement[] {
  const starts = lineStarts(text);
  const statements: SqlStatement[] = [];
  let first: number | undefined;
  const cut = (end: number): void => {
    if (first !== undefined) statements.push({ text: text.slice(first, end), end, ...positionOf(starts, first) });
    first = undefined;
  };
  for (let at = 0; at < text.length;) {
    const char = text[at] ?? '';
    if (char === ';') cut(at);
    if (char === ';' || SPACE.test(char)) {
      at += 1;
      continue;
    }
    const token = tokenAt(text, at);
    if (token?.kind !== 'comment') first ??= at;
    at = token?.end ?? at + 1;
  }
  cut(text.length);
  return statements;
}

/**
 * The place in the file a DuckDB message points at: its `LINE n:` and caret, counted within `given` (the text the
 * engine was given, which starts at `base` in the file); `base` itself without one. A line past the end of `given`
 * (the engine's own last statement) is the end of it.
 */
export function errorPosition(
  given: string,
  base: { line: number; column: number },
  message: string,
): { line: number; column: number } {
  const match = /LINE (\d+): ([^\n]*)\n( *)\^/.exec(message);
  if (!match) return { line: base.line, column: base.column };
  const lines = given.split(/\r\n|\r|\n/);
  const lineInGiven = Number(match[1]);
  const own = lines[lineInGiven - 1];
  if (own === undefined) return offsetBy(base, lines.length, (lines.at(-1)?.length ?? 0) + 1);
  const shown = match[2] ?? '';
  let index = (match[3] ?? '').length - `LINE ${match[1]}: `.length;
  // Long lines are shown as a window ("...text..."): find the window in the line itself.
  if (shown.startsWith('...')) {
    const inner = shown.slice(3).replace(/\.\.\.$/, '');
    const found = own.indexOf(inner);
    if (found !== -1) index = found + index - 3;
  }
  return offsetBy(base, lineInGiven, Math.max(index, 0) + 1);
}

/** Line and column `column` of line `line` of a text that starts at `base` in the file. */
function offsetBy(base: { line: number; column: number }, line: number, column: number) {
  return { line: base.line + line - 1, column: line === 1 ? base.column + column - 1 : column };
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
