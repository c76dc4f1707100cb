import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seededStream } from '../../src/sandbox/random.js';
import { splitStatements } from '../../src/shape/sql-statements.js';

// The tool cuts a shape file into statements as the engine reads it: the same statements, each one statement to the
// engine and giving the same answer, on random files made of the pieces where readers differ (comments ended by CR,
// LF or CR LF, nested block comments, E'' strings, dollar quotes, quoted names, semicolons inside all of them).

let instance: DuckDBInstance;
let connection: DuckDBConnection;
beforeAll(async () => {
  instance = await DuckDBInstance.create(':memory:');
  connection = await instance.connect();
});
afterAll(() => {
  connection.closeSync();
  instance.closeSync();
});

/** The rows of every statement the engine reads in `text`, in order (a statement of its own after them). */
async function engineAnswers(text: string): Promise<string[] | undefined> {
  let extracted;
  try {
    extracted = await connection.extractStatements(`${text}\n;SELECT 1`);
  } catch {
    return undefined;
  }
  const answers: string[] = [];
  for (let index = 0; index < extracted.count - 1; index += 1)
    answers.push(JSON.stringify((await (await extracted.prepare(index)).runAndReadAll()).getRows()));
  return answers;
}

async function toolAnswers(text: string): Promise<string[]> {
  const answers: string[] = [];
  for (const statement of splitStatements(text)) {
    const extracted = await connection.extractStatements(statement.text);
    expect(extracted.count, statement.text).toBe(1);
    answers.push(JSON.stringify((await (await extracted.prepare(0)).runAndReadAll()).getRows()));
  }
  return answers;
}

const BREAKS = ['\n', '\r', '\r\n', '\n\r', '\f', '\v', '\t', ' '];
const VALUES = [
  "'a;b'",
  "'it''s;'",
  "'a\\'",
  "E'it\\'s; x'",
  "e'\\\\'",
  "E'a''b;'",
  '$$;$$',
  '$q1$ ; $q2$ ; $q1$',
  '$é$;$é$',
  '$_$--;$_$',
  '(SELECT 1 AS "x;y")',
  '1',
  '2--3\n',
  '2*/*c;*/3',
  "X'41'",
  "N'n;'",
];
const COMMENTS = ['-- c;', '--', '-- a /* b', '/* c; */', '/* a /* b; */ c; */', '/**/', '/* -- ; */', "/* ' */"];

function randomFile(next: () => number): string {
  const pick = <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)] as T;
  const parts: string[] = [];
  const statements = 1 + Math.floor(next() * 4);
  for (let statement = 0; statement < statements; statement += 1) {
    if (next() < 0.5) parts.push(pick(COMMENTS), pick(BREAKS));
    const values = Array.from({ length: 1 + Math.floor(next() * 3) }, () => {
      const value = pick(VALUES);
      return next() < 0.3 ? `${value} ${pick(COMMENTS)}${pick(BREAKS)}` : value;
    });
    parts.push(`SELECT ${values.join(', ')}`, pick([';', ';', ';;', `;${pick(BREAKS)}`]), pick(BREAKS));
  }
  if (next() < 0.3) parts.push(pick(COMMENTS));
  return parts.join('');
}

describe('splitStatements', () => {
  it('reads 400 random files as the engine does', async () => {
    const next = seededStream(45);
    let compared = 0;
    for (let file = 0; file < 400; file += 1) {
      const text = randomFile(next);
      const engine = await engineAnswers(text);
      if (engine === undefined) continue;
      compared += 1;
      expect(await toolAnswers(text), JSON.stringify(text)).toEqual(engine);
    }
    // Most files are ones the engine reads (a file it refuses is refused whole before anything runs).
    expect(compared).toBeGreaterThan(250);
  });

  it('ends a -- comment at a lone CR, and names each statement at its line as the engine counts lines', () => {
    const text = '-- one\rSELECT 1;\r\n/* a /* b */ c */ SELECT 2;\n\rSELECT $t$;$t$';
    expect(splitStatements(text)).toEqual([
      { text: 'SELECT 1', end: 15, line: 2, column: 1 },
      { text: 'SELECT 2', end: 44, line: 3, column: 19 },
      { text: 'SELECT $t$;$t$', end: text.length, line: 5, column: 1 },
    ]);
  });
});
