import { closeSync, constants, createWriteStream, openSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { once } from 'node:events';
import type { ExportMapping, ShapeRules } from '../mapping/mapping-rules.js';
import { holdPrivate, PRIVATE_FILE_MODE, releasePrivate, removePrivate } from '../private-files.js';
import { openShape, shapeLimits, toJson } from '../shape/index.js';
import { stopSignal } from '../stop-signals.js';
import { parseJson } from '../sources/json-value.js';
import { recordCells, viewHeader, viewKeyColumn } from './shaped-export.js';

// `migrate shape <dir> --out DIR` (docs/export-format.md "Shaping legacy files with SQL"): the shaped export written
// in the tool's own layout, one CSV file per record kind, each row with the legacy `_file` and `_line` it comes from
// (and `_rows`, every legacy row of it, where the view names them),
// in external account number order; and beside them the mapping file without `sources` and `shape`, so that
// `validate` and `push` read the directory as it is, with the same rules, and name every problem at its legacy line.
// Every file is 0600 (the whole shaped customer data); a write that fails or is stopped removes what it wrote.

export interface WrittenShape {
  files: Array<{ file: string; rows: number }>;
}

const CREATE = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;

const NEEDS_QUOTES = /[",\r\n]|^\s|\s$/;

function csvCell(value: string): string {
  return NEEDS_QUOTES.test(value) ? `"${value.replaceAll('"', '""')}"` : value;
}

/** `makeOutDir`: called once the shape ran and every view has its key, so a refused shape makes no directory. */
export async function writeShapedExport(
  dir: string,
  config: ExportMapping & { shape: ShapeRules },
  makeOutDir: () => string,
  onShaping?: () => void,
): Promise<WrittenShape> {
  const written: string[] = [];
  let outDir: string | undefined;
  // Created here, never over a file (nor through a link) already there: only a file this write made is removed.
  const create = (file: string): number => {
    outDir ??= makeOutDir();
    const place = path.join(outDir, file);
    const fd = openSync(place, CREATE, PRIVATE_FILE_MODE);
    written.push(place);
    holdPrivate(place);
    return fd;
  };
  try {
    const shape = await writeShaped(dir, config, create, onShaping);
    written.forEach(releasePrivate);
    return shape;
  } catch (error) {
    written.forEach(removePrivate);
    throw error;
  }
}

async function writeShaped(
  dir: string,
  config: ExportMapping & { shape: ShapeRules },
  create: (file: string) => number,
  onShaping: (() => void) | undefined,
): Promise<WrittenShape> {
  const shaped = await openShape({
    exportDir: dir,
    shapeFile: config.shape.file,
    shapeName: config.shape.name,
    sources: config.shape.sources,
    limits: shapeLimits(config.shape.limits ?? {}, os.tmpdir()),
    tempRoot: os.tmpdir(),
    signal: stopSignal(),
    onShaping,
  });
  try {
    // Every view's key first: a view without one is refused before any file is written.
    const keys = shaped.views.map((view) => viewKeyColumn(config.shape, view, config));
    const files: WrittenShape['files'] = [];
    for (const [index, view] of shaped.views.entries()) {
      const file = `${view.kind}.csv`;
      const out = createWriteStream('', { fd: create(file) });
      const write = async (text: string): Promise<void> => {
        if (!out.write(text)) await once(out, 'drain');
      };
      await write(`${viewHeader(view).map(csvCell).join(',')}\n`);
      let rows = 0;
      for await (const batch of shaped.rows(view, keys[index] as string)) {
        let text = '';
        for (const row of batch) text += `${recordCells(view, row).map(csvCell).join(',')}\n`;
        rows += batch.length;
        await write(text);
      }
      out.end();
      await once(out, 'close');
      files.push({ file, rows });
    }
    await writeMappingFile(config, create);
    files.push({ file: 'migrate.config.json', rows: 0 });
    return { files };
  } finally {
    await shaped.close();
  }
}

/** The mapping file for the shaped export: the same rules, without the shape; a contract named by its full path. */
async function writeMappingFile(config: ExportMapping, create: (file: string) => number): Promise<void> {
  if (config.configFile === undefined) return;
  // Read by the strict parser the mapping file passed (numbers keep their text: a constant 1.10 stays 1.10).
  const file = parseJson(await readFile(config.configFile, 'utf8')) as Record<string, unknown>;
  delete file['sources'];
  delete file['shape'];
  if (typeof file['contract'] === 'string')
    file['contract'] = path.resolve(path.dirname(config.configFile), file['contract']);
  const fd = create('migrate.config.json');
  try {
    writeFileSync(fd, `${toJson(file)}\n`);
  } finally {
    closeSync(fd);
  }
}
