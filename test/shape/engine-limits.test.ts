import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  blockRegionBytes,
  cgroupMemoryLimit,
  defaultShapeMemory,
  defaultShapeTempLimit,
  processMemory,
} from '../../src/shape/engine-budget.js';
import { shortageError, type ShapeLimits } from '../../src/shape/engine-limits.js';
import { formatSize, parseSize } from '../../src/shape/engine-size.js';
import { directoryBytes, watchTempDir } from '../../src/shape/temp-watch.js';

const files =
  (tree: Record<string, string>) =>
  (file: string): string | undefined =>
    tree[file];

describe('sizes', () => {
  it.each([
    ['512MB', 512e6],
    ['1GB', 1e9],
    ['1.5 GB', 1.5e9],
    ['2GiB', 2 * 2 ** 30],
    ['256mib', 256 * 2 ** 20],
    ['64kb', 64e3],
    ['1TB', 1e12],
    ['100B', 100],
  ])('reads %s', (text, bytes) => expect(parseSize(text)).toBe(bytes));

  it.each(['512', 'MB', '-1GB', '0MB', '1 PB', 'lots', ''])('refuses %j', (text) =>
    expect(parseSize(text)).toBeUndefined(),
  );

  it('writes sizes back as an operator would', () => {
    expect(formatSize(1e9)).toBe('1GB');
    expect(formatSize(256e6)).toBe('256MB');
    expect(formatSize(1_500_000_000)).toBe('1.5GB');
    expect(formatSize(41_346_000_000)).toBe('41.3GB');
    expect(formatSize(256 * 2 ** 20)).toBe('268.4MB');
  });
});

describe('the memory the process may use', () => {
  it('is the cgroup v2 limit, the lowest of the cgroup and its parents', () => {
    const read = files({
      '/proc/self/cgroup': '0::/system.slice/migrate.service\n',
      '/sys/fs/cgroup/system.slice/migrate.service/memory.max': '4294967296\n',
      '/sys/fs/cgroup/system.slice/memory.max': '8589934592\n',
      '/sys/fs/cgroup/memory.max': 'max\n',
    });
    expect(cgroupMemoryLimit(read)).toBe(4294967296);
  });

  it('is the cgroup v1 limit, "unlimited" being none', () => {
    const limited = files({
      '/proc/self/cgroup': '12:pids:/docker/abc\n4:memory:/docker/abc\n0::/\n',
      '/sys/fs/cgroup/memory/docker/abc/memory.limit_in_bytes': '2147483648\n',
      '/sys/fs/cgroup/memory/memory.limit_in_bytes': '9223372036854771712\n',
    });
    expect(cgroupMemoryLimit(limited)).toBe(2147483648);
    const unlimited = files({
      '/proc/self/cgroup': '4:memory:/\n',
      '/sys/fs/cgroup/memory/memory.limit_in_bytes': '9223372036854771712\n',
    });
    expect(cgroupMemoryLimit(unlimited)).toBeUndefined();
  });

  it("is a container's own limit when its cgroup namespace shows its cgroup as the root", () => {
    const read = files({ '/proc/self/cgroup': '0::/\n', '/sys/fs/cgroup/memory.max': '1073741824\n' });
    expect(processMemory(16e9, read)).toEqual({ bytes: 1073741824, from: 'cgroup' });
  });

  it("is the machine's memory without a cgroup limit, or with one above it", () => {
    expect(processMemory(16e9, files({}))).toEqual({ bytes: 16e9, from: 'machine' });
    const above = files({ '/proc/self/cgroup': '0::/\n', '/sys/fs/cgroup/memory.max': '64000000000\n' });
    expect(processMemory(16e9, above)).toEqual({ bytes: 16e9, from: 'machine' });
  });
});

describe('the defaults', () => {
  it("take a quarter of the process's memory, within 128MB and 1GB", () => {
    expect(defaultShapeMemory({ bytes: 2e9, from: 'cgroup' })).toMatchObject({
      bytes: 500e6,
      source: 'default',
      basis: "25% of 2GB (its cgroup's limit) within 128MB-1GB",
    });
    expect(defaultShapeMemory({ bytes: 24e9, from: 'machine' }).bytes).toBe(1e9);
    expect(defaultShapeMemory({ bytes: 256e6, from: 'cgroup' }).bytes).toBe(128e6);
  });

  it("keep the engine's blocks in a region of its memory limit, where the process may hold that", () => {
    expect(blockRegionBytes(1e9, { bytes: 4e9, from: 'cgroup' })).toBe(1e9);
    expect(blockRegionBytes(3e9, { bytes: 4e9, from: 'cgroup' })).toBe(3e9);
    expect(blockRegionBytes(4e9, { bytes: 4e9, from: 'machine' })).toBe(0);
  });

  it('take half of the free space of the temporary directory', () => {
    expect(defaultShapeTempLimit(80e9, '/tmp')).toMatchObject({
      bytes: 40e9,
      basis: '50% of the 80GB free in /tmp',
    });
  });
});

describe('running short', () => {
  const limits: ShapeLimits = {
    memory: { bytes: 256e6, source: 'flag' },
    tempDisk: { bytes: 40e9, source: 'default', basis: '50% of the 80GB free in /tmp' },
  };
  const context = { limits, tempRoot: '/tmp', diskStopped: false };

  it('of memory names the setting, its value, how to raise it and the guide, and keeps the engine words after', () => {
    const engine = new Error(
      'Out of Memory Error: failed to pin block of size 256.0 KiB (243.9 MiB/244.1 MiB used)\n\nPossible solutions:\n' +
        "* Increasing the memory limit (SET memory_limit='...GB')",
    );
    const error = shortageError('shape.sql (view accounts)', engine, context);
    expect(error?.code).toBe('shape_out_of_memory');
    expect(error?.exitCode).toBe(2);
    expect(error?.message).toBe(
      'shape.sql (view accounts): the shape engine ran out of memory: it may use 256MB (--shape-memory 256MB). ' +
        'Either give more with --shape-memory 512MB (or shape_memory in the run configuration, or ' +
        'MIGRATE_SHAPE_MEMORY), or write the SQL in the forms that spill to disk instead of holding the whole table ' +
        'in memory: docs/from-a-legacy-system.md "SQL that scales". (the engine: Out of Memory Error: failed to pin ' +
        'block of size 256.0 KiB (243.9 MiB/244.1 MiB used))',
    );
    expect(error?.message).not.toMatch(/SET memory_limit|src\//);
  });

  it('of memory says where a default came from', () => {
    const defaulted = { ...limits, memory: { bytes: 1e9, source: 'default' as const, basis: '25% of 24GB' } };
    const error = shortageError('source x (X.csv)', new Error('Out of Memory Error: x'), {
      ...context,
      limits: defaulted,
    });
    expect(error?.message).toMatch(/it may use 1GB \(--shape-memory's default, 25% of 24GB\)\. .*--shape-memory 2GB/);
  });

  it('of the temporary disk names the limit, the directory and the setting', () => {
    const engine = new Error(
      'Out of Memory Error: failed to offload data block of size 32.0 KiB (9.5 MiB/9.5 MiB used).\n' +
        "This limit was set by the 'max_temp_directory_size' setting.",
    );
    const error = shortageError('shape.sql (view notes)', engine, context);
    expect(error?.code).toBe('shape_out_of_disk');
    expect(error?.message).toMatch(
      /^shape\.sql \(view notes\): the shape engine's temporary files reached their limit of 40GB in \/tmp \(--shape-temp-limit's default, 50% of the 80GB free in \/tmp\)\. Where that disk has room, give more with --shape-temp-limit 80GB \(or shape_temp_limit in the run configuration, or MIGRATE_SHAPE_TEMP_LIMIT\)/,
    );
    expect(error?.message).not.toMatch(/max_temp_directory_size|PRAGMA/);
    const stopped = shortageError('shape.sql (view x)', new Error('INTERRUPT Error: Interrupted!'), {
      ...context,
      diskStopped: true,
    });
    expect(stopped?.code).toBe('shape_out_of_disk');
    expect(stopped?.message).not.toMatch(/INTERRUPT/);
  });

  it('is not every failure: an SQL error is left to its own message', () => {
    expect(shortageError('v', new Error('Conversion Error: Could not convert string'), context)).toBeUndefined();
  });
});

describe('the temporary directory watch', () => {
  const dirs: string[] = [];
  afterAll(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

  it('stops the engine once the files in the directory pass the limit', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'temp-watch-'));
    dirs.push(dir);
    writeFileSync(join(dir, 'small'), Buffer.alloc(10_000, 1));
    expect(directoryBytes(dir)).toBeGreaterThanOrEqual(10_000);
    let stops = 0;
    const watch = watchTempDir(dir, 100_000, () => (stops += 1));
    try {
      writeFileSync(join(dir, 'large'), Buffer.alloc(200_000, 1));
      await expect.poll(() => stops, { timeout: 20_000 }).toBeGreaterThan(0);
      expect(watch.exceeded).toBe(true);
    } finally {
      watch.stop();
    }
  });
});
