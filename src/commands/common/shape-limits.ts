import type { Command } from 'commander';
import { SHAPE_MEMORY, SHAPE_TEMP_LIMIT, type EngineLimit, type ShapeLimits } from '../../shape/index.js';
import type { OptionRow } from './option-table.js';
import { sizeOption } from './option-parsers.js';
import { settingSource } from './run-config.js';

// The shape engine's memory and temporary disk (docs/operators-guide.md "The shape engine's memory and disk"):
// options of validate, push and shape, each also set by its environment variable or in the run configuration; what
// is not given is sized by the engine from this machine (shape/engine-budget.ts).

// prettier-ignore
export const SHAPE_LIMIT_OPTIONS: readonly OptionRow[] = [
  { group: 'Tuning', flags: `${SHAPE_MEMORY.flag} <size>`, env: SHAPE_MEMORY.env,
    parse: sizeOption(SHAPE_MEMORY.flag, 16e6),
    help: "a legacy export's SQL: the engine's memory (e.g. 2GB; default a quarter of the memory this process may " +
      'use, 128MB-1GB); past it sorts, joins and aggregates spill to TMPDIR' },
  { group: 'Tuning', flags: `${SHAPE_TEMP_LIMIT.flag} <size>`, env: SHAPE_TEMP_LIMIT.env,
    parse: sizeOption(SHAPE_TEMP_LIMIT.flag, 1e6),
    help: "a legacy export's SQL: the most its engine's files may take in TMPDIR (default half of the space free " +
      'there)' },
];

/** --shape-memory and --shape-temp-limit where the flag, the environment or the run configuration gave them. */
export function givenShapeLimits(command: Command, env: NodeJS.ProcessEnv): Partial<ShapeLimits> {
  const given = (key: 'shape_memory' | 'shape_temp_limit'): EngineLimit | undefined => {
    const bytes = command.getOptionValue(key === 'shape_memory' ? 'shapeMemory' : 'shapeTempLimit') as unknown;
    const source = settingSource(command, key, env);
    return typeof bytes === 'number' && source !== 'default' ? { bytes, source } : undefined;
  };
  const memory = given('shape_memory');
  const tempDisk = given('shape_temp_limit');
  return { ...(memory === undefined ? {} : { memory }), ...(tempDisk === undefined ? {} : { tempDisk }) };
}
