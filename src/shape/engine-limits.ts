import { InputError } from '../errors.js';
import { formatSize } from './engine-size.js';

// The shape engine's memory and temporary disk as operator settings, and what the engine's failure to stay within
// them tells the user (docs/from-a-legacy-system.md "SQL that scales"): which view or table, which setting, its value
// and where it came from, how to raise it, and where the SQL that does not need more is taught. The engine's own
// words follow in brackets, never alone: they name settings of the engine that a user of this tool cannot reach.

/**
 * What a failure of the engine is, told at `where`: running short of memory or temporary disk, or undefined for
 * anything else (shortageError with the engine's limits).
 */
export type ShortageOf = (where: string, error: unknown) => InputError | undefined;

/** Where a setting's value came from, as `migrate config show` says it. */
export type LimitSource = 'flag' | 'environment' | 'file' | 'default';

export interface EngineLimit {
  bytes: number;
  source: LimitSource;
  /** For a default: what it was sized from (`a quarter of the 4.1GB this process may use (its cgroup's limit)`). */
  basis?: string;
}

export interface ShapeLimits {
  memory: EngineLimit;
  /** The most the engine's files (its database, its spills, the sources' copies) may take in `tempRoot`. */
  tempDisk: EngineLimit;
}

interface Naming {
  flag: string;
  key: string;
  env: string;
}

export const SHAPE_MEMORY: Naming = { flag: '--shape-memory', key: 'shape_memory', env: 'MIGRATE_SHAPE_MEMORY' };
export const SHAPE_TEMP_LIMIT: Naming = {
  flag: '--shape-temp-limit',
  key: 'shape_temp_limit',
  env: 'MIGRATE_SHAPE_TEMP_LIMIT',
};

const GUIDE = 'docs/from-a-legacy-system.md "SQL that scales"';

function givenBy(naming: Naming, limit: EngineLimit): string {
  switch (limit.source) {
    case 'flag':
      return `${naming.flag} ${formatSize(limit.bytes)}`;
    case 'environment':
      return `${naming.env}=${formatSize(limit.bytes)}`;
    case 'file':
      return `${naming.key} ${formatSize(limit.bytes)} in the run configuration`;
    case 'default':
      return `${naming.flag}'s default${limit.basis === undefined ? '' : `, ${limit.basis}`}`;
  }
}

function raise(naming: Naming, limit: EngineLimit): string {
  return (
    `give more with ${naming.flag} ${formatSize(limit.bytes * 2)} (or ${naming.key} in the run configuration, or ` +
    `${naming.env})`
  );
}

/** What ran short, read from the engine's message; `diskStopped` when the temporary directory's watch stopped it. */
export function engineShortage(message: string, diskStopped: boolean): 'memory' | 'disk' | 'disk-full' | undefined {
  if (diskStopped || /max_temp_directory_size/.test(message)) return 'disk';
  if (/No space left on device|ENOSPC|disk is full/i.test(message)) return 'disk-full';
  if (/Out of Memory/i.test(message)) return 'memory';
  return undefined;
}

const engineWords = (message: string): string =>
  message
    .replace(/\s*(?:This limit was set|Possible solutions)[\s\S]*$/, '')
    .replace(/\s*\n\s*/g, ' ')
    .trim()
    .replace(/\.$/, '');

/**
 * The error for `where` (a view, a source table, a statement of the shape file) when the engine stopped for want of
 * memory or temporary disk; undefined for any other failure (the caller's own message applies).
 */
export function shortageError(
  where: string,
  error: unknown,
  context: { limits: ShapeLimits; tempRoot: string; diskStopped: boolean },
): InputError | undefined {
  const message = error instanceof Error ? error.message : String(error);
  const shortage = engineShortage(message, context.diskStopped);
  if (shortage === undefined) return undefined;
  const { memory, tempDisk } = context.limits;
  const engine = context.diskStopped ? '' : ` (the engine: ${engineWords(message)})`;
  if (shortage === 'memory')
    return new InputError(
      where,
      undefined,
      `the shape engine ran out of memory: it may use ${formatSize(memory.bytes)} ` +
        `(${givenBy(SHAPE_MEMORY, memory)}). Either ${raise(SHAPE_MEMORY, memory)}, or write the SQL in the forms ` +
        `that spill to disk instead of holding the whole table in memory: ${GUIDE}.${engine}`,
      'shape_out_of_memory',
      error,
    );
  if (shortage === 'disk')
    return new InputError(
      where,
      undefined,
      `the shape engine's temporary files reached their limit of ${formatSize(tempDisk.bytes)} in ` +
        `${context.tempRoot} (${givenBy(SHAPE_TEMP_LIMIT, tempDisk)}). Where that disk has room, ` +
        `${raise(SHAPE_TEMP_LIMIT, tempDisk)}; ` +
        'else point TMPDIR at a larger disk. A view that grows without end (a join missing its condition, a ' +
        `recursive query) fits no limit: ${GUIDE}.${engine}`,
      'shape_out_of_disk',
      error,
    );
  return new InputError(
    where,
    undefined,
    `the disk holding the shape engine's temporary directory ${context.tempRoot} is full, before its limit of ` +
      `${formatSize(tempDisk.bytes)} (${givenBy(SHAPE_TEMP_LIMIT, tempDisk)}). Free space there or point TMPDIR at a ` +
      `larger disk, and keep ${SHAPE_TEMP_LIMIT.flag} below what is free: ${GUIDE}.${engine}`,
    'shape_out_of_disk',
    error,
  );
}
