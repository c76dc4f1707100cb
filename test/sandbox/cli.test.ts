import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_API_KEY } from '../../src/sandbox/index.js';
import { account, obtainToken, send } from './helpers.js';

// The real binary: `node bin/migrate.js sandbox --port 0` prints its URL and serves until a signal.

const root = fileURLToPath(new URL('../..', import.meta.url));
const children: ChildProcessWithoutNullStreams[] = [];

// dist/ is built once by test/global-setup.ts.
beforeAll(() => {
  expect(existsSync(`${root}/dist/commands/sandbox/index.js`)).toBe(true);
});

afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
});

interface Started {
  child: ChildProcessWithoutNullStreams;
  url: string;
  stdout: () => string;
  stderr: () => string;
}

/** The test's environment without a key: the sandbox takes MIGRATE_API_KEY as its own. */
const { MIGRATE_API_KEY: _key, ...keyless } = process.env;

function start(args: string[], env: NodeJS.ProcessEnv = {}): Promise<Started> {
  const child = spawn('node', ['bin/migrate.js', 'sandbox', ...args], { cwd: root, env: { ...keyless, ...env } });
  children.push(child);
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve, reject) => {
    // No timer of its own: a sandbox that never prints its URL fails the test at the test's time-out.
    child.on('exit', (code) => reject(new Error(`exited ${code}: ${stderr}; stdout: ${stdout}`)));
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      // One listening on every interface (0.0.0.0) is reached here through the loopback address.
      const url = /Sandbox listening on (http:\/\/\S+:\d+)/.exec(stdout)?.[1]?.replace('//0.0.0.0:', '//127.0.0.1:');
      if (url) resolve({ child, url, stdout: () => stdout, stderr: () => stderr });
    });
  });
}

/** Runs `migrate sandbox` to its exit (no timer: a sandbox that does not exit fails at the test's time-out). */
function runToExit(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ status: number | null; stderr: string }> {
  const child = spawn('node', ['bin/migrate.js', 'sandbox', ...args], { cwd: root, env: { ...keyless, ...env } });
  children.push(child);
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve) => child.on('close', (status) => resolve({ status, stderr })));
}

const exited = (child: ChildProcessWithoutNullStreams) =>
  new Promise<number | null>((resolve) =>
    child.exitCode !== null ? resolve(child.exitCode) : child.on('exit', (code) => resolve(code)),
  );

describe('migrate sandbox (the binary)', () => {
  it('prints its URL, API key and suppliers, serves the spec, logs requests with --verbose, and stops on SIGTERM', async () => {
    const started = await start([
      '--port',
      '0',
      '--suppliers',
      'NORTH:Ongoing,SOUTH:Paused',
      '--processing-ms',
      '0',
      '--verbose',
    ]);
    expect(started.stdout()).toContain('API key: sandbox-api-key');
    expect(started.stdout()).toContain('Import suppliers: NORTH (Ongoing), SOUTH (Paused)');
    const token = await obtainToken(started.url, 'sandbox-api-key');
    const headers = { authorization: `Token ${token}`, 'content-type': 'application/json' };
    const created = await send(`${started.url}/v2/data-import/accounts/`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ payload: account('CLI-1', { import_supplier: 'NORTH' }) }),
    });
    expect(created.status).toBe(201);
    const paused = await send(`${started.url}/v2/data-import/accounts/`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ payload: account('CLI-2', { import_supplier: 'SOUTH' }) }),
    });
    expect(paused.body.code).toBe('import_supplier_migration_not_ongoing');
    const status = await send(`${started.url}/v1/data-import/account-transfer-status/NORTH/CLI-1/`, {
      method: 'GET',
      headers,
    });
    expect(status.body.status).toBe('COMPLETED');
    started.child.kill('SIGTERM');
    expect(await exited(started.child)).toBe(130);
    expect(started.stderr()).toMatch(/POST \/v2\/data-import\/accounts\/ 201 \d+ms/);
    expect(started.stderr()).not.toContain(token);
  });

  it('the first example of --help, run as written, listens on a free port of 127.0.0.1 with key sandbox-api-key', async () => {
    const help = spawnSync(process.execPath, ['bin/migrate.js', 'sandbox', '--help'], { cwd: root, encoding: 'utf8' });
    const first = help.stdout.split('\nExamples:\n')[1]?.split('\n')[0] ?? '';
    expect(first).toMatch(
      /^ {2}migrate sandbox .*# listen on a free port of 127\.0\.0\.1 \(its URL printed\) with key sandbox-api-key$/,
    );
    const args = first.split('#')[0]!.trim().split(/\s+/).slice(2);
    const started = await start(args);
    expect(Number(new URL(started.url).port)).toBeGreaterThan(0);
    expect(started.stdout()).toContain('API key: sandbox-api-key');
    await obtainToken(started.url, 'sandbox-api-key');
    started.child.kill('SIGINT');
    expect(await exited(started.child)).toBe(130);
  });

  it('never prints a key given by --api-key, and warns that the process list shows it', async () => {
    const started = await start(['--api-key', 'given-secret-123']);
    expect(started.stdout()).not.toContain('given-secret-123');
    expect(started.stdout()).toContain('API key: (the value given by --api-key)');
    await obtainToken(started.url, 'given-secret-123');
    started.child.kill('SIGINT');
    expect(await exited(started.child)).toBe(130);
    expect(started.stderr()).toContain(
      'migrate: warning: --api-key: the key is visible to every user of this machine (ps, /proc) while the sandbox ' +
        'runs; give it in MIGRATE_API_KEY or in a file named by --api-key-file FILE instead',
    );
    expect(started.stderr()).not.toContain('given-secret-123');
  });

  it('takes its key as push does, out of the process list: --api-key-file FILE, else MIGRATE_API_KEY', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sandbox-key-'));
    try {
      const file = join(dir, 'rehearsal.key');
      writeFileSync(file, 'file-secret-456\n', { mode: 0o600 });
      const fromFile = await start(['--api-key-file', file], { MIGRATE_API_KEY: 'env-secret-789' });
      expect(fromFile.stdout()).toContain(`API key: (the value given by --api-key-file ${file})`);
      expect(readFileSync(`/proc/${fromFile.child.pid}/cmdline`, 'utf8')).not.toContain('file-secret-456');
      await obtainToken(fromFile.url, 'file-secret-456');
      await expect(obtainToken(fromFile.url, 'env-secret-789')).rejects.toThrow(/no token/);
      const fromEnv = await start([], { MIGRATE_API_KEY: 'env-secret-789' });
      expect(fromEnv.stdout()).toContain('API key: (the value given by MIGRATE_API_KEY)');
      await obtainToken(fromEnv.url, 'env-secret-789');
      await expect(obtainToken(fromEnv.url, DEFAULT_API_KEY)).rejects.toThrow(/no token/);
      for (const started of [fromFile, fromEnv]) {
        expect(started.stdout() + started.stderr()).not.toMatch(/file-secret-456|env-secret-789/);
        expect(started.stderr()).not.toContain('warning');
        started.child.kill('SIGINT');
        expect(await exited(started.child)).toBe(130);
      }
      // A key file others can read is refused as push refuses it; two keys named at once too.
      chmodSync(file, 0o644);
      const readable = await runToExit(['--api-key-file', file]);
      expect(readable.status).toBe(2);
      expect(readable.stderr).toContain('--api-key-file');
      expect(readable.stderr).not.toContain('file-secret-456');
      const both = await runToExit(['--api-key-file', file, '--api-key', 'x']);
      expect(both.status).toBe(2);
      expect(both.stderr).toContain('--api-key and --api-key-file both name a key');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('exits 2 with a message when the port is taken', async () => {
    const first = await start(['--port', '0']);
    const port = new URL(first.url).port;
    const { status, stderr } = await runToExit(['--port', port]);
    expect(status).toBe(2);
    expect(stderr).toContain('EADDRINUSE');
  });

  it('refuses bad flags with exit code 2 and a message naming the flag', async () => {
    for (const args of [
      ['--fail-rate', '1.5'],
      ['--port', 'abc'],
      ['--suppliers', 'X:Closed'],
      ['--fail-rate', '0.6', '--drop-rate', '0.6'],
    ]) {
      const { status, stderr } = await runToExit(args);
      expect(status, args.join(' ')).toBe(2);
      expect(stderr).toMatch(/fail-rate|port|suppliers|failRate/);
      expect(stderr).not.toMatch(/\n\s+at /);
    }
  });
});

// Its inspection endpoint gives every payload it was sent to whoever holds its key, and its default key is published:
// beyond this machine it starts only with a key of the operator's own and --public (docs/sandbox.md).
describe('migrate sandbox on an address other machines reach', () => {
  it('refuses --host 0.0.0.0 with the published key (with --public too): exit 2 naming --api-key', async () => {
    for (const args of [
      ['--host', '0.0.0.0'],
      ['--host', '0.0.0.0', '--public', '--api-key', DEFAULT_API_KEY],
    ]) {
      const { status, stderr } = await runToExit(args);
      expect(status, args.join(' ')).toBe(2);
      expect(stderr).toContain('Give a key of your own (--api-key-file FILE, or set MIGRATE_API_KEY) and add --public');
      expect(stderr).toContain(`its key is the published default (${DEFAULT_API_KEY})`);
      expect(stderr).not.toMatch(/\n\s+at /);
    }
  });

  it('refuses a key of its own without --public, saying who reaches it and that the inspector gives every payload', async () => {
    const { status, stderr } = await runToExit(['--host', '0.0.0.0', '--api-key', 'rehearsal-key-1']);
    expect(status).toBe(2);
    expect(stderr).toContain('every machine that can reach this one (it listens on every interface)');
    expect(stderr).toContain('GET /_sandbox/accounts/SUPPLIER/) every payload sent to it');
    expect(stderr).toContain('Add --public if that is meant');
  });

  it('with --public and a key of its own it starts, says so, and takes only that key', async () => {
    const started = await start(['--host', '0.0.0.0', '--public'], { MIGRATE_API_KEY: 'rehearsal-key-2' });
    expect(started.stdout()).toContain('Public (--public): every machine that can reach this one');
    expect(started.stdout()).not.toContain('rehearsal-key-2');
    await obtainToken(started.url, 'rehearsal-key-2');
    await expect(obtainToken(started.url, DEFAULT_API_KEY)).rejects.toThrow(/no token/);
    started.child.kill('SIGINT');
    expect(await exited(started.child)).toBe(130);
  });

  it('loopback addresses start as before, with the default key and without --public', async () => {
    for (const host of ['127.0.0.2', 'localhost']) {
      const started = await start(['--host', host]);
      expect(started.stdout()).not.toContain('Public');
      await obtainToken(started.url, DEFAULT_API_KEY);
      started.child.kill('SIGINT');
      expect(await exited(started.child)).toBe(130);
    }
  });
});
