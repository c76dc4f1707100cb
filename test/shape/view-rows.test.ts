import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ShapedRow, ShapedView } from '../../src/shape/shaped-view.js';
import { viewRows, type ViewReading } from '../../src/shape/view-rows.js';

// A view read in the order the intake joins records in, whether it is sorted whole or a range of keys at a time (rows
// too long for the engine to sort whole within its memory limit): the same rows, each once, in the same order.

const ACCOUNTS = 300;

/** Keys as a legacy export has them: padded, in any case, accented, empty, missing; several rows for some. */
function legacyKeys(): Array<string | null> {
  const keys: Array<string | null> = [];
  let seed = 7;
  const next = () => (seed = (seed * 48271) % 2147483647);
  for (let account = 0; account < ACCOUNTS; account += 1) {
    const spellings = [`A-${next() % 1000}`, ` a-${account}`, `É-${account} `, `\u00a0B-${account}`];
    const key = account % 97 === 0 ? null : account % 89 === 0 ? '' : spellings[next() % spellings.length];
    for (let copy = 0; copy < 1 + (next() % 3); copy += 1) keys.push(key ?? null);
  }
  return keys;
}

const VIEW: ShapedView = {
  kind: 'accounts',
  columns: ['external_account_number', 'ledgers'],
  hasRows: false,
  passThrough: { table: undefined, columns: {} },
};

const KEYS = legacyKeys();

let instance: DuckDBInstance;
let connection: DuckDBConnection;
beforeAll(async () => {
  instance = await DuckDBInstance.create(':memory:', { threads: '1' });
  connection = await instance.connect();
  const values = KEYS.map((key, at) => `(${key === null ? 'NULL' : `'${key}'`}, ${at}, ${200 + ((at * 37) % 900)})`);
  await connection.run(`CREATE TABLE legacy AS SELECT * FROM (VALUES ${values.join(', ')}) AS v(acc, seq, width)`);
  await connection.run(
    "CREATE VIEW accounts AS SELECT acc AS external_account_number, repeat('x', width) || seq AS ledgers, " +
      "'LEGACY.csv' AS _file, seq + 2 AS _line FROM legacy",
  );
});
afterAll(() => {
  connection.closeSync();
  instance.closeSync();
});

async function read(memoryBytes: number): Promise<ShapedRow[]> {
  const reading: ViewReading = {
    place: { shapeName: 'shape.sql', view: 'accounts', line: 1 },
    sources: [],
    shortage: () => undefined,
    memoryBytes,
  };
  const rows: ShapedRow[] = [];
  for await (const batch of viewRows(connection, reading, VIEW, 'external_account_number')) rows.push(...batch);
  return rows;
}

/** The key as the intake compares it: trimmed as JavaScript trims, then by UTF-8 bytes. */
const keyBytes = (row: ShapedRow): Buffer => Buffer.from((row.cells[0] ?? '').trim());

describe('a view read in account order', () => {
  it('gives the same rows in the same order sorted whole and a few accounts at a time', async () => {
    const whole = await read(1e12);
    // Rows of 200 to 1,100 characters, some too long for the engine's sort to spill: read in ranges of a quarter of
    // 8 KB, three or four accounts' rows each, about a hundred ranges.
    const ranged = await read(8_000);
    expect(whole.length).toBe(KEYS.length);
    expect(ranged.length).toBe(whole.length);
    expect(ranged.map((row) => row.line)).toEqual(whole.map((row) => row.line));
    expect(new Set(ranged.map((row) => row.line)).size).toBe(ranged.length);
    const ranges = await connection.runAndReadAll(
      "SELECT count(*) FROM duckdb_tables() WHERE table_name = '__range_accounts'",
    );
    expect(ranges.getRowsJS()).toEqual([[0n]]);
  });

  it('orders by the trimmed key in byte order, an account in the view order, rows without a key last', async () => {
    const rows = await read(8_000);
    const missing = (row: ShapedRow): boolean => KEYS[row.line - 2] === null;
    const firstMissing = rows.findIndex(missing);
    expect(firstMissing).toBeGreaterThan(0);
    expect(rows.slice(firstMissing).every(missing)).toBe(true);
    const keyed = rows.slice(0, firstMissing);
    for (let at = 1; at < keyed.length; at += 1) {
      const [before, after] = [keyed[at - 1] as ShapedRow, keyed[at] as ShapedRow];
      const order = Buffer.compare(keyBytes(before), keyBytes(after));
      expect(order).toBeLessThanOrEqual(0);
      if (order === 0) expect(after.line).toBeGreaterThan(before.line);
    }
  });
});
