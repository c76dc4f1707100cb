import type { DuckDBConnection, DuckDBPreparedStatement, StatementType } from '@duckdb/node-api';
import { InputError } from '../errors.js';
import type { ShortageOf } from './engine-limits.js';
import { errorPosition, plainEngineMessage, splitStatements, type SqlStatement } from './sql-statements.js';

// The team's shape file, statement by statement. Only statements that build over the loaded tables may run: views,
// tables, macros and the queries they need. Anything that reaches outside (ATTACH, COPY, INSTALL, LOAD, SET, PRAGMA,
// EXPORT, ...) is refused here by its kind, before the engine sees it; the engine's own lock (external access off,
// configuration locked: shape-engine.ts) refuses the rest, such as read_csv('/etc/passwd') inside a view. Every
// error is named at shape.sql:line:column with the engine's message; exit 2.

const ALLOWED: ReadonlySet<string> = new Set(['SELECT', 'CREATE', 'CREATE_FUNC', 'INSERT', 'UPDATE', 'DELETE', 'DROP']);

/** DuckDB's statement kinds by number (its StatementType enum), given by the caller that loaded the engine. */
export type StatementKinds = typeof StatementType;

const WHY =
  'a shape file may only build views (and the tables and macros they need) over its source tables; it cannot ' +
  'read, write, fetch, install, attach or change settings';

function shapeError(shapeName: string, statement: SqlStatement, message: string, code: string): InputError {
  const at = errorPosition(statement, message);
  const plain = plainEngineMessage(message);
  const outside = /^Permission Error|disabled by configuration|configuration has been locked/.test(plain);
  const text = outside ? `refused: ${WHY}. (${plain})` : plain;
  return new InputError(`${shapeName}:${at.line}:${at.column}`, undefined, text, outside ? 'shape_refused' : code);
}

async function prepare(connection: DuckDBConnection, shapeName: string, statement: SqlStatement) {
  try {
    const extracted = await connection.extractStatements(statement.text);
    const prepared: DuckDBPreparedStatement[] = [];
    for (let index = 0; index < extracted.count; index += 1) prepared.push(await extracted.prepare(index));
    return prepared;
  } catch (error) {
    throw shapeError(shapeName, statement, (error as Error).message, 'shape_sql_error');
  }
}

/** Runs every statement of the shape file in order; throws InputError (exit 2) at the first that fails. */
export async function runShapeFile(
  connection: DuckDBConnection,
  kinds: StatementKinds,
  shapeName: string,
  text: string,
  shortage: ShortageOf,
): Promise<void> {
  for (const statement of splitStatements(text)) {
    for (const prepared of await prepare(connection, shapeName, statement)) {
      const word = kinds[prepared.statementType] ?? String(prepared.statementType);
      if (!ALLOWED.has(word)) {
        throw new InputError(
          `${shapeName}:${statement.line}:${statement.column}`,
          undefined,
          `${word.replaceAll('_', ' ')} is refused: ${WHY}.`,
          'shape_refused',
        );
      }
      try {
        await prepared.run();
      } catch (error) {
        throw (
          shortage(`${shapeName}:${statement.line}:${statement.column}`, error) ??
          shapeError(shapeName, statement, (error as Error).message, 'shape_sql_error')
        );
      } finally {
        prepared.destroySync();
      }
    }
  }
}
