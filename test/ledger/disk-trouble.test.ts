import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.js';
import { writeE2eExport } from '../e2e/export.js';
import { expectExactState, push } from '../e2e/helpers.js';

// The state directory's disk failing under `migrate push`: a clear error naming the directory,
// exit 3, the ledger consistent, and the rerun completes. The disk is a 16 MB tmpfs, filled or
// remounted read-only: that needs root (the development machine and CI run the tests as root).

const isRoot = process.getuid?.() === 0;
let root: string;
let mount: string;
let mounted = false;
let sandbox: RunningSandbox | undefined;

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'migrate-disk-'));
  mount = join(root, 'disk');
  mkdirSync(mount);
  if (!isRoot) return;
  execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=16m', 'tmpfs', mount]);
  mounted = true;
});
afterAll(async () => {
  await sandbox?.close();
  if (mounted) execFileSync('umount', [mount]);
  rmSync(root, { recursive: true, force: true });
});

describe.skipIf(!isRoot)('the state directory on a disk that fills up or turns read-only', () => {
  it('a full disk mid-run: exit 3 naming the state directory; freed, the rerun completes exactly', async () => {
    // The disk fills once the service has answered 200 requests: mid-run however fast the machine is (about 1,200
    // requests in all, 10 ms each, 8 at a time; a fixed delay let a quiet machine finish first).
    let answered = 0;
    let midRun: () => void = () => undefined;
    const reached = new Promise<void>((resolve) => (midRun = resolve));
    sandbox = await startSandbox({
      processingMs: 300,
      latencyMs: 10,
      seed: 5,
      log: () => {
        answered += 1;
        if (answered === 200) midRun();
      },
    });
    const data = writeE2eExport(root, 300, 'DISK');
    const state = join(mount, 'state');
    const filler = join(mount, 'filler');
    const running = push(sandbox, data.dir, state);
    await reached;
    try {
      execFileSync('dd', ['if=/dev/zero', `of=${filler}`, 'bs=64k'], { stdio: 'ignore' });
    } catch {
      // dd ends with "No space left on device": the disk is full, as wanted.
    }
    const full = await running;
    expect(full.stderr).not.toMatch(/internal error|\n\s+at /);
    expect(full.stderr).toMatch(
      new RegExp(`migrate: the state directory ${state} cannot be written \\(the disk is full: SQLITE_FULL\\)`),
    );
    expect(full.code).toBe(3);
    rmSync(filler);
    const rerun = await push(sandbox, data.dir, state);
    expect(rerun.stderr).not.toMatch(/internal error/);
    expect(rerun.code).toBe(5); // the export's invalid and ERR- accounts
    await expectExactState(sandbox, data, state, expect);
  });

  it('a read-only disk: exit 3 naming the state directory, nothing sent', async () => {
    sandbox ??= await startSandbox({ processingMs: 50 });
    const data = writeE2eExport(join(root, 'ro'), 5, 'RO');
    const before = sandbox.inspect.requestCount();
    execFileSync('mount', ['-o', 'remount,ro', mount]);
    try {
      const result = await push(sandbox, data.dir, join(mount, 'other-state'));
      expect(result.stderr).toMatch(
        /the state directory .*other-state cannot be written \((it is on a read-only file system: EROFS|it cannot be created \(a read-only file system\?\): ENOENT)\)/,
      );
      expect(result.stderr).not.toMatch(/internal error/);
      expect(result.code).toBe(3);
    } finally {
      execFileSync('mount', ['-o', 'remount,rw', mount]);
    }
    expect(sandbox.inspect.requestCount()).toBe(before);
  });
});
