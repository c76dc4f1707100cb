import { spawn } from 'node:child_process';
import { chmodSync, chownSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.js';
import { afterOriginLine } from '../run-origin-line.js';

// The files that decide where the customers and the key go (a run configuration, a key file) and the state directory
// are trusted as ssh trusts its own: owned by the user or root, writable by no one else, every directory above them
// too unless it has the sticky bit; a key file readable by no one else. A planted `migrate.run.json` naming another
// host is refused (exit 2, its owner and mode named) before anything is sent. Through the real binary, against a
// sandbox that counts what reaches it. Files owned by another user need root to make (chown): those cases say so and
// are skipped elsewhere.
const root = fileURLToPath(new URL('../..', import.meta.url));
const BIN = join(root, 'bin', 'migrate.js');
const SAMPLE = join(root, 'fixtures', 'sample');
const NOBODY = 65534;
const asRoot = process.getuid?.() === 0;

let scratch: string;
let planted: RunningSandbox;

beforeAll(async () => {
  scratch = mkdtempSync(join(tmpdir(), 'trusted-config-'));
  planted = await startSandbox({ processingMs: 0 });
});
afterAll(async () => {
  await planted.close();
  rmSync(scratch, { recursive: true, force: true });
});

interface Result {
  code: number | null;
  stdout: string;
  stderr: string;
}

function migrate(args: string[], cwd: string, env: NodeJS.ProcessEnv = {}): Promise<Result> {
  const inherited = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !name.startsWith('MIGRATE_') && !/_proxy$/i.test(name)),
  );
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd,
    env: { ...inherited, NO_COLOR: '1', MIGRATE_TIMESTAMPS: '0', ...env },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve) =>
    child.on('close', (code) => resolve({ code, stdout, stderr: afterOriginLine(stderr) })),
  );
}

/** A working directory holding a run configuration that sends everything to the planted service. */
function plantedCohort(name: string, mode: number): string {
  const dir = join(scratch, name);
  mkdirSync(dir, { recursive: true });
  const file = join(dir, 'migrate.run.json');
  writeFileSync(file, JSON.stringify({ base_url: planted.url, state: 'state' }));
  chmodSync(file, mode);
  return dir;
}

const requestsReceived = (): number => planted.inspect.accounts('ACME').length;

describe('a run configuration, key file or state directory another user can change is refused, as ssh does', () => {
  it.skipIf(!asRoot)(
    "a planted migrate.run.json (another user's, writable by all): push and validate --remote exit 2 naming its owner and mode, and send nothing",
    async () => {
      const dir = plantedCohort('planted', 0o666);
      chownSync(join(dir, 'migrate.run.json'), NOBODY, NOBODY);
      const file = join(dir, 'migrate.run.json');
      for (const args of [
        ['push', SAMPLE],
        ['validate', SAMPLE, '--remote'],
      ]) {
        const run = await migrate(args, dir, { MIGRATE_API_KEY: planted.apiKey });
        expect(run.code, run.stderr).toBe(2);
        expect(run.stderr).toMatch(
          new RegExp(`^migrate: run configuration ${file} is owned by another user \\(owner (nobody \\()?uid 65534`),
        );
        expect(run.stderr).toContain('mode 0666');
        expect(run.stderr).not.toMatch(/\n\s+at /);
      }
      expect(requestsReceived()).toBe(0);
    },
  );

  it('your own run configuration that others can write is refused too; chmod go-w mends it', async () => {
    const dir = plantedCohort('open-file', 0o666);
    const file = join(dir, 'migrate.run.json');
    const run = await migrate(['config', 'show', 'push'], dir);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(
      new RegExp(`^migrate: run configuration ${file} can be changed by other users \\(owner .*mode 0666\\)`),
    );
    expect(run.stderr).toContain(`chmod go-w ${file}`);
    chmodSync(file, 0o644);
    const mended = await migrate(['config', 'show', 'push'], dir);
    expect(mended.code, mended.stderr).toBe(0);
  });

  it('a directory above it that others can write (no sticky bit) is refused; one with the sticky bit, like /tmp, is not', async () => {
    const shared = join(scratch, 'shared');
    mkdirSync(shared);
    chmodSync(shared, 0o777);
    const dir = join(shared, 'cohort');
    mkdirSync(dir);
    writeFileSync(join(dir, 'migrate.run.json'), JSON.stringify({ state: 'state' }));
    const run = await migrate(['config', 'show', 'push'], dir);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`run configuration ${join(dir, 'migrate.run.json')}: ${shared} can be changed`);
    chmodSync(shared, 0o1777);
    const sticky = await migrate(['config', 'show', 'push'], dir);
    expect(sticky.code, sticky.stderr).toBe(0);
  });

  it('a key file others can read is refused before any request, naming chmod 600', async () => {
    const dir = join(scratch, 'key');
    mkdirSync(dir);
    const key = join(dir, 'key');
    writeFileSync(key, `${planted.apiKey}\n`);
    chmodSync(key, 0o644);
    const run = await migrate(['push', SAMPLE, '--base-url', planted.url, '--api-key-file', key], dir);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(new RegExp(`--api-key-file ${key} can be read by other users \\(owner .*mode 0644\\)`));
    expect(run.stderr).toContain(`chmod 600 ${key}`);
    expect(requestsReceived()).toBe(0);
  });

  it.skipIf(!asRoot)("a state directory another user owns is refused (its ledger is not this user's)", async () => {
    const dir = join(scratch, 'state-owner');
    const state = join(dir, 'state');
    mkdirSync(state, { recursive: true });
    chownSync(state, NOBODY, NOBODY);
    const run = await migrate(['push', SAMPLE, '--sandbox', '--state', state], dir);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(new RegExp(`^migrate: --state ${state} is owned by another user \\(owner .*uid 65534`));
  });
});
