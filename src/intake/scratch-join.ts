import Database from 'better-sqlite3';
import { closeSync, openSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { FileKind } from '../sources/kinds.js';
import { FILE_KINDS } from '../sources/kinds.js';
import type { GroupRecord, RecordData, RecordGroup } from '../mapping/join-groups.js';
import { makePrivateDir, PRIVATE_FILE_MODE, removePrivate, sweepLeftDirs } from '../private-files.js';

// The join's scratch store (memory stays flat from 1,000 to 1,000,000
// accounts). Records of one account need not be adjacent in the export, so every record is
// written, as read (raw cells), to a temporary SQLite file (mode 0600: it holds customer data)
// and read back in one sorted pass, grouped by external account number. Deleted on close; the
// directory is named after the process, so that the next run removes one a killed run left.

// Named on disk as before the scratch join had its name, so that a run clears what an older version's left.
const SCRATCH_NAME = 'stage';
const KIND_CODE = new Map<FileKind, number>(FILE_KINDS.map((kind, index) => [kind, index]));
const BATCH = 20_000;
/** Rows per INSERT statement: one native call per 64 rows instead of per row. */
const ROWS_PER_INSERT = 64;

export class ScratchJoinStore {
  readonly #dir: string;
  readonly #db: Database.Database;
  readonly #insert: Database.Statement;
  readonly #insertMany: Database.Statement;
  #rows: unknown[] = [];
  #lastChecked: { ean: string; found: boolean } | undefined;
  readonly #insertAccount: Database.Statement;
  readonly #insertOrphan: Database.Statement;
  readonly #hasAccount: Database.Statement;
  #pending = 0;
  #open: Iterator<unknown> | undefined;

  constructor(scratchDir: string | undefined) {
    const parent = scratchDir ?? os.tmpdir();
    sweepLeftDirs(parent);
    this.#dir = makePrivateDir(parent, SCRATCH_NAME);
    const file = path.join(this.#dir, 'stage.sqlite');
    closeSync(openSync(file, 'wx', PRIVATE_FILE_MODE));
    this.#db = new Database(file);
    // A scratch file rebuilt on every run: durability buys nothing here.
    this.#db.pragma('journal_mode = OFF');
    this.#db.pragma('synchronous = OFF');
    this.#db.pragma('cache_size = -32000');
    this.#db.pragma('temp_store = FILE');
    this.#db.exec(`
      CREATE TABLE records (seq INTEGER PRIMARY KEY, ean TEXT NOT NULL, kind INTEGER NOT NULL, file INTEGER NOT NULL,
        line INTEGER NOT NULL, data TEXT NOT NULL);
      CREATE TABLE accounts (ean TEXT PRIMARY KEY) WITHOUT ROWID;
      CREATE TABLE orphans (ean TEXT PRIMARY KEY) WITHOUT ROWID;`);
    this.#insert = this.#db.prepare('INSERT INTO records (ean, kind, file, line, data) VALUES (?, ?, ?, ?, ?)');
    this.#insertMany = this.#db.prepare(
      `INSERT INTO records (ean, kind, file, line, data) VALUES ` +
        `${Array(ROWS_PER_INSERT).fill('(?, ?, ?, ?, ?)').join(', ')}`,
    );
    this.#insertAccount = this.#db.prepare('INSERT OR IGNORE INTO accounts (ean) VALUES (?)');
    this.#insertOrphan = this.#db.prepare('INSERT OR IGNORE INTO orphans (ean) VALUES (?)');
    this.#hasAccount = this.#db.prepare('SELECT 1 FROM accounts WHERE ean = ?').pluck();
  }

  /**
   * Whether the accounts file (read first) has this account. Rows of one account often follow each other: the last
   * answer is kept.
   */
  hasAccount(externalAccountNumber: string): boolean {
    if (this.#lastChecked?.ean !== externalAccountNumber) {
      this.#lastChecked = {
        ean: externalAccountNumber,
        found: this.#hasAccount.get(externalAccountNumber) !== undefined,
      };
    }
    return this.#lastChecked.found;
  }

  add(externalAccountNumber: string, record: GroupRecord): void {
    if (this.#pending === 0) this.#db.exec('BEGIN');
    this.#rows.push(
      externalAccountNumber,
      KIND_CODE.get(record.kind),
      record.fileIndex,
      record.line,
      encodeData(record.data),
    );
    if (this.#rows.length >= ROWS_PER_INSERT * 5) this.#writeRows();
    if (record.kind === 'accounts') {
      this.#insertAccount.run(externalAccountNumber);
      if (this.#lastChecked?.ean === externalAccountNumber) this.#lastChecked = undefined;
    } else if (
      (KIND_CODE.get(record.kind) ?? 0) >= (KIND_CODE.get('notes') ?? 0) &&
      !this.hasAccount(externalAccountNumber)
    ) {
      this.#insertOrphan.run(externalAccountNumber);
    }
    this.#pending += 1;
    if (this.#pending >= BATCH) this.flush();
  }

  #writeRows(): void {
    if (this.#rows.length === ROWS_PER_INSERT * 5) this.#insertMany.run(this.#rows);
    else
      for (let start = 0; start < this.#rows.length; start += 5) this.#insert.run(this.#rows.slice(start, start + 5));
    this.#rows = [];
  }

  flush(): void {
    this.#writeRows();
    if (this.#pending > 0) this.#db.exec('COMMIT');
    this.#pending = 0;
  }

  accountCount(): number {
    return this.#db.prepare('SELECT COUNT(*) FROM accounts').pluck().get() as number;
  }

  orphanCount(): number {
    return this.#db.prepare('SELECT COUNT(*) FROM orphans').pluck().get() as number;
  }

  /** Every scratch record, grouped by external account number (in its sort order), each group in file order. */
  *groups(): Generator<RecordGroup> {
    this.flush();
    const rows = this.#db
      .prepare('SELECT ean, kind, file, line, data FROM records ORDER BY ean, seq')
      .raw()
      .iterate() as IterableIterator<[string, number, number, number, string]>;
    this.#open = rows;
    try {
      let current: RecordGroup | undefined;
      for (const [ean, kind, fileIndex, line, data] of rows) {
        if (current && current.externalAccountNumber !== ean) {
          yield current;
          current = undefined;
        }
        current ??= { externalAccountNumber: ean, records: [] };
        current.records.push({ kind: FILE_KINDS[kind] as FileKind, fileIndex, line, data: decodeData(data) });
      }
      if (current) yield current;
    } finally {
      this.#open = undefined;
      rows.return?.();
    }
  }

  close(): void {
    this.#open?.return?.();
    if (this.#db.open) this.#db.close();
    removePrivate(this.#dir);
  }
}

/** Removes the scratch directories of processes that no longer exist (a run killed with SIGKILL cannot clean up). */
// Scratch data: CSV cells joined by the unit separator (much cheaper than JSON for the common
// case), JSON when a cell holds that character, and JSON records as JSON. One letter says which.
const US = '\u001f';

function encodeData(data: RecordData): string {
  return Array.isArray(data) ? encodeCells(data) : `J${JSON.stringify(data)}`;
}

function encodeCells(cells: string[]): string {
  const joined = cells.join(US);
  let separators = 0;
  for (let at = joined.indexOf(US); at !== -1; at = joined.indexOf(US, at + 1)) separators += 1;
  return separators === Math.max(0, cells.length - 1) ? `C${joined}` : `A${JSON.stringify(cells)}`;
}

function decodeData(data: string): RecordData {
  const tag = data.charAt(0);
  if (tag === 'C') return data.slice(1).split(US);
  return JSON.parse(data.slice(1)) as RecordData;
}
