import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

// The CSV parsing thread must give exactly readCsv's rows, lines and errors. A worker runs
// compiled JavaScript, so these tests use dist/ (built by test/global-setup.ts) and compare the
// two readers there, in this process and in child processes (exit, early return).

const root = path.resolve(import.meta.dirname, '..', '..');
const dist = (module: string): string => pathToFileURL(path.join(root, 'dist', 'sources', module)).href;
interface Row {
  line: number;
  cells: string[];
}
type Options = { file: string; encoding: string; delimiter: string; onBytes?: (bytes: number) => void };
const { readCsv } = (await import(dist('csv.js'))) as {
  readCsv: (file: string, options: Options) => AsyncGenerator<Row>;
};
const { readCsvBatches } = (await import(dist('csv-thread.js'))) as {
  readCsvBatches: (file: string, options: Options) => AsyncGenerator<Row[]>;
};

const base = mkdtempSync(path.join(os.tmpdir(), 'migrate-csv-thread-test-'));
afterAll(() => rmSync(base, { recursive: true, force: true }));

function tempFile(content: string | Buffer): string {
  const file = path.join(mkdtempSync(path.join(base, 'f-')), 't.csv');
  writeFileSync(file, content);
  return file;
}

/** Rows and error (its class name, message, line and code) of one reader. */
async function outcome(rows: AsyncIterable<Row | Row[]>): Promise<{ rows: Row[]; error?: Record<string, unknown> }> {
  const collected: Row[] = [];
  try {
    for await (const item of rows) collected.push(...(Array.isArray(item) ? item : [item]));
    return { rows: collected };
  } catch (error) {
    const { name, message, line, code, exitCode } = error as Record<string, unknown>;
    return { rows: collected, error: { name, message, line, code, exitCode } };
  }
}

async function expectSame(
  content: string | Buffer,
  options: Partial<Options> = {},
): Promise<{ rows: Row[]; error?: Record<string, unknown> }> {
  const file = tempFile(content);
  const settings = { file: 't.csv', encoding: options.encoding ?? 'utf8', delimiter: options.delimiter ?? ',' };
  const inThread = await outcome(readCsv(file, settings));
  const threaded = await outcome(readCsvBatches(file, settings));
  // An error may come after different numbers of rows (batches), but it must be the same error.
  if (inThread.error) expect(threaded.error).toEqual(inThread.error);
  else expect(threaded).toEqual(inThread);
  return threaded;
}

describe('CSV parsing thread', () => {
  it("gives readCsv's rows and lines: BOM, CRLF, quoted newlines, blank lines, quotes, other delimiters and encodings", async () => {
    const { rows } = await expectSame('\uFEFFa,b\r\n1,"x\r\ny"\r\n\r\n3,4\n\n5,"p\nq\nr"\n6,"say ""hi"""');
    expect(rows.map((row) => row.line)).toEqual([1, 2, 5, 7, 10]);
    await expectSame(Buffer.from('name;town\r\nAm\xe9lie;K\xf6ln\r\n', 'latin1'), {
      delimiter: ';',
      encoding: 'windows-1252',
    });
    await expectSame(Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('a,b\r\n1,\u00e9\r\n', 'utf16le')]), {
      encoding: 'utf-16le',
    });
    await expectSame('');
    await expectSame('a\n\n\n');
  });

  it('keeps cells that hold the batch separators (a JSON batch)', async () => {
    const { rows } = await expectSame('a,b\n"x\u001fy","p\u001eq"\n1,2\n');
    expect(rows[1]?.cells).toEqual(['x\u001fy', 'p\u001eq']);
  });

  it("raises readCsv's errors: broken quoting, stray quote, bad encoding, binary data", async () => {
    const big = Array.from({ length: 5000 }, (_, index) => `${index},row ${index}`).join('\n');
    for (const content of [
      `a,b\n${big}\n3,"open\n4,5\n`,
      `a,b\n${big}\n3,x"y"z\n`,
      Buffer.concat([Buffer.from(`a,b\n${big}\n`), Buffer.from([0xc3, 0x28, 0x0a])]),
      Buffer.from('a,b\n1,\u0000\u0001\u0002\n'),
    ]) {
      const { error } = await expectSame(content);
      expect(error).toMatchObject({ name: 'InputError', exitCode: 2 });
    }
  });

  it('gives the same rows on a large file, with progress up to its size', async () => {
    const content = `id,name,note\n${Array.from({ length: 30_000 }, (_, index) => `${index},"Name ${index}","line\n${index % 7}"`).join('\n')}\n`;
    const file = tempFile(content);
    const seen: number[] = [];
    const threaded = await outcome(
      readCsvBatches(file, { file: 't.csv', encoding: 'utf8', delimiter: ',', onBytes: (bytes) => seen.push(bytes) }),
    );
    expect(threaded).toEqual(await outcome(readCsv(file, { file: 't.csv', encoding: 'utf8', delimiter: ',' })));
    expect(seen.at(-1)).toBe(Buffer.byteLength(content));
  });

  it('keeps characters whole where csv-parse is handed a file in pieces (2-, 3- and 4-byte UTF-8)', async () => {
    // 16 KiB pieces of 256 KiB reads: with cells of 2-, 3- and 4-byte characters, some pieces end inside one.
    const cells = Array.from({ length: 6000 }, (_, index) => [
      `Zoë ${index}`,
      `中文${index}`,
      `😀${'é'.repeat(index % 5)}`,
    ]);
    const content = `a,b,c\n${cells.map((row) => row.join(',')).join('\n')}\n`;
    expect(Buffer.byteLength(content)).toBeGreaterThan(100 * 1024);
    const { rows } = await expectSame(content);
    expect(rows.slice(1).map((row) => row.cells)).toEqual(cells);
  });

  it('hands out the header alone, then a short first batch, then batches of up to a thousand rows', async () => {
    const file = tempFile(`k,v\n${Array.from({ length: 5000 }, (_, index) => `${index},${index}`).join('\n')}\n`);
    const sizes: number[] = [];
    for await (const batch of readCsvBatches(file, { file: 't.csv', encoding: 'utf8', delimiter: ',' }))
      sizes.push(batch.length);
    expect(sizes.slice(0, 2)).toEqual([1, 100]);
    expect(sizes.slice(2).every((size) => size <= 1000)).toBe(true);
    expect(sizes.reduce((sum, size) => sum + size, 0)).toBe(5001);
  });

  it('reads several files at once, interleaved', async () => {
    const files = [0, 1, 2].map((n) =>
      tempFile(`k,v\n${Array.from({ length: 4000 }, (_, index) => `${n}-${index},${index}`).join('\n')}\n`),
    );
    const readers = files.map((file) => readCsvBatches(file, { file: 't.csv', encoding: 'utf8', delimiter: ',' }));
    const rows: Row[][] = [[], [], []];
    let open = readers.length;
    while (open > 0) {
      open = 0;
      for (const [index, reader] of readers.entries()) {
        const next = await reader.next();
        if (!next.done) {
          rows[index]?.push(...next.value);
          open += 1;
        }
      }
    }
    rows.forEach((fileRows, n) =>
      expect(fileRows.map((row) => row.cells[0])).toEqual([
        'k',
        ...Array.from({ length: 4000 }, (_, index) => `${n}-${index}`),
      ]),
    );
  });

  it('parses in a worker thread (the cases above would pass in this thread too), and not when told not to', async () => {
    const file = tempFile('a,b\n1,2\n');
    const threaded = readCsvBatches(file, { file: 't.csv', encoding: 'utf8', delimiter: ',' });
    await threaded.next();
    expect(process.getActiveResourcesInfo()).toContain('MessagePort');
    await threaded.return(undefined);
    process.env['MIGRATE_CSV_THREAD'] = '0';
    try {
      const inThread = readCsvBatches(file, { file: 't.csv', encoding: 'utf8', delimiter: ',' });
      await inThread.next();
      expect(process.getActiveResourcesInfo()).not.toContain('MessagePort');
      await inThread.return(undefined);
    } finally {
      delete process.env['MIGRATE_CSV_THREAD'];
    }
  });

  it('lets a process exit when done, and when it stops reading part way', () => {
    const big = tempFile(`a,b\n${Array.from({ length: 200_000 }, (_, index) => `${index},${index}`).join('\n')}\n`);
    for (const stop of ['', 'break;']) {
      const script = `const { readCsvBatches } = await import(${JSON.stringify(dist('csv-thread.js'))});
        let rows = 0;
        for await (const batch of readCsvBatches(${JSON.stringify(big)}, { file: 'big.csv', encoding: 'utf8', delimiter: ',' })) { rows += batch.length; ${stop} }
        console.log(rows);`;
      const file = path.join(mkdtempSync(path.join(base, 'script-')), 'read.mjs');
      writeFileSync(file, script);
      const child = spawnSync(process.execPath, [file], { encoding: 'utf8', timeout: 20_000 });
      expect(child.stderr).toBe('');
      expect(child.status).toBe(0);
      // The header comes alone, in the first batch.
      expect(Number(child.stdout)).toBe(stop === '' ? 200_001 : 1);
    }
  });
});
