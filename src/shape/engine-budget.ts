import { readFileSync, statfsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { RUN_DEFAULTS } from '../defaults.js';
import type { EngineLimit, ShapeLimits } from './engine-limits.js';
import { formatSize } from './engine-size.js';

// What the shape engine may use when the operator does not say (docs/operators-guide.md "The shape engine's
// memory and disk"): a share of the memory this process may use, the cgroup's limit where there is one (a container,
// a systemd unit) and else the machine's, within bounds; and a share of the free space of the temporary directory,
// so that a query that grows without end stops there instead of filling a TMPDIR other programs share.

/** The memory the process may use, and what bounds it. */
export interface ProcessMemory {
  bytes: number;
  from: 'cgroup' | 'machine';
}

/** A cgroup limit this large means none (cgroup v1 writes the largest page-aligned 64-bit number). */
const NO_LIMIT = 2 ** 62;

/** The directories from `dir` up to the hierarchy's root: a limit of any ancestor bounds the process too. */
function upFrom(root: string, dir: string): string[] {
  const dirs: string[] = [];
  for (let at = path.posix.normalize(dir); ; at = path.posix.dirname(at)) {
    dirs.push(path.posix.join(root, at));
    if (at === '/' || at === '.') return dirs;
  }
}

/**
 * The lowest memory limit of the cgroups this process is in (v2 `memory.max`, v1 `memory.limit_in_bytes`), from
 * `/proc/self/cgroup`'s text and a reader of the files under /sys/fs/cgroup; undefined where none is set.
 */
export function cgroupMemoryLimit(read: (file: string) => string | undefined): number | undefined {
  const limits: number[] = [];
  for (const line of (read('/proc/self/cgroup') ?? '').split('\n')) {
    const [id, controllers, dir] = line.split(':');
    if (dir === undefined) continue;
    const v2 = id === '0' && controllers === '';
    if (!v2 && !(controllers ?? '').split(',').includes('memory')) continue;
    const root = v2 ? '/sys/fs/cgroup' : '/sys/fs/cgroup/memory';
    const file = v2 ? 'memory.max' : 'memory.limit_in_bytes';
    for (const each of upFrom(root, dir)) {
      const value = Number(read(path.posix.join(each, file))?.trim());
      if (Number.isSafeInteger(value) && value > 0 && value < NO_LIMIT) limits.push(value);
    }
  }
  return limits.length === 0 ? undefined : Math.min(...limits);
}

/** The memory this process may use: its cgroup's limit where lower than the machine's memory. */
export function processMemory(machine: number, read: (file: string) => string | undefined = readText): ProcessMemory {
  const cgroup = cgroupMemoryLimit(read);
  return cgroup !== undefined && cgroup < machine
    ? { bytes: cgroup, from: 'cgroup' }
    : { bytes: machine, from: 'machine' };
}

function readText(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}

const MB = 1e6;
const wholeMb = (bytes: number): number => Math.floor(bytes / MB) * MB;

const percent = (share: number): string => `${Math.round(share * 100)}%`;

/** The engine's memory limit by default: a share of what the process may use, within the bounds of the defaults. */
export function defaultShapeMemory(memory: ProcessMemory): EngineLimit {
  const { share, least, most } = RUN_DEFAULTS.shapeMemory;
  const of = memory.from === 'cgroup' ? "its cgroup's limit" : "the machine's memory";
  return {
    bytes: Math.min(most, Math.max(least, wholeMb(memory.bytes * share))),
    source: 'default',
    basis:
      `${percent(share)} of ${formatSize(wholeMb(memory.bytes))} (${of}) ` +
      `within ${formatSize(least)}-${formatSize(most)}`,
  };
}

/** The engine's temporary disk by default: a share of the space free in the temporary directory. */
export function defaultShapeTempLimit(freeBytes: number, tempRoot: string): EngineLimit {
  const { share } = RUN_DEFAULTS.shapeTempDisk;
  return {
    bytes: Math.max(1e6, wholeMb(freeBytes * share)),
    source: 'default',
    basis: `${percent(share)} of the ${formatSize(wholeMb(freeBytes))} free in ${tempRoot}`,
  };
}

/** The limits a shape runs with: those the operator gave, the defaults for the others (read from this machine). */
export function shapeLimits(given: Partial<ShapeLimits>, tempRoot: string): ShapeLimits {
  return {
    memory: given.memory ?? defaultShapeMemory(thisProcessMemory()),
    tempDisk: given.tempDisk ?? defaultShapeTempLimit(freeSpace(tempRoot), tempRoot),
  };
}

/** The bytes free for this user in the file system holding `dir`. */
export function freeSpace(dir: string): number {
  const stats = statfsSync(dir);
  return stats.bavail * stats.bsize;
}

/** The memory this process may use on this machine (read at the edge: the cgroup files, the machine's total). */
export const thisProcessMemory = (): ProcessMemory => processMemory(os.totalmem());

/**
 * The engine's region for its blocks: its memory limit, where the process may hold that (the engine reserves at most
 * 80% of the memory it sees for the region and refuses a larger one); 0, blocks from the C library's heap, past it.
 */
export function blockRegionBytes(limit: number, memory: ProcessMemory = thisProcessMemory()): number {
  return limit <= memory.bytes * 0.75 ? limit : 0;
}
