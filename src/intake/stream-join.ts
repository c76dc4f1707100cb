import { InputError } from '../errors.js';
import type { FileKind } from '../sources/kinds.js';
import { eventLoopTurns } from './event-loop.js';
import { joinGroup, type GroupRecord, type JoinSetup } from '../mapping/join-groups.js';
import { CHILD_KINDS, notInAccountsIssue, type IssueSink, type KeyedRecord, type OpenedFile } from './read-export.js';
import type { ExportFile } from '../sources/index.js';
import { compareKeys } from '../sources/key-order.js';
import { recordOrigin } from '../mapping/record.js';
import type { ExportEntry } from '../mapping/types.js';

// The join without a scratch file, for exports whose files are each sorted by external account
// number, as proven before the join starts (order-proof.ts; the files not proven in order are
// sorted on disk first): every file is read at once, one record ahead, and the records of the
// smallest key form the next group (a merge join). Memory holds one account. Every record is
// checked against the one before it all the same: a file that is out of order here changed after
// its order was proven, and the join stops with an InputError rather than hand out an account
// whose rows may still come.

/** A file out of order in the join: it changed after its order was proven (or while it was being sorted). */
function changedWhileRead(file: string, line: number, key: string, previousKey: string): InputError {
  return new InputError(
    file,
    line,
    `external_account_number ${key} comes after ${previousKey}, but the file was in external account number ` +
      'order when this run proved it: it changed while it was being read. The run stopped here; what was sent is ' +
      'recorded. Run again once the export is no longer being written.',
    'input_changed_while_read',
  );
}

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

  #take(): void {
    const previous = this.head;
    this.head = this.#batch[this.#next];
    this.#next += 1;
    if (this.head && previous && compareKeys(this.head.key, previous.key) < 0) {
      throw changedWhileRead(this.file.file, this.head.line, this.head.key, previous.key);
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
          if (CHILD_KINDS.has(kind) && !hasAccount) {
            // A shaped record is named at the legacy line it carries.
            const origin = recordOrigin(cursor.opened.plan, data);
            const file = origin ? { ...cursor.file, file: origin.file } : cursor.file;
            (issues[cursor.index] as IssueSink).push(
              notInAccountsIssue(file, cursor.opened.plan, origin?.line ?? line, key),
            );
          } else {
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
  } finally {
    await Promise.all(cursors.map((cursor) => cursor.opened.close()));
  }
}
