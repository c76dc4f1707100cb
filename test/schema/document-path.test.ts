import { describe, expect, it } from 'vitest';
import { documentPathProblem } from '../../src/schema/document-path.js';

// A document path stays below the supplier's document root in every encoding (docs/export-format.md "Document
// paths"): decoded until nothing changes, then no scheme, drive, host, backslash, `..` or control character.

describe('documentPathProblem', () => {
  it.each([
    'statements/SAMPLE-0001/2026-09.pdf',
    'notes/a b/letter (1).pdf',
    'statements/100%25 paid.pdf',
    'statements/..pdf',
    'statements/v1.2/x.pdf',
    'statements/é/x.pdf',
  ])('accepts %s', (path) => {
    expect(documentPathProblem(path)).toBeUndefined();
  });

  it.each([
    ['../x.pdf', "it leaves the document root ('..' is not allowed)"],
    ['statements/%2E%2E/%2E%2E/x.pdf', "it leaves the document root ('..' is not allowed) (decoded: "],
    ['..%2F..%2Fb.pdf', "it leaves the document root ('..' is not allowed) (decoded: "],
    ['statements/%252e%252e/x.pdf', "it leaves the document root ('..' is not allowed) (decoded: "],
    ['s3://other-bucket/x.pdf', 'it is a URL with a scheme'],
    ['http://evil.example/x.pdf', 'it is a URL with a scheme'],
    ['file:///etc/passwd', 'it is a URL with a scheme'],
    ['C:\\Windows\\win.ini', 'it names a Windows drive'],
    ['c:/Windows/win.ini', 'it names a Windows drive'],
    ['\\\\host\\share\\x.pdf', 'it names a network host'],
    ['//host/share/x.pdf', 'it names a network host'],
    ['%2F%2Fhost/x.pdf', 'it names a network host (decoded: '],
    ['statements\\x.pdf', 'it holds a backslash'],
    ['statements%5C..%5Cx.pdf', 'it holds a backslash (decoded: '],
    ['statements/x.pdf%00.txt', 'it holds a control character (decoded: '],
    [`x${'%25'.repeat(1)}${'25'.repeat(9)}2E`, 'it is percent-encoded more than 8 times over'],
  ])('refuses %s', (path, why) => {
    expect(documentPathProblem(path)).toContain(why);
  });
});
