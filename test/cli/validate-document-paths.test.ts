import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// Document paths that reach out of the supplier's document root once decoded are refused at their file and line by
// validate (docs/export-format.md "Document paths"), so push never sends them: the real binary on the sample export.

const ROOT = join(import.meta.dirname, '..', '..');
const BIN = join(ROOT, 'bin', 'migrate.js');

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'document-paths-'));
  cpSync(join(ROOT, 'fixtures', 'sample'), dir, { recursive: true });
  const notes = readFileSync(join(dir, 'notes.ndjson'), 'utf8').split('\n');
  // Line 4 of notes.ndjson holds a document path (notes/SAMPLE-0007/welcome-letter.pdf).
  notes[3] = (notes[3] ?? '').replace('notes/SAMPLE-0007/welcome-letter.pdf', 'notes/%2E%2E/%2E%2E/x.pdf');
  // Lines 9 and 13 hold paths that read as '..' once normalised or once decoded as a lenient UTF-8 decoder would.
  notes[8] = (notes[8] ?? '').replace('notes/SAMPLE-0014/welcome-letter.pdf', '．．/．．/x.pdf');
  notes[12] = (notes[12] ?? '').replace('notes/SAMPLE-0021/welcome-letter.pdf', '%C0%AE%C0%AE/x.pdf');
  writeFileSync(join(dir, 'notes.ndjson'), notes.join('\n'));
  const statements = readFileSync(join(dir, 'statements.json'), 'utf8')
    .replace('statements/SAMPLE-0001/2026-09.pdf', 's3://other-bucket/x.pdf')
    .replace('statements/SAMPLE-0001/2026-10.pdf', 'C:\\\\Windows\\\\x.pdf')
    .replace('statements/SAMPLE-0005/2026-09.pdf', '/etc/passwd')
    .replace('statements/SAMPLE-0005/2026-10.pdf', './a.pdf')
    .replace('statements/SAMPLE-0009/2026-09.pdf', '%u002e%u002e/x.pdf');
  writeFileSync(join(dir, 'statements.json'), statements);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('validate on document paths', () => {
  // Reported in account order (SAMPLE-0001, -0005, -0007, -0009, -0014, -0021).
  it('names each path outside the document root at its file and line', () => {
    const run = spawnSync(process.execPath, [BIN, 'validate', dir, '--json'], { encoding: 'utf8' });
    expect(run.status, run.stderr).toBe(5);
    const report = JSON.parse(run.stdout) as {
      errors: Array<{ file: string; line: number; code: string; message: string }>;
    };
    const paths = report.errors
      .filter((error) => error.code === 'invalid_document_path')
      .map((error) => `${error.file}:${error.line} ${error.message}`);
    expect(paths).toEqual([
      expect.stringMatching(
        /^statements\.json:\d+ .*"s3:\/\/other-bucket\/x\.pdf" is not a path below the supplier's document root: it is a URL with a scheme/,
      ),
      expect.stringMatching(/^statements\.json:\d+ .*it names a Windows drive/),
      expect.stringMatching(/^statements\.json:\d+ .*"\/etc\/passwd" is not a path below .*: it starts with '\/'/),
      expect.stringMatching(/^statements\.json:\d+ .*"\.\/a\.pdf" is not a path below .*: it holds a '\.' segment/),
      expect.stringMatching(
        /^notes\.ndjson:4 .*"notes\/%2E%2E\/%2E%2E\/x\.pdf" is not a path below the supplier's document root: it leaves the document root/,
      ),
      expect.stringMatching(/^statements\.json:\d+ .*"%u002e%u002e\/x\.pdf" .*: it holds a %u escape/),
      expect.stringMatching(
        /^notes\.ndjson:9 .*it leaves the document root \('\.\.' is not allowed\) \(normalised: "\.\.\/\.\.\/x\.pdf"\)/,
      ),
      expect.stringMatching(/^notes\.ndjson:13 .*"%C0%AE%C0%AE\/x\.pdf" .*: it holds %C0%AE, which is not UTF-8/),
    ]);
  });
});
