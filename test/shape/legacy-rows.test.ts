import { describe, expect, it } from 'vitest';
import { legacyRowsOfText, legacyRowsText } from '../../src/shape/index.js';

// A view's `_rows`, as DuckDB's to_json gives it: a list of 'file:line' texts or of {file, line} structs.

describe('_rows', () => {
  it("reads 'file:line' texts and structs, each row once, and writes them back as texts", () => {
    const rows = legacyRowsOfText('["C.csv:2","P:ART.csv:14",null,"C.csv:2"]');
    expect(rows).toEqual([
      { file: 'C.csv', line: 2 },
      { file: 'P:ART.csv', line: 14 },
    ]);
    expect(legacyRowsOfText('[{"file":"C.csv","line":2},{"_file":"P.csv","_line":"7"}]')).toEqual([
      { file: 'C.csv', line: 2 },
      { file: 'P.csv', line: 7 },
    ]);
    expect(legacyRowsText(rows ?? [])).toBe('["C.csv:2","P:ART.csv:14"]');
    expect(legacyRowsOfText('')).toEqual([]);
  });

  it('takes nothing else for a list of rows', () => {
    for (const text of ['"C.csv:2"', '["C.csv"]', '["C.csv:0"]', '[{"file":"C.csv"}]', '[3]', 'not json'])
      expect(legacyRowsOfText(text), text).toBeUndefined();
  });
});
