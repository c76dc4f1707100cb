import Database from 'better-sqlite3';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { FileKind } from '../sources/kinds.js';
import { FILE_KINDS } from '../sources/kinds.js';
import type { MappedRecord } from './record.js';

// The join's scratch store (architecture "Scale": memory stays flat from 1,000 to 1,000,000
// accounts). Records of one account need not be adjacent in the export, so every mapped record
// is written to a temporary SQLite file (mode 0600: it holds customer data) and read back per
// account through an index on the external account number. Deleted on close.

const KIND_CODE = new Map<FileKind, number>(FILE_KINDS.map((kind, index) => [kind, index]));
const BATCH = 20_000;
const PAGE = 1_000;

interface StoredRecord {
  l: number;
  f: Record<string, unknown>;
  s?: string;
  i?: MappedRecord['issues'];
}

export interface StagedRow {
  fileIndex: number;
  record: MappedRecord;
}

export class StagingStore {
  readonly #dir: string;
  readonly #db: Database.Database;
  readonly #insert: Database.Statement;
  readonly #insertAccount: Database.Statement;
  #recordsOf: Database.Statement | undefined;
  #pending = 0;
  #indexed = false;

  constructor(scratchDir: string | undefined) {
    this.#dir = mkdtempSync(path.join(scratchDir ?? os.tmpdir(), 'migrate-stage-'));
    chmodSync(this.#dir, 0o700);
    const file = path.join(this.#dir, 'stage.sqlite');
    this.#db = new Database(file);
    chmodSync(file, 0o600);
    // A scratch file rebuilt on every run: durability buys nothing here.
    this.#db.pragma('journal_mode = OFF');
    this.#db.pragma('synchronous = OFF');
    this.#db.pragma('cache_size = -32000');
    this.#db.pragma('temp_store = FILE');
    this.#db.exec(`
      CREATE TABLE records (seq INTEGER PRIMARY KEY, kind INTEGER NOT NULL, ean TEXT NOT NULL, file INTEGER NOT NULL, data TEXT NOT NULL);
      CREATE TABLE accounts (id INTEGER PRIMARY KEY, ean TEXT NOT NULL UNIQUE);
      CREATE TABLE orphans (id INTEGER PRIMARY KEY, ean TEXT NOT NULL);`);
    this.#insert = this.#db.prepare('INSERT INTO records (kind, ean, file, data) VALUES (?, ?, ?, ?)');
    this.#insertAccount = this.#db.prepare('INSERT OR IGNORE INTO accounts (ean) VALUES (?)');
  }

  /** Stages one record that has an external account number. */
  add(fileIndex: number, record: MappedRecord & { externalAccountNumber: string }): void {
    if (this.#pending === 0) this.#db.exec('BEGIN');
    const stored: StoredRecord = { l: record.line, f: record.fields };
    if (record.importSupplier !== undefined) stored.s = record.importSupplier;
    if (record.issues.length > 0) stored.i = record.issues;
    this.#insert.run(KIND_CODE.get(record.kind), record.externalAccountNumber, fileIndex, JSON.stringify(stored));
    if (record.kind === 'accounts') this.#insertAccount.run(record.externalAccountNumber);
    this.#pending += 1;
    if (this.#pending >= BATCH) this.flush();
  }

  flush(): void {
    if (this.#pending > 0) this.#db.exec('COMMIT');
    this.#pending = 0;
  }

  /** Builds the join index and the list of post-import-only accounts; call once, after the last add. */
  finishLoading(): void {
    this.flush();
    if (this.#indexed) return;
    this.#db.exec(`
      CREATE INDEX records_by_account ON records (ean, seq);
      INSERT INTO orphans (ean)
        SELECT ean FROM records WHERE kind >= ${KIND_CODE.get('notes')} AND ean NOT IN (SELECT ean FROM accounts)
        GROUP BY ean ORDER BY MIN(seq);`);
    this.#indexed = true;
  }

  accountCount(): number {
    return (this.#db.prepare('SELECT COUNT(*) AS n FROM accounts').get() as { n: number }).n;
  }

  orphanCount(): number {
    return (this.#db.prepare('SELECT COUNT(*) AS n FROM orphans').get() as { n: number }).n;
  }

  /** Customers and supply addresses whose account is not in the accounts file, in file order. */
  *unattached(): Generator<StagedRow & { externalAccountNumber: string }> {
    const statement = this.#db.prepare(
      `SELECT kind, ean, file, data FROM records WHERE kind IN (${KIND_CODE.get('customers')}, ${KIND_CODE.get('supply_addresses')}) AND ean NOT IN (SELECT ean FROM accounts) ORDER BY seq`,
    );
    for (const row of statement.all() as Array<{ kind: number; ean: string; file: number; data: string }>) {
      yield { externalAccountNumber: row.ean, ...decode(row) };
    }
  }

  /** External account numbers of a list (`accounts` in first-appearance order, or `orphans`), page by page. */
  *numbers(table: 'accounts' | 'orphans'): Generator<string> {
    const page = this.#db.prepare(`SELECT id, ean FROM ${table} WHERE id > ? ORDER BY id LIMIT ${PAGE}`);
    for (let after = 0; ; ) {
      const rows = page.all(after) as Array<{ id: number; ean: string }>;
      if (rows.length === 0) return;
      for (const row of rows) yield row.ean;
      after = rows[rows.length - 1]?.id ?? after;
    }
  }

  /** Every record of one account, in file order. */
  recordsOf(externalAccountNumber: string): StagedRow[] {
    this.#recordsOf ??= this.#db.prepare('SELECT kind, ean, file, data FROM records WHERE ean = ? ORDER BY seq');
    const rows = this.#recordsOf.all(externalAccountNumber) as Array<{ kind: number; ean: string; file: number; data: string }>;
    return rows.map((row) => decode(row));
  }

  close(): void {
    if (this.#db.open) this.#db.close();
    rmSync(this.#dir, { recursive: true, force: true });
  }
}

function decode(row: { kind: number; ean: string; file: number; data: string }): StagedRow {
  const stored = JSON.parse(row.data) as StoredRecord;
  const kind = FILE_KINDS[row.kind] as FileKind;
  return {
    fileIndex: row.file,
    record: { kind, line: stored.l, externalAccountNumber: row.ean, importSupplier: stored.s, fields: stored.f, issues: stored.i ?? [] },
  };
}
