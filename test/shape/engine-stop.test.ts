import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { openShape } from '../../src/shape/index.js';

// The command's stop (SIGINT, SIGTERM, SIGHUP) interrupts the shape engine's running query through the client's
// interrupt: a query over a trillion rows ends at once, and the engine's directory is removed.

const root = mkdtempSync(join(tmpdir(), 'engine-stop-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

it('a stop while the shape file runs interrupts its query and removes the engine directory', async () => {
  const dir = join(root, 'export');
  const temp = join(root, 'tmp');
  mkdirSync(dir);
  mkdirSync(temp);
  writeFileSync(join(dir, 'LEGACY_1.csv'), 'ACC,NAME\nA-1,Ann\n');
  writeFileSync(
    join(dir, 'shape.sql'),
    'CREATE TABLE slow AS SELECT sum(a.range * b.range) AS s FROM range(1000000) AS a, range(1000000) AS b;\n' +
      'CREATE VIEW accounts AS SELECT ACC AS external_account_number, NAME AS billing_name, _file, _line FROM legacy;\n',
  );
  const stop = new AbortController();
  let shaping = false;
  const opening = openShape({
    exportDir: dir,
    shapeFile: join(dir, 'shape.sql'),
    shapeName: 'shape.sql',
    sources: [
      {
        ...{ table: 'legacy', glob: 'LEGACY_*.csv', several: false, format: undefined },
        ...{ encoding: 'utf8', delimiter: ',', header: true },
      },
    ],
    limits: { memory: { bytes: 64e6, source: 'flag' }, tempDisk: { bytes: 1e9, source: 'flag' } },
    tempRoot: temp,
    signal: stop.signal,
    // Aborted as the shape file starts: the slow statement begins after the stop and is interrupted all the same.
    onShaping: () => {
      shaping = true;
      stop.abort();
    },
  });
  const error = await opening.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(shaping).toBe(true);
  expect(String(error)).toMatch(/Interrupted/i);
  expect(readdirSync(temp)).toEqual([]);
});
