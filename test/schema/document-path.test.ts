import { describe, expect, it } from 'vitest';
import { documentPathProblem } from '../../src/schema/document-path.js';
import { accountStatementSchema, notesRequestSchema } from '../../src/schema/index.js';
import { notesRequestFits } from '../../src/schema/quick-check.js';

// A document path stays below the supplier's document root in every encoding (docs/export-format.md "Document
// paths"): percent-decoded as UTF-8 and NFKC-normalised until nothing changes, then one check of what is left.

const accepted = [
  'statements/SAMPLE-0001/2026-09.pdf',
  'notes/a b/letter (1).pdf',
  'statements/100%25 paid.pdf',
  'statements/100% paid.pdf',
  'statements/..pdf',
  'statements/a..b/x.pdf',
  'statements/v1.2/x.pdf',
  'statements/é/x.pdf',
  'statements/%C3%A9/x.pdf',
  'statements/日本/請求書.pdf',
  'a.pdf',
];

const refused: Array<[string, string]> = [
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
  ['statements/x.pdf%00.txt', 'it holds a control or invisible character (decoded: '],
  [`x${'%25'.repeat(1)}${'25'.repeat(9)}2E`, 'it is percent-encoded more than 8 times over'],
  // A leading "/" or "\" is the host's root, not the document root.
  ['/etc/passwd', "it starts with '/'"],
  ['%2Fetc%2Fpasswd', "it starts with '/' (decoded: "],
  ['\\etc\\passwd', "it starts with '\\'"],
  [' /etc/passwd', 'it starts or ends with a space'],
  ['a.pdf ', 'it starts or ends with a space'],
  // "." and empty segments: a path means one file, written one way.
  ['./a.pdf', "it holds a '.' segment"],
  ['a/./b.pdf', "it holds a '.' segment"],
  ['a/%2E/b.pdf', "it holds a '.' segment (decoded: "],
  ['a//b.pdf', 'it holds an empty segment'],
  ['a/b/', 'it holds an empty segment'],
  // Windows drops a name's trailing dots and spaces: "..." and ".. " are "..".
  ['.../x.pdf', "it holds a segment of dots and spaces (Windows reads it as '.' or '..')"],
  ['a/.. /x.pdf', "it holds a segment of dots and spaces (Windows reads it as '.' or '..')"],
  // Percent escapes are UTF-8; an overlong or broken sequence is how decoders are fooled into a dot or a slash.
  ['%C0%AE%C0%AE/x.pdf', 'it holds %C0%AE, which is not UTF-8'],
  ['%E0%80%AE%E0%80%AE/x.pdf', 'it holds %E0%80%AE, which is not UTF-8'],
  ['%C0%AF..%C0%AFx.pdf', 'it holds %C0%AF, which is not UTF-8'],
  ['statements/%FF.pdf', 'it holds %FF, which is not UTF-8'],
  ['statements/%C3.pdf', 'it holds %C3, which is not UTF-8'],
  ['statements/%ED%A0%80.pdf', 'it holds %ED%A0%80, which is not UTF-8'],
  ['%u002e%u002e/x.pdf', 'it holds a %u escape (%u002e), which some servers decode; write it as UTF-8 (%XX)'],
  ['%U002E%U002E/x.pdf', 'it holds a %u escape (%U002E)'],
  // NFKC folds look-alikes into the characters a platform may fold them into.
  ['．．/x.pdf', "it leaves the document root ('..' is not allowed) (normalised: "],
  ['%EF%BC%8E%EF%BC%8E/x.pdf', "it leaves the document root ('..' is not allowed) (decoded and normalised: "],
  ['％２ｅ％２ｅ/x.pdf', "it leaves the document root ('..' is not allowed) (decoded and normalised: "],
  ['a／..／b.pdf', "it leaves the document root ('..' is not allowed) (normalised: "],
  ['‥/x.pdf', "it leaves the document root ('..' is not allowed) (normalised: "],
  ['ｃ：/x.pdf', 'it names a Windows drive (normalised: '],
  ['＼etc/x.pdf', "it starts with '\\' (normalised: "],
  // Control and invisible characters: a line break, a soft hyphen or a direction mark hides what the path is.
  ['a\nb.pdf', 'it holds a control or invisible character'],
  ['statements/x.pdf%0A', 'it holds a control or invisible character (decoded: '],
  ['.\u00ad./x.pdf', 'it holds a control or invisible character'],
  ['statements/\u202etxt.pdf', 'it holds a control or invisible character'],
  ['statements/\u2028x.pdf', 'it holds a control or invisible character'],
  ['statements/\ud800x.pdf', 'it holds a control or invisible character'],
  ['statements/%C2%85x.pdf', 'it holds a control or invisible character (decoded: '],
];

describe('documentPathProblem', () => {
  it.each(accepted)('accepts %s', (path) => {
    expect(documentPathProblem(path)).toBeUndefined();
  });

  it.each(refused)('refuses %j', (path, why) => {
    expect(documentPathProblem(path)).toContain(why);
  });
});

// validate's quick check and the request schemas judge a document path by the same rule: the quick check may say
// yes only where the schema does, and both say no to every path above.
describe('the quick check and the schemas on document paths', () => {
  const notes = (path: string): unknown => ({
    import_supplier: 'ACME',
    external_account_number: 'A-1',
    notes: [{ body: 'b', document_paths: [{ document_path: path }] }],
  });

  const statement = (path: string): unknown => ({
    bill_period_from_date: '2026-01-01',
    bill_period_to_date: '2026-01-31',
    statement_path: path,
    statement_id: 'S-1',
  });

  it.each(accepted)('both accept %s', (path) => {
    expect(notesRequestFits(notes(path))).toBe(true);
    expect(notesRequestSchema.safeParse(notes(path)).success).toBe(true);
    expect(accountStatementSchema.safeParse(statement(path)).success).toBe(true);
  });

  it.each(refused)('both refuse %j', (path) => {
    expect(notesRequestFits(notes(path))).toBe(false);
    expect(notesRequestSchema.safeParse(notes(path)).success).toBe(false);
    expect(accountStatementSchema.safeParse(statement(path)).success).toBe(false);
  });
});
