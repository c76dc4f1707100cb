import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.js';
import { STOP_POINTS } from '../../src/commands/push/stop-points.js';
import { writeE2eExport } from './export.js';
import { expectExactState, push, ROOT } from './helpers.js';

// A lock whose holder is dead never blocks a rerun (docs/operators-guide.md section 3): a push is stopped at every
// named moment of its start-up (MIGRATE_TEST_STOP_AT, src/commands/push/stop-points.ts), from the state directory made to the
// export opened, SIGKILLed there, and the rerun must start at once (not exit 4) and end exact on the sandbox.

const BIN = join(ROOT, 'bin', 'migrate.js');

let root: string;
let sandbox: RunningSandbox;
beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'lock-e2e-'));
  sandbox = await startSandbox({ processingMs: 20 });
});
afterAll(async () => {
  await sandbox.close();
  rmSync(root, { recursive: true, force: true });
});

interface Stopped {
  pid: number;
  kill: () => Promise<void>;
}

/** A push stopped at `point`: resolves once it says so on stderr (it then waits there until killed). */
function pushStoppedAt(exportDir: string, state: string, point: string): Promise<Stopped> {
  const child = spawn(process.execPath, [BIN, 'push', exportDir, '--base-url', sandbox.url, '--state', state], {
    env: { ...process.env, MIGRATE_API_KEY: sandbox.apiKey, NO_COLOR: '1', MIGRATE_TEST_STOP_AT: point },
  });
  const closed = new Promise<void>((resolve) => child.on('close', () => resolve()));
  let stderr = '';
  return new Promise((resolve, reject) => {
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      if (stderr.includes(`MIGRATE_TEST_STOP_AT: stopped at ${point} (pid ${child.pid}`))
        resolve({ pid: child.pid ?? 0, kill: () => (child.kill('SIGKILL'), closed) });
    });
    child.on('close', (code) => reject(new Error(`push ended (${code}) before ${point}: ${stderr}`)));
  });
}

describe('a push SIGKILLed at any moment of its start-up', () => {
  it.concurrent.each(STOP_POINTS.map((point, index) => [point, index] as const))(
    'at %s: the rerun starts at once and ends exact',
    async (point, index) => {
      const data = writeE2eExport(join(root, point), 3, `K${index}`, 'spec', { clean: true });
      const state = join(root, point, 'state');
      const stopped = await pushStoppedAt(data.dir, state, point);
      await stopped.kill();
      const rerun = await push(sandbox, data.dir, state);
      expect(rerun.stderr).not.toContain('holds the state directory');
      expect(rerun.code, rerun.stderr).toBe(0);
      await expectExactState(sandbox, data, state, expect);
    },
  );
});

describe('a push holding the lock', () => {
  it('refuses a second push (exit 4, naming its pid) while status and report read the ledger beside it', async () => {
    const data = writeE2eExport(join(root, 'held'), 3, 'HELD', 'spec', { clean: true });
    const state = join(root, 'held', 'state');
    expect((await push(sandbox, data.dir, state)).code).toBe(0);
    const holder = await pushStoppedAt(data.dir, state, 'export-opened');
    try {
      const second = await push(sandbox, data.dir, state);
      expect(second.code).toBe(4);
      expect(second.stderr).toBe(
        `migrate: another migrate run (pid ${holder.pid}) holds the state directory ${state}; wait for it to ` +
          'finish, or stop it; do not give this cohort another --state directory (a new ledger would not know what ' +
          'this one sent)\n',
      );
      const status = spawnSync(process.execPath, [BIN, 'status', 'ACME', '--state', state, '--offline'], {
        encoding: 'utf8',
      });
      expect(status.status, status.stderr).toBe(0);
      expect(status.stdout).toContain('next: all 3 accounts done: nothing left to do');
      const report = spawnSync(process.execPath, [BIN, 'report', '--state', state, '--out', join(root, 'report')], {
        encoding: 'utf8',
      });
      expect(report.status, report.stderr).toBe(0);
    } finally {
      await holder.kill();
    }
  });
});
