import { CsvError } from 'csv-parse';
import { parse } from 'csv-parse/sync';
import { describe, expect, it } from 'vitest';
import { CsvRowError, CsvRowSplitter, type CsvRow } from '../../src/sources/csv-rows.js';
import { seededStream as random } from '../../src/sandbox/random.js';

// The rows the splitter gives (quote-free rows split at the delimiter, the rest by csv-parse) against csv-parse over
// the whole text, on random CSV fed in random pieces: the same cells, lines and errors.

const PIECES = ['a', 'b', 'Z', '0', ' ', 'é', '€', '𝄞', '\t', ';', '|', ',', '"', "'", '\n', '\r\n', '\r', 'x y'];

/**
 * Random CSV: quoted and bare cells, blank lines, LF or CR LF. `malformed`: some rows csv-parse refuses, and no carriage
 * return at all (csv-parse's own line count, in its errors, takes one in a quoted cell for a line break; the tool
 * counts line feeds).
 */
function generate(next: () => number, delimiter: string, malformed: boolean, quote: string | false = '"'): string {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)] as T;
  const pieces = malformed ? PIECES.filter((piece) => !piece.includes('\r')) : PIECES;
  const eol = malformed || next() < 0.5 ? '\n' : '\r\n';
  const rows: string[] = [];
  const count = 1 + Math.floor(next() * 30);
  for (let row = 0; row < count; row += 1) {
    if (next() < 0.08) {
      rows.push('');
      continue;
    }
    if (malformed && next() < 0.05) {
      rows.push(pick([`ab"c${delimiter}d`, `"ab"c${delimiter}d`, `x${delimiter}"open`, `"a"${delimiter}"b" `]));
      continue;
    }
    const cells: string[] = [];
    const width = 1 + Math.floor(next() * 5);
    for (let cell = 0; cell < width; cell += 1) {
      let value = '';
      const length = Math.floor(next() * 6);
      for (let index = 0; index < length; index += 1) value += pick(pieces);
      // Without quoting, a value cannot hold a delimiter or a line break: it is written without them.
      if (quote === false) cells.push(value.replaceAll(delimiter, '').replace(/[\r\n]/g, ''));
      else if (/[\r\n]/.test(value) || value.includes(quote) || value.includes(delimiter) || next() < 0.2)
        cells.push(`${quote}${value.replaceAll(quote, quote + quote)}${quote}`);
      else cells.push(value);
    }
    rows.push(cells.join(delimiter));
  }
  const trailing = next() < 0.7 ? eol : '';
  return rows.join(eol) + trailing;
}

/**
 * csv-parse's refusal of the whole text: its code, and its line, or for a quote never closed the line where the row
 * holding it starts (csv-parse names the end of the text): the last line that starts outside quotes.
 */
function refusal(text: string, delimiter: string): { code: string; line: number } | undefined {
  try {
    expected(text, delimiter);
    return undefined;
  } catch (error) {
    if (!(error instanceof CsvError)) throw error;
    if (error.code !== 'CSV_QUOTE_NOT_CLOSED')
      return { code: error.code, line: (error as unknown as { lines: number }).lines };
    let line = 1;
    let start = 1;
    let quoted = false;
    for (const char of text) {
      if (char === '"') quoted = !quoted;
      else if (char === '\n') {
        line += 1;
        if (!quoted) start = line;
      }
    }
    return { code: error.code, line: start };
  }
}

/** csv-parse over the whole text, with the start line of each record (blank lines included, as the splitter gives). */
function expected(text: string, delimiter: string, quote: string | false = '"'): CsvRow[] {
  const records = parse(text, {
    delimiter,
    quote,
    escape: quote,
    relax_column_count: true,
    skip_empty_lines: false,
    record_delimiter: ['\r\n', '\n'],
  }) as string[][];
  let line = 1;
  return records.map((cells) => {
    const row = { line, cells };
    line += 1 + cells.reduce((sum, cell) => sum + cell.split('\n').length - 1, 0);
    return row;
  });
}

/** The splitter fed the text's bytes in random pieces (1 to 40 bytes: through rows, quotes and UTF-8 sequences). */
function split(text: string, delimiter: string, next: () => number, quote: string | false = '"'): CsvRow[] {
  const bytes = Buffer.from(text, 'utf8');
  const splitter = new CsvRowSplitter(delimiter, quote);
  const rows: CsvRow[] = [];
  for (let at = 0; at < bytes.length;) {
    const size = 1 + Math.floor(next() * 40);
    splitter.push(bytes.subarray(at, at + size));
    // Taken a few bytes' worth at a time, or all at once.
    const budget = next() < 0.5 ? 1 + Math.floor(next() * 20) : undefined;
    for (let taken = splitter.rows(budget); taken.length > 0; taken = splitter.rows(budget)) rows.push(...taken);
    at += size;
  }
  splitter.end();
  rows.push(...splitter.rows());
  return rows;
}

describe('CSV rows: quote-free rows split, the rest by csv-parse', () => {
  for (const delimiter of [',', ';', '\t', '|']) {
    it(`gives csv-parse's cells and lines on 400 random files, delimiter ${JSON.stringify(delimiter)}`, () => {
      for (let seed = 1; seed <= 400; seed += 1) {
        const next = random(seed * 7 + delimiter.charCodeAt(0));
        const text = generate(next, delimiter, false);
        expect({ seed, rows: split(text, delimiter, next) }).toEqual({ seed, rows: expected(text, delimiter) });
      }
    });
  }

  for (const quote of ["'", false] as const) {
    it(`gives csv-parse's cells and lines on 400 random files quoted with ${JSON.stringify(quote)}`, () => {
      let quoteCharacters = 0;
      for (let seed = 1; seed <= 400; seed += 1) {
        const next = random(seed * 11);
        const text = generate(next, ';', false, quote);
        if (text.includes('"')) quoteCharacters += 1;
        expect({ seed, rows: split(text, ';', next, quote) }).toEqual({ seed, rows: expected(text, ';', quote) });
      }
      // A " (and, quoted with ', a ' doubled) in most files: an ordinary character where it is not the quote.
      expect(quoteCharacters).toBeGreaterThan(200);
    });
  }

  it("refuses what csv-parse refuses, with its error, at the refused row's line", () => {
    let refusals = 0;
    for (let seed = 1; seed <= 600; seed += 1) {
      const next = random(seed);
      const text = generate(next, ',', true);
      const refused = refusal(text, ',');
      if (refused === undefined) continue;
      refusals += 1;
      let thrown: unknown;
      try {
        split(text, ',', next);
      } catch (error) {
        thrown = error;
      }
      expect(thrown, `seed ${seed}`).toBeInstanceOf(CsvRowError);
      const error = thrown as CsvRowError;
      expect({ seed, code: error.csv.code, line: error.line }).toEqual({ seed, ...refused });
    }
    expect(refusals).toBeGreaterThan(100);
  });

  it('names a row longer than a record may be at its start, whether it ends or not', () => {
    const long = 'x'.repeat(4 * 1024 * 1024 + 10);
    const texts = [`a,b\nc,${long}\nd,e\n`, `a,b\nc,"${long}`, `a,b\nc,${long}`];
    // Without quoting too: such a row is split at the delimiter, never taken whole.
    for (const [text, quote] of [...texts.map((text) => [text, '"'] as const), [texts[0] as string, false] as const]) {
      const splitter = new CsvRowSplitter(',', quote);
      const bytes = Buffer.from(text);
      let thrown: unknown;
      try {
        for (let at = 0; at < bytes.length; at += 65536) {
          splitter.push(bytes.subarray(at, at + 65536));
          while (splitter.rows().length > 0);
        }
        splitter.end();
        splitter.rows();
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(CsvRowError);
      expect({ code: (thrown as CsvRowError).csv.code, line: (thrown as CsvRowError).line }).toEqual({
        code: 'CSV_MAX_RECORD_SIZE',
        line: 2,
      });
    }
  });

  it('keeps a carriage return that ends the file without a line feed, as csv-parse does', () => {
    for (const text of ['a,b\r', 'a,b\r\n\r', '"a",b\r']) {
      expect(split(text, ',', random(1))).toEqual(expected(text, ','));
    }
  });
});
