import { spawn, spawnSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  chownSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, type RunResult } from './helpers.js';

// Nothing readable, nothing left behind (docs/data-protection.md), through the real binary started under umask 000:
// the shape engine's directory is 0700 and its files 0600, so are the files of `shape --out`; SIGINT, SIGTERM and
// SIGHUP interrupt a shape query that would run for many minutes, and validate, shape and push exit 130 with the
// engine's directory gone from the TMPDIR the test gave them; a command removes the engine and scratch directories of
// processes that no longer exist, and nothing else.

const BIN = join(ROOT, 'bin', 'migrate.js');
/** A bound on the test's own wait, far past "a few seconds", for a loaded machine: the child is then killed. */
const BOUND_MS = 180_000;
/** This host, as the directories' names carry it. */
const HOST = hostname()
  .replace(/[^A-Za-z0-9.-]/g, '_')
  .slice(0, 64);

/** A query that would run for many minutes: a sum over a trillion rows. */
const SLOW = 'CREATE TABLE slow AS SELECT sum(a.range * b.range) AS s FROM range(1000000) AS a, range(1000000) AS b;\n';
const VIEW =
  'CREATE VIEW accounts AS SELECT ACCOUNT_NO AS external_account_number, NAME AS billing_name, _file, _line ' +
  'FROM accounts_file;\n';

let root: string;
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'stop-signals-'));
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** A legacy export shaped by `sql`, and an empty TMPDIR of its own. */
function legacyExport(name: string, sql: string): { dir: string; temp: string } {
  const dir = join(root, name);
  const temp = join(root, `${name}-tmp`);
  mkdirSync(dir);
  mkdirSync(temp);
  writeFileSync(join(dir, 'ACCOUNTS.csv'), 'ACCOUNT_NO,NAME\n0001,Ann Example\n0002,Bob Example\n');
  writeFileSync(join(dir, 'shape.sql'), sql);
  writeFileSync(
    join(dir, 'migrate.config.json'),
    JSON.stringify({
      import_supplier: 'ACME',
      sources: { accounts_file: { file: 'ACCOUNTS.csv' } },
      shape: 'shape.sql',
    }),
  );
  return { dir, temp };
}

interface Started {
  pid: number;
  /** Resolves once `ready` holds (checked at every output, and every 50 ms for the directory it may look at). */
  until(ready: (stderr: string) => boolean): Promise<void>;
  kill(signal: NodeJS.Signals): void;
  done: Promise<RunResult>;
}

/** The binary under umask 000, with TMPDIR given. */
function start(args: string[], temp: string): Started {
  const child = spawn('sh', ['-c', 'umask 000 && exec "$0" "$@"', process.execPath, BIN, ...args], {
    cwd: root,
    env: { ...process.env, TMPDIR: temp, NO_COLOR: '1' },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const bound = setTimeout(() => child.kill('SIGKILL'), BOUND_MS);
  const done = new Promise<RunResult>((resolve) =>
    child.on('close', (code, signal) => {
      clearTimeout(bound);
      resolve({ code, signal, stdout, stderr });
    }),
  );
  return {
    pid: child.pid ?? 0,
    until: (ready) =>
      new Promise((resolve, reject) => {
        const check = setInterval(() => {
          if (ready(stderr)) {
            clearInterval(check);
            resolve();
          }
        }, 50);
        void done.then((result) => {
          clearInterval(check);
          reject(new Error(`the command ended first (exit ${result.code}): ${result.stderr}`));
        });
      }),
    kill: (signal) => child.kill(signal),
    done,
  };
}

const modeOf = (path: string): string => (lstatSync(path).mode & 0o777).toString(8);

/** The engine's directory in `temp`, named after the process, and the mode of it and of each file in it. */
function engineModes(temp: string, pid: number): Record<string, string> {
  const [dir, ...more] = readdirSync(temp);
  expect(more).toEqual([]);
  expect(dir?.startsWith(`migrate-shape-${pid}@${HOST}-`)).toBe(true);
  const engine = join(temp, dir as string);
  const modes: Record<string, string> = { '.': modeOf(engine) };
  for (const file of readdirSync(engine)) modes[file] = modeOf(join(engine, file));
  return modes;
}

describe('a stop signal during a long shape query', () => {
  it.each(['SIGTERM', 'SIGINT', 'SIGHUP'] as const)(
    'shape: %s interrupts the query, exit 130, the engine directory (0700, its files 0600) removed, nothing written',
    async (signal) => {
      const { dir, temp } = legacyExport(`shape-${signal}`, SLOW + VIEW);
      const out = join(root, `shape-${signal}-out`);
      const run = start(['shape', dir, '--out', out], temp);
      await run.until((stderr) => stderr.includes('shaping: the sources are loaded, running shape.sql'));
      const modes = engineModes(temp, run.pid);
      expect(modes['.']).toBe('700');
      expect(modes['shape.duckdb']).toBe('600');
      expect(Object.values(modes).filter((mode) => mode !== '600')).toEqual(['700']);
      run.kill(signal);
      const result = await run.done;
      expect(result.code, result.stderr).toBe(130);
      expect(result.stderr).toContain(
        'migrate: interrupted by a stop signal; nothing of the shaped export is kept: run it again.',
      );
      expect(readdirSync(temp)).toEqual([]);
      // Made only once the shape has run: a stop before leaves no directory.
      expect(existsSync(out)).toBe(false);
    },
  );

  it('shape: SIGTERM while the shaped rows are read removes the files it began to write', async () => {
    // The view itself is slow: its rows are read (and accounts.csv begun) after the shape file ran.
    const slowView =
      'CREATE VIEW accounts AS SELECT ACCOUNT_NO AS external_account_number, NAME AS billing_name, _file, _line ' +
      'FROM accounts_file WHERE (SELECT sum(a.range * b.range) FROM range(1000000) AS a, range(1000000) AS b) > 0;\n';
    const { dir, temp } = legacyExport('shape-rows', slowView);
    const out = join(root, 'shape-rows-out');
    const run = start(['shape', dir, '--out', out], temp);
    await run.until(() => existsSync(join(out, 'accounts.csv')));
    run.kill('SIGTERM');
    const result = await run.done;
    expect(result.code, result.stderr).toBe(130);
    // The directory this run made goes with the files it began.
    expect(existsSync(out)).toBe(false);
    expect(readdirSync(temp)).toEqual([]);
  });

  it('validate: SIGTERM while the engine works, exit 130 (not 143), the engine directory removed', async () => {
    const { dir, temp } = legacyExport('validate', SLOW + VIEW);
    const run = start(['validate', dir], temp);
    // Validate prints nothing while it shapes: its engine's write-ahead log says the shape file runs.
    await run.until(() => readdirSync(temp).some((name) => readdirSync(join(temp, name)).includes('shape.duckdb.wal')));
    run.kill('SIGTERM');
    const result = await run.done;
    expect(result.code, result.stderr).toBe(130);
    expect(result.stderr).toContain('migrate: interrupted by a stop signal; nothing was changed: run it again.');
    expect(readdirSync(temp)).toEqual([]);
  });

  it('push: SIGTERM while the engine works, exit 130, the engine directory removed, nothing sent', async () => {
    const { dir, temp } = legacyExport('push', SLOW + VIEW);
    const state = join(root, 'push-state');
    const run = start(['push', dir, '--sandbox', '--state', state], temp);
    await run.until(() => readdirSync(temp).some((name) => readdirSync(join(temp, name)).includes('shape.duckdb.wal')));
    run.kill('SIGTERM');
    const result = await run.done;
    expect(result.code, result.stderr).toBe(130);
    expect(result.stderr).toContain('interrupted before anything was sent; the ledger is consistent');
    expect(readdirSync(temp)).toEqual([]);
  });
});

describe('what migrate leaves', () => {
  it('shape --out under umask 000: a 0700 directory, every file 0600, nothing left in TMPDIR', async () => {
    const { dir, temp } = legacyExport('written', VIEW);
    const out = join(root, 'written-out', 'shaped');
    const result = await start(['shape', dir, '--out', out], temp).done;
    expect(result.code, result.stderr).toBe(0);
    expect(modeOf(join(root, 'written-out'))).toBe('700');
    expect(modeOf(out)).toBe('700');
    expect(Object.fromEntries(readdirSync(out).map((file) => [file, modeOf(join(out, file))]))).toEqual({
      'accounts.csv': '600',
      'migrate.config.json': '600',
    });
    expect(readdirSync(temp)).toEqual([]);
  });

  it('refuses a TMPDIR that other users can change (exit 2, naming it): they could move the engine away and keep it', async () => {
    const { dir, temp } = legacyExport('shared-tmp', VIEW);
    chmodSync(temp, 0o777);
    const run = start(['shape', dir, '--out', join(root, 'shared-tmp-out')], temp);
    const result = await run.done;
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toContain(
      `migrate: the scratch directory (in TMPDIR) ${temp}/migrate-shape-${run.pid}@${HOST}: ${temp} can be changed by other users`,
    );
    expect(result.stderr).toContain(`chmod go-w ${temp}`);
    expect(readdirSync(temp)).toEqual([]);
  });

  it("removes the engine and scratch directories of processes gone, never a live one's, a link, a file or another user's", async () => {
    const { dir, temp } = legacyExport('sweep', VIEW);
    const gone = spawnSync('true').pid;
    const live = process.pid;
    const elsewhere = join(root, 'sweep-elsewhere');
    mkdirSync(elsewhere);
    writeFileSync(join(elsewhere, 'keep.txt'), 'kept');
    const planted = {
      deadShape: `migrate-shape-${gone}@${HOST}-Ab12Cd`,
      deadStage: `migrate-stage-${gone}@${HOST}-Ef34Gh`,
      deadLedger: `migrate-ledger-check-${gone}@${HOST}-Ij56Kl`,
      // What the scratch join of an earlier version left: no host, this one's.
      deadOlder: `migrate-stage-${gone}-Gh78Ij`,
      liveShape: `migrate-shape-${live}@${HOST}-Mn78Op`,
      // A pid on another machine sharing the directory: not known here, left to that machine.
      elsewhere: `migrate-shape-${gone}@other-host.example-Kl90Mn`,
      link: `migrate-shape-${gone}@${HOST}-Qr90St`,
      file: `migrate-sort-${gone}@${HOST}-Uv12Wx`,
      other: 'migrate-shape-notapid-Yz34Ab',
      foreign: `migrate-shape-${gone}@${HOST}-Cd56Ef`,
    };
    const dirs = ['deadShape', 'deadStage', 'deadLedger', 'deadOlder', 'liveShape', 'elsewhere', 'other'] as const;
    for (const name of dirs) mkdirSync(join(temp, planted[name]));
    writeFileSync(join(temp, planted.deadShape, 'shape.duckdb'), 'Ann Example');
    symlinkSync(elsewhere, join(temp, planted.link));
    writeFileSync(join(temp, planted.file), '');
    mkdirSync(join(temp, planted.foreign));
    // Another user's directory of that name (root's tests make one for `nobody`): not this user's to remove.
    const root_ = process.getuid?.() === 0;
    if (root_) chownSync(join(temp, planted.foreign), 65534, 65534);
    const result = await start(['shape', dir, '--out', join(root, 'sweep-out')], temp).done;
    expect(result.code, result.stderr).toBe(0);
    const kept = [planted.liveShape, planted.elsewhere, planted.link, planted.file, planted.other];
    expect(readdirSync(temp).sort()).toEqual([...kept, ...(root_ ? [planted.foreign] : [])].sort());
    expect(readdirSync(elsewhere)).toEqual(['keep.txt']);
  });

  it('removes nothing in a TMPDIR that other users can change: an entry could be swapped for a link meanwhile', async () => {
    const { dir, temp } = legacyExport('sweep-shared', VIEW);
    const gone = spawnSync('true').pid;
    const left = `migrate-shape-${gone}@${HOST}-Ab12Cd`;
    mkdirSync(join(temp, left));
    chmodSync(temp, 0o777);
    const result = await start(['shape', dir, '--out', join(root, 'sweep-shared-out')], temp).done;
    expect(result.code).toBe(2);
    expect(readdirSync(temp)).toEqual([left]);
  });
});
