import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { DEFAULT_API_KEY } from '../../src/sandbox/index.js';
import { obtainToken, send } from '../sandbox/helpers.js';

// `push --sandbox` starts the built-in sandbox for the run with a random key of its own, never the published default:
// another process on the machine can neither take a token from it nor read, through its inspection endpoint, the
// payloads the run sends. Through the real binary, paced to one request a second so that the run is still sending
// while the test knocks with the published key.
const root = fileURLToPath(new URL('../..', import.meta.url));
const BIN = join(root, 'bin', 'migrate.js');
const SAMPLE = join(root, 'fixtures', 'sample');
const scratch = mkdtempSync(join(tmpdir(), 'push-sandbox-key-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const LISTENS = /migrate: the built-in sandbox listens on (http:\/\/127\.0\.0\.1:\d+), with a key of its own\n/;

describe('push --sandbox', () => {
  it('the built-in sandbox takes no token request with the published key while the run sends', async () => {
    const inherited = Object.fromEntries(
      Object.entries(process.env).filter(([name]) => !name.startsWith('MIGRATE_') && !/_proxy$/i.test(name)),
    );
    const child = spawn(process.execPath, [BIN, 'push', SAMPLE, '--sandbox', '--state', 'state', '--rate', '1'], {
      cwd: scratch,
      env: { ...inherited, NO_COLOR: '1', MIGRATE_TIMESTAMPS: '0' },
    });
    let stderr = '';
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    const url = await new Promise<string>((resolve, reject) => {
      child.stderr.on('data', (chunk: Buffer) => {
        stderr += chunk.toString();
        const found = LISTENS.exec(stderr)?.[1];
        if (found !== undefined) resolve(found);
      });
      void exited.then((code) => reject(new Error(`push exited ${code} before its sandbox listened: ${stderr}`)));
    });
    try {
      expect(stderr.split('\n')[0]).toBe(
        'migrate: run configuration none (no migrate.run.json here, MIGRATE_RUN_CONFIG not set); service: the ' +
          'built-in sandbox (--sandbox), on this machine with a key of its own',
      );
      await expect(obtainToken(url, DEFAULT_API_KEY)).rejects.toThrow(/no token/);
      const inspected = await send(`${url}/_sandbox/accounts/ACME/`, { method: 'GET' });
      expect(inspected.status).toBe(401);
      expect(child.exitCode, 'the run was still sending').toBe(null);
    } finally {
      child.kill('SIGINT');
    }
    expect(await exited, stderr).toBe(130);
  });
});
