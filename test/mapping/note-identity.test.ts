import { describe, expect, it } from 'vitest';
import { collapseNotes } from '../../src/mapping/note-identity.js';
import type { MappedItem } from '../../src/mapping/types.js';
import type { Note } from '../../src/schema/index.js';

const note = (line: number, value: Note): MappedItem<Note> => ({
  value,
  origin: { file: 'notes.csv', line },
  issues: [],
});

describe('notes of one account with the service identity (body and created_at)', () => {
  it('identical rows are counted once: the later ones are dropped, no error', () => {
    const notes = [
      note(2, { body: 'a', created_at: '2026-01-01T09:00:00Z', is_pinned: true }),
      note(3, { body: 'a', created_at: '2026-01-01T09:00:00Z', is_pinned: true }),
      note(4, { body: 'a', created_at: '2026-01-01T10:00:00Z' }),
    ];
    expect(collapseNotes(notes, 'A-1')).toBe(1);
    expect(notes.map((item) => item.origin.line)).toEqual([2, 4]);
    expect(notes.flatMap((item) => item.issues)).toEqual([]);
  });

  it('rows that differ in another field are an error at each line, naming the other line and the fields', () => {
    const notes = [
      note(2, { body: 'a', created_at: '2026-01-01T09:00:00Z', is_pinned: true }),
      note(5, { body: 'a', created_at: '2026-01-01T09:00:00+00:00' }),
    ];
    expect(collapseNotes(notes, 'A-1')).toBe(0);
    const [first, second] = notes;
    expect(first?.issues).toHaveLength(1);
    expect(first?.issues[0]).toMatchObject({
      file: 'notes.csv',
      line: 2,
      code: 'conflicting_notes',
      attr: 'is_pinned',
    });
    expect(first?.issues[0]?.message).toContain('notes.csv line 5');
    expect(second?.issues[0]).toMatchObject({ file: 'notes.csv', line: 5, code: 'conflicting_notes' });
    expect(second?.issues[0]?.message).toContain('notes.csv line 2');
    expect(second?.issues[0]?.message).toContain('differ in is_pinned');
  });

  it('document paths and unpin_at count as fields; the same body at another time is another note', () => {
    const notes = [
      note(2, { body: 'a', document_paths: [{ document_path: 'x.pdf' }] }),
      note(3, { body: 'a', document_paths: [{ document_path: 'y.pdf' }], unpin_at: '2026-02-01T00:00:00Z' }),
      note(4, { body: 'a', created_at: '2026-01-01T09:00:00Z' }),
    ];
    collapseNotes(notes, 'A-1');
    expect(notes[1]?.issues[0]?.message).toContain('differ in document_paths, unpin_at');
    expect(notes[2]?.issues).toEqual([]);
  });

  it('a note without created_at is the earlier note of its body (the service compares created_at only if given)', () => {
    const notes = [
      note(2, { body: 'a', created_at: '2026-01-01T09:00:00Z' }),
      note(3, { body: 'a', is_pinned: true }),
      note(4, { body: 'b' }),
      note(5, { body: 'b', created_at: '2026-01-01T09:00:00Z' }),
    ];
    expect(collapseNotes(notes, 'A-1')).toBe(0);
    expect(notes[1]?.issues[0]).toMatchObject({ line: 3, code: 'conflicting_notes', attr: 'is_pinned' });
    // A note with created_at after one without: the service creates it (the first one's time is the time it is made).
    expect(notes[3]?.issues).toEqual([]);
  });
});
