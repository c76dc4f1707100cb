import { chownSync, closeSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UsageError } from '../../src/errors.js';
import { openOutputFile } from '../../src/output/output-file.js';

// The open itself, after the up-front check (a link planted between the check and the open, a race): without
// following a final symbolic link, never another user's file (docs/operators-guide.md "Files migrate writes").

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'output-file-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function refusal(run: () => unknown): UsageError {
  try {
    run();
  } catch (error) {
    if (error instanceof UsageError) return error;
    throw error;
  }
  throw new Error('not refused');
}

describe('openOutputFile', () => {
  it('refuses a final symbolic link, leaving the file it points at as it was', () => {
    const victim = join(dir, 'victim');
    writeFileSync(victim, 'theirs\n');
    symlinkSync(victim, join(dir, 'link'));
    for (const how of ['append', 'truncate'] as const) {
      const error = refusal(() => openOutputFile('--log-file', join(dir, 'link'), how));
      expect(error.code).toBe('output_symbolic_link');
      expect(error.exitCode).toBe(2);
    }
    expect(readFileSync(victim, 'utf8')).toBe('theirs\n');
  });

  it.runIf(process.getuid?.() === 0)("refuses another user's file, as root too, and does not empty it", () => {
    const theirs = join(dir, 'theirs');
    writeFileSync(theirs, 'theirs\n');
    chownSync(theirs, 54_321, 54_321);
    const error = refusal(() => openOutputFile('--errors-csv', theirs, 'truncate'));
    expect(error.code).toBe('output_foreign_file');
    expect(readFileSync(theirs, 'utf8')).toBe('theirs\n');
  });

  it('creates a missing file 0600 and empties an own one only when asked', () => {
    const own = join(dir, 'own');
    writeFileSync(own, 'before\n');
    closeSync(openOutputFile('--log-file', own, 'append'));
    expect(readFileSync(own, 'utf8')).toBe('before\n');
    closeSync(openOutputFile('--errors-csv', own, 'truncate'));
    expect(readFileSync(own, 'utf8')).toBe('');
  });
});
