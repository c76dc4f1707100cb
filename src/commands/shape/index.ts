import { existsSync, readdirSync, realpathSync, rmSync } from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { ExitCode, InterruptedError, UsageError } from '../../errors.js';
import { makePrivateDirs } from '../../private-files.js';
import { untilStopped, type StopRules } from '../../stop-signals.js';
import { writeShapedExport } from '../../intake/write-shaped.js';
import { loadCommandConfig, registerMappingOptions, type MappingFlags } from '../common/mapping-options.js';
import { addOptions } from '../common/option-table.js';
import { givenShapeLimits, SHAPE_LIMIT_OPTIONS } from '../common/shape-limits.js';

// `migrate shape <dir> --out DIR`: the legacy export shaped by the mapping file's SQL, written in the tool's own
// layout with the legacy file and line of every row (docs/export-format.md "Shaping legacy files with SQL"): for
// sign-off, for diffing two rehearsals, and for pushing as it is.

export interface ShapeCommandOptions extends Omit<MappingFlags, 'contract'> {
  out: string;
}

export function registerShapeCommand(program: Command, setExitCode: (code: number) => void): void {
  const command = program
    .command('shape')
    .description(
      "Shape a legacy export with the mapping file's sources and SQL, and write it in the tool's own layout (one CSV " +
        "per record kind, with each row's legacy _file and _line, and the mapping file to read it with). Exit 0 " +
        'written, 2 unreadable input, SQL error or bad configuration.',
    )
    .argument('<dir>', 'the legacy export directory (the files the mapping file\'s "sources" name)')
    .requiredOption('--out <dir>', 'an empty or new directory outside the export directory to write into');
  addOptions(registerMappingOptions(command), SHAPE_LIMIT_OPTIONS);
  command.action(async (dir: string, options: Omit<ShapeCommandOptions, 'dir'>) => {
    const shapeLimits = givenShapeLimits(command, process.env);
    setExitCode(await untilStopped(STOPPED, () => shapeCommand({ ...options, dir, shapeLimits })));
  });
}

/** Stopped by SIGINT, SIGTERM or SIGHUP: the engine interrupted, its files and what was written removed. */
const STOPPED: StopRules = {
  interrupted: () => new InterruptedError('by a stop signal', 'nothing of the shaped export is kept: run it again'),
  atOnce: true,
};

export async function shapeCommand(options: ShapeCommandOptions): Promise<number> {
  const config = await loadCommandConfig(options);
  if (!config.shape)
    throw new UsageError(
      `migrate shape needs a mapping file with "sources" and "shape" ` +
        `(${config.configFile === undefined ? 'none was found' : `${config.configFile} has none`}); see ` +
        'docs/export-format.md "Shaping legacy files with SQL".',
      'shape_not_configured',
    );
  // Checked before the shape runs, made once it ran: a shape.sql error leaves no directory behind.
  checkOutDir(options.dir, options.out);
  const { name } = config.shape;
  const shaping = (): boolean => process.stderr.write(`shaping: the sources are loaded, running ${name}\n`);
  let made: { dir: string; created: string | undefined } | undefined;
  const makeOutDir = (): string => {
    made = prepareOutDir(options.dir, options.out);
    return made.dir;
  };
  let written;
  try {
    written = await writeShapedExport(options.dir, { ...config, shape: config.shape }, makeOutDir, shaping);
  } catch (error) {
    // The files written are removed by the writer; a directory this run made goes too.
    if (made?.created !== undefined) rmSync(made.created, { recursive: true, force: true });
    throw error;
  }
  for (const file of written.files)
    process.stdout.write(
      file.file.endsWith('.csv')
        ? `${path.join(options.out, file.file)}: ${file.rows} row(s)\n`
        : `${path.join(options.out, file.file)}\n`,
    );
  return ExitCode.ok;
}

/** --out, checked without making it: outside the export directory, and new or empty. */
function checkOutDir(dir: string, out: string): void {
  const exportDir = realpathSync(path.resolve(dir));
  refuseInside(exportDir, path.resolve(out), out);
  if (existsSync(path.resolve(out))) refuseFilled(exportDir, out);
}

/** --out made (0700), if new: outside the export directory, and new or empty: nothing there is overwritten. */
function prepareOutDir(dir: string, out: string): { dir: string; created: string | undefined } {
  const exportDir = realpathSync(path.resolve(dir));
  // Checked before the directory is made (nothing is left behind), and again on its real path (a link into the export).
  refuseInside(exportDir, path.resolve(out), out);
  const created = makePrivateDirs(path.resolve(out));
  return { dir: refuseFilled(exportDir, out), created };
}

/** Refuses an --out inside the export (by its real path: a link into it) or not empty; returns its real path. */
function refuseFilled(exportDir: string, out: string): string {
  const real = realpathSync(path.resolve(out));
  refuseInside(exportDir, real, out);
  const entries = readdirSync(real);
  if (entries.length > 0)
    throw new UsageError(
      `--out ${out}: ${real} is not empty (${entries.slice(0, 5).join(', ')}${entries.length > 5 ? ', ...' : ''}); ` +
        'the shaped export is written into a new or empty directory, never over other files. Give another --out.',
      'shape_out_not_empty',
    );
  return real;
}

function refuseInside(exportDir: string, outDir: string, given: string): void {
  const inside = path.relative(exportDir, outDir);
  if (inside !== '' && (inside.startsWith('..') || path.isAbsolute(inside))) return;
  throw new UsageError(
    `--out ${given}: ${outDir} is ${inside === '' ? '' : 'inside '}the export directory ${exportDir}; the shaped ` +
      'export never goes into the legacy one (its files would be read as sources). Give another --out.',
    'shape_out_in_export',
  );
}
