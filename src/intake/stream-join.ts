import type { FileKind } from '../sources/kinds.js';
import { eventLoopTurns } from './event-loop.js';
import { joinGroup, type GroupRecord, type JoinSetup } from '../mapping/join-groups.js';
import { CHILD_KINDS, notInAccountsIssue, type IssueSink, type KeyedRecord, type OpenedFile } from './read-export.js';
import type { ExportFile } from '../sources/index.js';
import type { ExportEntry } from '../mapping/types.js';

// The join without a staging file, for exports whose files are each sorted by external account
// number (what `ORDER BY account_number` gives): every file is read at once, one record ahead,
// and the records of the smallest key form the next group (a merge join). Memory holds one
// account. A file found out of order stops the join with ExportNotSorted: groups already handed
// out may then be incomplete, so the caller starts again with the staged join (index.ts).

/** A file is not in external account number order: the streaming join cannot go on. */
export class ExportNotSorted extends Error {
  constructor(
    readonly file: string,
    readonly line: number,
    readonly key: string,
    readonly previousKey: string,
    /** `file` and the other files seen out of order in the records read ahead (to sort them all on the next read). */
    readonly unsortedFiles: readonly string[] = [file],
  ) {
    super(`${file}:${line}: external_account_number ${key} comes after ${previousKey}`);
    this.name = 'ExportNotSorted';
  }
}

/**
 * Orders keys as SQLite's BINARY collation does (UTF-8 bytes, i.e. code points), so that both
 * joins hand out accounts in the same order. UTF-16 order differs from it only where a
 * surrogate (a code point above U+FFFF) meets U+E000-U+FFFF.
 */
export function compareKeys(a: string, b: string): number {
  if (a === b) return 0;
  // Where either key has no unit from U+D800 up (account numbers are ASCII), the orders agree.
  if (!HIGH_UNIT.test(a) || !HIGH_UNIT.test(b)) return a < b ? -1 : 1;
  const length = Math.min(a.length, b.length);
  let index = 0;
  while (index < length && a.charCodeAt(index) === b.charCodeAt(index)) index += 1;
  if (index === length) return a.length - b.length;
  return codePointRank(a.charCodeAt(index)) - codePointRank(b.charCodeAt(index));
}

const HIGH_UNIT = /[\ud800-\uffff]/;
const codePointRank = (unit: number): number => (unit >= 0xd800 && unit <= 0xdfff ? unit + 0x10000 : unit);

export interface StreamCounts {
  /** Records joined, per file (customers of accounts not in the accounts file are not counted). */
  records: number[];
  accounts: number;
  orphanAccounts: number;
}

/** One file's position: the record at hand and the rest of its batch. */
class Cursor {
  head: KeyedRecord | undefined;
  #batch: KeyedRecord[] = [];
  #next = 0;

  constructor(
    readonly index: number,
    readonly file: ExportFile,
    readonly opened: OpenedFile,
  ) {}

  /**
   * Moves to the next record. Within a batch it returns nothing and throws at once: awaiting a
   * microtask per record would be a measurable share of the join; only a new batch is awaited.
   */
  advance(): Promise<void> | undefined {
    if (this.#next < this.#batch.length) {
      this.#take();
      return undefined;
    }
    return this.#refill().then(() => this.#take());
  }

  async #refill(): Promise<void> {
    this.#batch = [];
    this.#next = 0;
    for (let next = await this.opened.records.next(); !next.done; next = await this.opened.records.next()) {
      if (next.value.length > 0) {
        this.#batch = next.value;
        return;
      }
    }
  }

  /** Whether the records read ahead (the rest of the batch) are already out of order. */
  aheadOutOfOrder(): boolean {
    let previous = this.head?.key;
    for (let index = this.#next; index < this.#batch.length; index += 1) {
      const key = (this.#batch[index] as KeyedRecord).key;
      if (previous !== undefined && compareKeys(key, previous) < 0) return true;
      previous = key;
    }
    return false;
  }

  #take(): void {
    const previous = this.head;
    this.head = this.#batch[this.#next];
    this.#next += 1;
    if (this.head && previous && compareKeys(this.head.key, previous.key) < 0) {
      throw new ExportNotSorted(this.file.file, this.head.line, this.head.key, previous.key);
    }
  }
}

/** Merge-joins the opened files (accounts first); `issues[i]` collects the file issues of file i. */
export async function* streamEntries(
  files: ExportFile[],
  opened: OpenedFile[],
  setup: JoinSetup,
  issues: IssueSink[],
  counts: StreamCounts,
): AsyncGenerator<ExportEntry> {
  const cursors = files.map((file, index) => new Cursor(index, file, opened[index] as OpenedFile));
  const turn = eventLoopTurns();
  try {
    for (const cursor of cursors) await cursor.advance();
    for (;;) {
      let key: string | undefined;
      for (const cursor of cursors)
        if (cursor.head && (key === undefined || compareKeys(cursor.head.key, key) < 0)) key = cursor.head.key;
      if (key === undefined) return;
      const records: GroupRecord[] = [];
      let hasAccount = false;
      for (const cursor of cursors) {
        const kind: FileKind = cursor.file.kind;
        while (cursor.head !== undefined && cursor.head.key === key) {
          const { line, data } = cursor.head;
          if (kind === 'accounts') hasAccount = true;
          // Files come accounts first, so a customer's account is known by the time it is read.
          if (CHILD_KINDS.has(kind) && !hasAccount)
            (issues[cursor.index] as IssueSink).push(notInAccountsIssue(cursor.file, cursor.opened.plan, line, key));
          else {
            records.push({ kind, fileIndex: cursor.index, line, data });
            counts.records[cursor.index] = (counts.records[cursor.index] ?? 0) + 1;
          }
          const reading = cursor.advance();
          if (reading) await reading;
        }
      }
      if (records.length === 0) continue;
      if (hasAccount) counts.accounts += 1;
      else counts.orphanAccounts += 1;
      yield joinGroup({ externalAccountNumber: key, records }, setup);
      const turning = turn();
      if (turning) await turning;
    }
  } catch (error) {
    if (!(error instanceof ExportNotSorted)) throw error;
    // A scattered file shows it within the records read ahead: name them all, so that the next
    // read sorts every one of them rather than finding them one read at a time.
    const others = cursors
      .filter((cursor) => cursor.file.file !== error.file && cursor.aheadOutOfOrder())
      .map((cursor) => cursor.file.file);
    throw new ExportNotSorted(error.file, error.line, error.key, error.previousKey, [error.file, ...others]);
  } finally {
    await Promise.all(cursors.map((cursor) => cursor.opened.close()));
  }
}
