import { validateNotesRequest } from '../../schema/index.js';
import { asList, asObject, asString } from '../../schema/read.js';
import type { Reply } from '../http-io.js';
import { isoWithOffset } from '../time.js';
import { extraFields, type StoredNote } from '../records.js';
import { resolvePostImport, withContract, type HandlerContext } from './common.js';

// Spec "Create notes": a note is created only when the account has no note with the same body
// (and the same created_at, if one was given). A note without a body is compared by its
// document paths instead (the sandbox's choice; the spec names only the body).

function sameInstant(a: string, b: string): boolean {
  return a === b || Date.parse(a) === Date.parse(b);
}

function isDuplicate(existing: StoredNote, candidate: StoredNote): boolean {
  const sameContent =
    candidate.body !== null
      ? existing.body === candidate.body
      : existing.body === null && existing.documentPaths.join('\n') === candidate.documentPaths.join('\n');
  return sameContent && (!candidate.createdAtGiven || sameInstant(existing.createdAt, candidate.createdAt));
}

const NOTE_FIELDS: ReadonlySet<string> = new Set(['body', 'document_paths', 'created_at', 'is_pinned', 'unpin_at']);

function toStoredNote(raw: Record<string, unknown>, now: number, retain: boolean): StoredNote {
  const createdAt = asString(raw['created_at']);
  const extra = retain ? extraFields(raw, NOTE_FIELDS) : undefined;
  return {
    ...(extra === undefined ? {} : { extra }),
    body: asString(raw['body']) ?? null,
    documentPaths: asList(raw['document_paths']).map((item) => asString(asObject(item)?.['document_path']) ?? ''),
    createdAt: createdAt ?? isoWithOffset(now),
    createdAtGiven: createdAt !== undefined,
    isPinned: raw['is_pinned'] === true,
    unpinAt: asString(raw['unpin_at']) ?? null,
    bySandbox: false,
  };
}

/** POST /v1/data-import/notes/create/ -> 201 [{created_at, body, status}], one per submitted note. */
export function createNotes(context: HandlerContext): Reply {
  const resolved = resolvePostImport(
    context,
    withContract(context, 'notes', context.body, validateNotesRequest(context.body)),
  );
  if ('reply' in resolved) return resolved.reply;
  const notes = (context.store.postImport(resolved.record).notes ??= []);
  const results = asList(asObject(context.body)?.['notes']).map((item) => {
    const candidate = toStoredNote(asObject(item) ?? {}, context.now, context.retainPayloads);
    const existing = notes.find((note) => isDuplicate(note, candidate));
    if (existing) return { created_at: existing.createdAt, body: existing.body, status: 'NOTE_ALREADY_EXISTS' };
    notes.push(candidate);
    return { created_at: candidate.createdAt, body: candidate.body, status: 'NOTE_CREATION_SUCCESS' };
  });
  return { status: 201, body: results };
}
