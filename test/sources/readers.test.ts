import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { InputError, UsageError } from '../../src/errors.js';
import { findExportFiles, readCsv, readJsonArray, readNdjson } from '../../src/sources/index.js';
import { NUMBER_MARK } from '../../src/sources/json-value.js';

// Every temporary directory of this file lives under one, removed at the end.
const base = mkdtempSync(path.join(os.tmpdir(), 'migrate-test-'));
afterAll(() => rmSync(base, { recursive: true, force: true }));

function tempFile(name: string, content: string | Buffer): string {
  const dir = mkdtempSync(path.join(base, 'migrate-sources-'));
  const file = path.join(dir, name);
  writeFileSync(file, content);
  return file;
}

/** A JSON number as the readers give it: its source text, marked (json-value.ts). */
const number = (text: string): string => `${NUMBER_MARK}${text}`;

async function collect<T>(iterable: AsyncIterable<T>): Promise<T[]> {
  const items: T[] = [];
  for await (const item of iterable) items.push(item);
  return items;
}

async function failure(promise: Promise<unknown>): Promise<InputError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(InputError);
  return error as InputError;
}

const csv = (content: string | Buffer, options: { delimiter?: string; encoding?: string } = {}) =>
  collect(
    readCsv(tempFile('t.csv', content), {
      file: 't.csv',
      delimiter: options.delimiter ?? ',',
      encoding: options.encoding ?? 'utf8',
    }),
  );

describe('CSV reader', () => {
  it('gives every row its 1-based starting line: BOM, CRLF, quoted newlines, blank lines, mixed endings', async () => {
    const rows = await csv('\uFEFFa,b\r\n1,"x\r\ny"\r\n\r\n3,4\n\n5,"p\nq\nr"\n6,"say ""hi"""');
    expect(rows).toEqual([
      { line: 1, cells: ['a', 'b'] },
      { line: 2, cells: ['1', 'x\r\ny'] },
      { line: 5, cells: ['3', '4'] },
      { line: 7, cells: ['5', 'p\nq\nr'] },
      { line: 10, cells: ['6', 'say "hi"'] },
    ]);
  });

  it('reads other delimiters and windows-1252 text', async () => {
    const rows = await csv(Buffer.from('name;town\r\nAm\xe9lie;K\xf6ln\r\n', 'latin1'), {
      delimiter: ';',
      encoding: 'windows-1252',
    });
    expect(rows[1]).toEqual({ line: 2, cells: ['Amélie', 'Köln'] });
  });

  it('refuses a quote that is never closed, naming the line where its row starts, not the end of the file', async () => {
    const error = await failure(csv('a,b\n1,2\n3,"open\n4,5\n'));
    expect(error.line).toBe(3);
    expect(error.message).toBe(
      't.csv:3: cannot be parsed as CSV: a quoted field of the row starting on this line is never closed (a missing closing quote "); the rest of the file would be read as one cell.',
    );
    // Far into a file, after quoted newlines, doubled quotes and blank lines, with thousands of lines after it.
    const before = Array.from({ length: 3000 }, (_, n) =>
      n % 100 === 0 ? `${n},"two\nlines, ""quoted"""\n\n` : `${n},x\n`,
    ).join('');
    const linesBefore = 1 + 3000 + 2 * 30;
    const after = Array.from({ length: 5000 }, (_, n) => `${n},y\n`).join('');
    const far = await failure(csv(`a,b\n${before}broken,"no end\n${after}`));
    expect(far.line).toBe(linesBefore + 1);
    // A slow reader: csv-parse's error drops the rows it had parsed but not handed out yet, so
    // counting the lines of the rows read would name a line too early.
    const slowly = async (): Promise<void> => {
      for await (const row of readCsv(tempFile('t.csv', `a,b\n${before}broken,"no end\n${after}`), {
        file: 't.csv',
        delimiter: ',',
        encoding: 'utf8',
      })) {
        void row;
        await new Promise((resolve) => setImmediate(resolve));
      }
    };
    expect((await failure(slowly())).line).toBe(linesBefore + 1);
  });

  it('refuses a stray quote inside a field', async () => {
    const error = await failure(csv('a,b\n1,2\n3,x"y"z\n'));
    expect(error.line).toBe(3);
    expect(error.message).toContain('a quote " appears inside an unquoted field');
  });

  it('refuses text that is not UTF-8, naming the line and the encoding option', async () => {
    const error = await failure(
      csv(Buffer.concat([Buffer.from('a,b\n1,2\n'), Buffer.from('3,Am\xe9lie\n', 'latin1')])),
    );
    expect(error.line).toBe(3);
    expect(error.message).toContain('set "encoding" in the mapping file');
  });

  it('refuses binary data', async () => {
    const error = await failure(csv(Buffer.from([0x61, 0x2c, 0x62, 0x0a, 0x00, 0x01, 0x02, 0x0a])));
    expect(error.line).toBe(2);
    expect(error.message).toContain('binary data');
  });
});

describe('JSON and NDJSON readers', () => {
  it('streams the objects of a JSON array with the line each starts on', async () => {
    const file = tempFile('a.json', '\uFEFF[\n  {"a": "x]}"},\n  {\n    "b": {"c": [1, 2]}\n  }\n]\n');
    expect(await collect(readJsonArray(file, { file: 'a.json', encoding: 'utf8' }))).toEqual([
      { line: 2, object: { a: 'x]}' } },
      { line: 3, object: { b: { c: [number('1'), number('2')] } } },
    ]);
  });

  it('refuses a truncated JSON array, a non-array and a non-object element', async () => {
    const truncated = tempFile('a.json', '[\n {"a": 1},\n {"b": 2');
    expect((await failure(collect(readJsonArray(truncated, { file: 'a.json', encoding: 'utf8' })))).message).toBe(
      'a.json:3: ends before its JSON array is closed (truncated file?)',
    );
    const object = tempFile('a.json', '{"a": 1}');
    expect((await failure(collect(readJsonArray(object, { file: 'a.json', encoding: 'utf8' })))).message).toContain(
      'is not a JSON array',
    );
    const scalar = tempFile('a.json', '[{"a": 1}, 3]');
    expect((await failure(collect(readJsonArray(scalar, { file: 'a.json', encoding: 'utf8' })))).message).toContain(
      'record 2 is not a JSON object',
    );
  });

  it('reads NDJSON line by line, skipping blank lines, and names a broken line', async () => {
    const file = tempFile('n.ndjson', '{"a": 1}\r\n\n{"b": 2}\n');
    expect(await collect(readNdjson(file, { file: 'n.ndjson', encoding: 'utf8' }))).toEqual([
      { line: 1, object: { a: number('1') } },
      { line: 3, object: { b: number('2') } },
    ]);
    const broken = tempFile('n.ndjson', '{"a": 1}\n{"b": \n');
    const error = await failure(collect(readNdjson(broken, { file: 'n.ndjson', encoding: 'utf8' })));
    expect(error.line).toBe(2);
    expect(error.message).toContain('line 2 is not valid JSON');
  });
});

describe('values as the export holds them', () => {
  const json = (content: string) =>
    collect(readJsonArray(tempFile('a.json', content), { file: 'a.json', encoding: 'utf8' }));
  const ndjson = (content: string) =>
    collect(readNdjson(tempFile('a.ndjson', content), { file: 'a.ndjson', encoding: 'utf8' }));

  it('keeps every number as written in the file, in JSON and NDJSON', async () => {
    const text = '{"external_account_number": 90000000000000000001, "billing_customer_reference": 1.10, "x": 1e309}';
    const expected = {
      external_account_number: number('90000000000000000001'),
      billing_customer_reference: number('1.10'),
      x: number('1e309'),
    };
    expect(await json(`[\n${text}\n]`)).toEqual([{ line: 2, object: expected }]);
    expect(await ndjson(`${text}\n`)).toEqual([{ line: 1, object: expected }]);
  });

  it('refuses a key twice in one object at the line of the second, naming it (never the last one wins)', async () => {
    const error = await failure(
      json(
        '[\n{"external_account_number": "A-1"},\n{"external_account_number": "A-2",\n "billing_name": "x",\n' +
          ' "external_account_number": "A-3"}\n]',
      ),
    );
    expect([error.line, error.code]).toEqual([5, 'input_duplicate_key']);
    expect(error.message).toBe(
      'a.json:5: record 2 has the key "external_account_number" twice in one object; JSON does not say which value ' +
        'counts and it is never guessed: keep one of them.',
    );
    const nested = await failure(ndjson('{"a": 1}\n{"billing_address": {"country": "GB", "country": "FR"}}\n'));
    expect([nested.line, nested.code]).toEqual([2, 'input_duplicate_key']);
    expect(nested.message).toContain('the key "country" twice');
  });

  it('refuses a NUL character escaped in a string, as a NUL byte is refused', async () => {
    const error = await failure(ndjson('{"a": "x"}\n{"a": "x\\u0000"}\n'));
    expect([error.line, error.code]).toEqual([2, 'input_binary']);
  });

  it('names the line of a syntax error inside a record that spans lines', async () => {
    const error = await failure(json('[\n{"a": 1,\n "b": 01}\n]'));
    expect([error.line, error.code]).toEqual([3, 'input_unparseable']);
    expect(error.message).toContain('record 1 is not valid JSON');
  });
});

describe('a UTF-8 file declared in a single-byte encoding', () => {
  const declared = (content: string | Buffer, encoding = 'windows-1252') =>
    collect(readCsv(tempFile('t.csv', content), { file: 't.csv', delimiter: ',', encoding }));

  it('is refused before any row is read, at the line of the first multi-byte character, with what to change', async () => {
    for (const encoding of ['windows-1252', 'latin1']) {
      const error = await failure(
        declared('external_account_number,billing_name\nA-1,Plain\nA-2,Café Zoë Ltd\n', encoding),
      );
      expect([error.line, error.code]).toEqual([3, 'input_encoding_mismatch']);
      expect(error.message).toBe(
        `t.csv:3: is declared "encoding": "${encoding}" in the mapping file, but its bytes are UTF-8: read as ` +
          `${encoding}, "Café" would be sent as "CafÃ©". Remove "encoding" from the mapping file (UTF-8 is the ` +
          `default) or set it to "utf-8".`,
      );
    }
    const jsonError = await failure(
      collect(readNdjson(tempFile('a.ndjson', '{"billing_name": "Zoë"}\n'), { file: 'a.ndjson', encoding: 'cp1252' })),
    );
    expect(jsonError.code).toBe('input_encoding_mismatch');
  });

  it('reads real windows-1252 text, and plain ASCII, as declared', async () => {
    expect((await declared(Buffer.from('a,b\n1,Caf\xe9 Zo\xeb\n', 'latin1')))[1]?.cells).toEqual(['1', 'Café Zoë']);
    expect((await declared('a,b\n1,Plain\n'))[1]?.cells).toEqual(['1', 'Plain']);
  });
});

describe('finding the export files', () => {
  const dirWith = (...names: string[]): string => {
    const dir = mkdtempSync(path.join(base, 'migrate-files-'));
    for (const name of names) writeFileSync(path.join(dir, name), 'external_account_number\n');
    return dir;
  };

  it('recognises base names case-insensitively, accounts first, and lists other files as not read', async () => {
    const found = await findExportFiles(
      dirWith('Notes.NDJSON', 'ACCOUNTS.csv', 'customers.jsonl', 'readme.txt', 'migrate.config.json'),
    );
    expect(found.files.map((file) => [file.file, file.kind, file.format])).toEqual([
      ['ACCOUNTS.csv', 'accounts', 'csv'],
      ['customers.jsonl', 'customers', 'ndjson'],
      ['Notes.NDJSON', 'notes', 'ndjson'],
    ]);
    expect(found.notRead.map((entry) => entry.name)).toEqual(['readme.txt']);
  });

  it('refuses two formats of one base name, naming both', async () => {
    const error = await failure(findExportFiles(dirWith('accounts.csv', 'accounts.json')));
    expect(error.message).toContain('accounts.json');
    expect(error.message).toContain('accounts.csv');
  });

  it('refuses a directory without an accounts file, and a missing directory', async () => {
    expect((await failure(findExportFiles(dirWith('customers.csv')))).message).toContain('has no accounts file');
    await expect(findExportFiles('/nonexistent/export')).rejects.toBeInstanceOf(UsageError);
  });
});
