import type { Note } from '../schema/index.js';
import { ExportCode } from './issue-codes.js';
import type { MappedItem } from './types.js';

// The service keeps one note per body and created_at (spec "Create notes": a note is created only when the account has
// no note with the same body, and the same created_at if one was given). Two rows of one account with that identity
// are one note on the platform: identical rows are counted once (said so, never an error); rows that differ in any
// other field (is_pinned, unpin_at, document_paths) would lose one row's fields without a word, so both are errors
// (docs/export-format.md "Columns").

const SEP = '\u001f';

/** The service's identity of a note: body and created_at (one instant, however written); none without a body. */
function identityOf(note: Note): string | undefined {
  if (note.body === undefined) return undefined;
  const createdAt = note.created_at;
  const instant = createdAt === undefined ? Number.NaN : Date.parse(createdAt);
  return [note.body, Number.isNaN(instant) ? (createdAt ?? '') : String(instant)].join(SEP);
}

/** The fields in which two notes of one identity differ (every field but body and created_at is compared). */
function differingFields(first: Note, second: Note): string[] {
  const a = first as Record<string, unknown>;
  const b = second as Record<string, unknown>;
  const fields = [...new Set([...Object.keys(a), ...Object.keys(b)])].filter(
    (field) => field !== 'body' && field !== 'created_at',
  );
  return fields.filter((field) => JSON.stringify(a[field]) !== JSON.stringify(b[field])).sort();
}

function conflictMessage(number: string, other: MappedItem<Note>, fields: string[]): string {
  return (
    `account ${number}: this note has the same body and created_at as the note of ${other.origin.file} line ` +
    `${other.origin.line}, and the service keeps one note per body and created_at, but they differ in ` +
    `${fields.join(', ')}: one row's ${fields.length > 1 ? 'fields' : 'field'} would be lost. Keep one row, or give ` +
    'them different created_at values.'
  );
}

/** The first note of each identity and of each body seen so far. */
class EarlierNotes {
  readonly #byIdentity = new Map<string, MappedItem<Note>>();
  readonly #byBody = new Map<string, MappedItem<Note>>();

  /**
   * The earlier note the service would take this one for, or undefined (then it is remembered): one of its identity,
   * or, for a note without created_at (the service compares created_at only when one is given), one of its body.
   */
  match(note: MappedItem<Note>): MappedItem<Note> | undefined {
    const identity = identityOf(note.value);
    const body = note.value.body;
    if (identity === undefined || body === undefined) return undefined;
    const first =
      this.#byIdentity.get(identity) ?? (note.value.created_at === undefined ? this.#byBody.get(body) : undefined);
    if (first !== undefined) return first;
    this.#byIdentity.set(identity, note);
    if (!this.#byBody.has(body)) this.#byBody.set(body, note);
    return undefined;
  }
}

/**
 * Notes of one account with the service's identity: later identical rows are dropped (the count is returned); rows
 * that differ otherwise get an issue each, at their own file and line, naming the other.
 */
export function collapseNotes(notes: Array<MappedItem<Note>>, number: string): number {
  const earlier = new EarlierNotes();
  const flagged = new Set<MappedItem<Note>>();
  let duplicates = 0;
  for (let index = 0; index < notes.length;) {
    const note = notes[index] as MappedItem<Note>;
    const first = earlier.match(note);
    if (first === undefined) {
      index += 1;
      continue;
    }
    const fields = differingFields(first.value, note.value);
    if (fields.length === 0 && note.issues.length === 0) {
      notes.splice(index, 1);
      duplicates += 1;
      continue;
    }
    if (fields.length > 0) {
      conflict(note, first, number, fields);
      if (!flagged.has(first)) conflict(first, note, number, fields);
      flagged.add(first);
    }
    index += 1;
  }
  return duplicates;
}

function conflict(note: MappedItem<Note>, other: MappedItem<Note>, number: string, fields: string[]): void {
  note.issues.push({
    ...note.origin,
    attr: fields[0] ?? 'body',
    externalAccountNumber: number,
    code: ExportCode.conflictingNotes,
    message: conflictMessage(number, other, fields),
  });
}
