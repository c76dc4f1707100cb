import type { CheckRow, ShapedExport } from '../shape/index.js';
import { compareKeys } from '../sources/key-order.js';
import type { ExportEntry, MappedItem, Origin, SourceIssue } from '../mapping/types.js';
import type { IssueSink } from './record-key.js';

// The rows of the team's check views (docs/from-a-legacy-system.md "The team's own checks") put on the accounts they
// are about, as the join hands the accounts out: a row naming an account goes on that account, a row naming none on
// the account one of whose records carries its legacy line. An error is one of the account's issues (the account is
// held back as for any invalid value); a warning one of its warnings (it is sent). The rows naming an account come
// in account order beside the entries (a merge); the few naming none are held by their line. A row whose account is
// not in the export, or whose line no record carries, is a problem of the export at its line.

const lineKey = (file: string, line: number): string => `${file}\u0000${line}`;

function issueOf(row: CheckRow, number: string): SourceIssue {
  return { file: row.file, line: row.line, externalAccountNumber: number, code: row.code, message: row.message };
}

type Items = Array<MappedItem<unknown>>;

function itemsOf(entry: ExportEntry): Items {
  const held = entry.kind === 'account' ? entry.account : entry.items;
  return [...held.notes, ...held.transactions, ...held.statements, ...held.paymentInstructions] as Items;
}

/** Every legacy line the entry's records carry. */
function originsOf(entry: ExportEntry): Origin[] {
  const items = itemsOf(entry).map((item) => item.origin);
  return entry.kind === 'account' ? [...Object.values(entry.account.origins), ...items] : items;
}

/**
 * Puts one check row on the entry; false when it cannot go there (an error about post-import records of an account
 * not in this export, at a line none of them carries).
 */
function place(entry: ExportEntry, row: CheckRow): boolean {
  const held = entry.kind === 'account' ? entry.account : entry.items;
  const issue = issueOf(row, held.externalAccountNumber);
  if (row.severity === 'warning') {
    (held.warnings ??= []).push(issue);
    return true;
  }
  if (entry.kind === 'account') {
    entry.account.issues.push(issue);
    return true;
  }
  const items = itemsOf(entry).filter((item) => item.origin.file === row.file && item.origin.line === row.line);
  for (const item of items) item.issues.push(issue);
  return items.length > 0;
}

function unplaced(row: CheckRow, why: string): SourceIssue {
  return { ...issueOf(row, row.key ?? ''), message: `${row.message} (${why})` };
}

/** A stream of check rows, one row at a time. */
class CheckCursor {
  #batch: CheckRow[] = [];
  #next = 0;
  readonly #rows: AsyncGenerator<CheckRow[], void, undefined>;

  constructor(rows: AsyncGenerator<CheckRow[], void, undefined>) {
    this.#rows = rows;
  }

  async head(): Promise<CheckRow | undefined> {
    while (this.#next >= this.#batch.length) {
      const next = await this.#rows.next();
      if (next.done) return undefined;
      this.#batch = next.value;
      this.#next = 0;
    }
    return this.#batch[this.#next];
  }

  take(): void {
    this.#next += 1;
  }

  close(): Promise<unknown> {
    return this.#rows.return(undefined);
  }
}

/** The entries with the check rows of their accounts on them; rows that fit no entry go to `unfit`. */
export async function* withTeamChecks(
  entries: AsyncIterable<ExportEntry>,
  shaped: Pick<ShapedExport, 'checks' | 'keyedChecks' | 'keylessChecks'>,
  unfit: IssueSink,
): AsyncGenerator<ExportEntry> {
  if (shaped.checks.length === 0) {
    yield* entries;
    return;
  }
  const byLine = new Map<string, CheckRow[]>();
  for (const row of await shaped.keylessChecks())
    byLine.set(lineKey(row.file, row.line), [...(byLine.get(lineKey(row.file, row.line)) ?? []), row]);
  const keyed = new CheckCursor(shaped.keyedChecks());
  const notInExport = (row: CheckRow): void =>
    unfit.push(unplaced(row, `the check names account ${row.key ?? ''}, which has no record in this export`));
  try {
    for await (const entry of entries) {
      const number = entry.kind === 'account' ? entry.account.externalAccountNumber : entry.items.externalAccountNumber;
      for (let row = await keyed.head(); row?.key !== undefined; row = await keyed.head()) {
        const order = compareKeys(row.key, number);
        if (order > 0) break;
        if (order < 0) notInExport(row);
        else if (!place(entry, row))
          unfit.push(unplaced(row, `no record of account ${number} in this export comes from this line`));
        keyed.take();
      }
      if (byLine.size > 0)
        for (const origin of originsOf(entry)) {
          const key = lineKey(origin.file, origin.line);
          const rows = byLine.get(key) ?? [];
          if (rows.length > 0 && rows.map((row) => place(entry, row)).every(Boolean)) byLine.delete(key);
        }
      yield entry;
    }
    for (let row = await keyed.head(); row !== undefined; row = await keyed.head()) {
      notInExport(row);
      keyed.take();
    }
    for (const rows of byLine.values())
      for (const row of rows) unfit.push(unplaced(row, 'no record of this export comes from this line'));
  } finally {
    await keyed.close();
  }
}
