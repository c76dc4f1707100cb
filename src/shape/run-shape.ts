import type {
  DuckDBConnection,
  DuckDBExtractedStatements,
  DuckDBPreparedStatement,
  StatementType,
} from '@duckdb/node-api';
import { InputError, messageOf } from '../errors.js';
import { errorPosition, plainEngineMessage, positionIn, splitStatements, type SqlStatement } from './sql-statements.js';
import type { ShortageOf } from './engine-limits.js';

// The team's shape file, statement by statement. Only statements that build over the loaded tables may run: views,
// tables, macros and the queries they need. Anything that reaches outside (ATTACH, COPY, INSTALL, LOAD, SET, PRAGMA,
// EXPORT, ...) is refused here by its kind, before the engine sees it; the engine's own lock (external access off,
// configuration locked: shape-engine.ts) refuses the rest, such as read_csv('/etc/passwd') inside a view. Every
// error is named at shape.sql:line:column with the engine's message; exit 2.
//
// The tool cuts the file into statements as the engine reads it (sql-statements.ts), so that each error is counted
// within its own statement; the engine reads the whole file first and must count the same statements (and each cut
// statement as one), or nothing runs: no statement is skipped or run in pieces.

const ALLOWED: ReadonlySet<string> = new Set(['SELECT', 'CREATE', 'CREATE_FUNC', 'INSERT', 'UPDATE', 'DELETE', 'DROP']);

/** DuckDB's statement kinds by number (its StatementType enum), given by the caller that loaded the engine. */
export type StatementKinds = typeof StatementType;

const WHY =
  'a shape file may only build views (and the tables and macros they need) over its source tables; it cannot ' +
  'read, write, fetch, install, attach or change settings';

/**
 * A statement of the tool's own after the file: the engine's extraction fails on a text without any statement (a
 * file of comments), and a file whose last statement has no `;` still ends there. It is never run.
 */
const LAST = '\n;SELECT 1';

interface ShapeFile {
  name: string;
  text: string;
}

/** The engine's error in `given`, which starts at `base` in the file, named at its place in the file. */
function shapeError(file: ShapeFile, given: string, base: { line: number; column: number }, message: string) {
  const at = errorPosition(given, base, message.replaceAll(LAST, ''));
  const plain = plainEngineMessage(message.replaceAll(LAST, ''));
  const outside = /^Permission Error|disabled by configuration|configuration has been locked/.test(plain);
  const text = outside ? `refused: ${WHY}. (${plain})` : plain;
  const code = outside ? 'shape_refused' : 'shape_sql_error';
  return new InputError(`${file.name}:${at.line}:${at.column}`, undefined, text, code);
}

/** The engine's statements of `text` and the tool's own `LAST` after them. */
function extract(connection: DuckDBConnection, text: string): Promise<DuckDBExtractedStatements> {
  return connection.extractStatements(text + LAST);
}

/** How many statements the engine reads in `text`, or undefined where it cannot read it. */
async function engineCount(connection: DuckDBConnection, text: string): Promise<number | undefined> {
  try {
    return (await extract(connection, text)).count - 1;
  } catch {
    return undefined;
  }
}

/**
 * Where the engine and the tool first read the file differently: the first statement (of the tool's reading) up to
 * whose end the engine counts another number of statements, or the end of the file.
 */
async function firstDisagreement(connection: DuckDBConnection, file: ShapeFile, statements: SqlStatement[]) {
  for (const [index, statement] of statements.entries()) {
    if ((await engineCount(connection, file.text.slice(0, statement.end))) !== index + 1) return statement;
  }
  return positionIn(file.text, statements.at(-1)?.end ?? 0);
}

/** The refusal for a file the engine and the tool cut into statements differently, at `place`. */
function unclearSplit(file: ShapeFile, place: { line: number; column: number }): InputError {
  return new InputError(
    `${file.name}:${place.line}:${place.column}`,
    undefined,
    'the engine cuts the file into statements differently from the tool here (a comment, quote or dollar quote ' +
      'read two ways), so no statement is run: none may be skipped or run in pieces. End the comment, string or ' +
      'dollar quote near this line plainly, or write it another way.',
    'shape_sql_unclear',
  );
}

/**
 * The engine's one statement in the tool's `statement`, prepared (its errors counted within the statement, so named
 * at their place); a statement the engine reads as more or fewer than one is a reading the two do not share.
 */
async function prepare(connection: DuckDBConnection, file: ShapeFile, statement: SqlStatement) {
  let extracted: DuckDBExtractedStatements;
  try {
    extracted = await connection.extractStatements(statement.text);
  } catch (error) {
    throw shapeError(file, statement.text, statement, messageOf(error));
  }
  if (extracted.count !== 1) throw unclearSplit(file, statement);
  try {
    return await extracted.prepare(0);
  } catch (error) {
    throw shapeError(file, statement.text, statement, messageOf(error));
  }
}

async function run(
  prepared: DuckDBPreparedStatement,
  kinds: StatementKinds,
  file: ShapeFile,
  at: SqlStatement,
  shortage: ShortageOf,
) {
  const word = kinds[prepared.statementType] ?? String(prepared.statementType);
  if (!ALLOWED.has(word)) {
    throw new InputError(
      `${file.name}:${at.line}:${at.column}`,
      undefined,
      `${word.replaceAll('_', ' ')} is refused: ${WHY}.`,
      'shape_refused',
    );
  }
  try {
    await prepared.run();
  } catch (error) {
    throw shortage(`${file.name}:${at.line}:${at.column}`, error) ?? shapeError(file, at.text, at, messageOf(error));
  }
}

/**
 * Runs every statement of the shape file in order; throws InputError (exit 2) at the first that fails. The whole
 * file is read by the engine first: a syntax error anywhere stops the file before any statement runs, and the
 * engine's count of statements must be the tool's.
 */
export async function runShapeFile(
  connection: DuckDBConnection,
  kinds: StatementKinds,
  shapeName: string,
  text: string,
  shortage: ShortageOf,
): Promise<void> {
  const file: ShapeFile = { name: shapeName, text };
  const nul = text.indexOf('\0');
  if (nul !== -1) {
    const at = positionIn(text, nul);
    throw new InputError(
      `${shapeName}:${at.line}:${at.column}`,
      undefined,
      'the file holds a NUL character, where the engine stops reading: the statements after it would be skipped. ' +
        'Remove it (the file may not be the shape file you meant).',
      'shape_sql_unclear',
    );
  }
  const statements = splitStatements(text);
  let count: number;
  try {
    count = (await extract(connection, text)).count - 1;
  } catch (error) {
    throw shapeError(file, text, { line: 1, column: 1 }, messageOf(error));
  }
  if (count !== statements.length) throw unclearSplit(file, await firstDisagreement(connection, file, statements));
  for (const statement of statements) {
    const prepared = await prepare(connection, file, statement);
    try {
      await run(prepared, kinds, file, statement, shortage);
    } finally {
      prepared.destroySync();
    }
  }
}
