import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { GroupWriter } from '../../src/ledger/writer.js';

let dir: string;
let db: Database.Database;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'writer-'));
  db = new Database(join(dir, 'test.sqlite'));
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.exec('CREATE TABLE log (n INTEGER)');
});
afterEach(() => {
  if (db.open) db.close();
  rmSync(dir, { recursive: true, force: true });
});

const insert = (n: number) => () => void db.prepare('INSERT INTO log (n) VALUES (?)').run(n);
const rows = (): number[] =>
  db
    .prepare<[], { n: number }>('SELECT n FROM log ORDER BY rowid')
    .all()
    .map((r) => r.n);

describe('GroupWriter', () => {
  it('commits the writes of one turn together, in order; durable ones resolve after the log is fsynced, off the event loop', async () => {
    const writer = new GroupWriter(db);
    // The first durable commit runs with synchronous=FULL, and opens the log for the fsyncs after it.
    await Promise.all([writer.write(insert(1)), writer.write(insert(2), true)]);
    expect(writer.batches).toBe(1);
    const order: string[] = [];
    const durable = writer.write(insert(3), true).then(() => order.push('durable'));
    const plain = writer.write(insert(4)).then(() => order.push('plain'));
    await Promise.all([durable, plain]);
    expect(writer.batches).toBe(2);
    // The plain write of the same commit did not wait for the fsync.
    expect(order).toEqual(['plain', 'durable']);
    expect(rows()).toEqual([1, 2, 3, 4]);
    expect(db.pragma('synchronous', { simple: true })).toBe(1); // NORMAL again
    writer.close();
  });

  it('a deferred write rides with the next commit, or is committed on its own a few milliseconds later', async () => {
    const writer = new GroupWriter(db);
    const deferred = writer.write(insert(1), false, true);
    await new Promise((resolve) => setImmediate(resolve));
    expect(rows()).toEqual([]);
    await Promise.all([deferred, writer.write(insert(2))]);
    expect([rows(), writer.batches]).toEqual([[1, 2], 1]);
    await writer.write(insert(3), false, true);
    expect([rows(), writer.batches]).toEqual([[1, 2, 3], 2]);
    writer.close();
  });

  it('a write after a failed commit is refused: nothing more can be recorded', async () => {
    const writer = new GroupWriter(db);
    const failing = writer.write(() => void db.prepare('INSERT INTO missing (n) VALUES (1)').run(), true);
    await expect(failing).rejects.toThrow(/no such table/);
    await expect(writer.write(insert(1))).rejects.toThrow(/no such table/);
    writer.close();
  });
});
