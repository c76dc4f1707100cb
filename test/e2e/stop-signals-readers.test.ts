import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, type RunResult } from './helpers.js';

// status and report only read: a stop signal ends them with exit 130 (not 143) within seconds, whatever they wait
// for. Here status waits for a service that takes the connection and never answers.

const BIN = join(ROOT, 'bin', 'migrate.js');

let root: string;
let silent: Server;
const held: Socket[] = [];
let url: string;
/** Called at the next connection the silent service takes. */
let onConnection: () => void = () => undefined;

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'stop-readers-'));
  silent = createServer((socket) => {
    held.push(socket);
    onConnection();
  });
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  const address = silent.address();
  url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
});
afterAll(async () => {
  for (const socket of held) socket.destroy();
  await new Promise((resolve) => silent.close(resolve));
  rmSync(root, { recursive: true, force: true });
});

/** Runs the binary; once it has asked the service (it waits for the answer), sends `signal`. */
function stopWhileWaiting(args: string[], signal: NodeJS.Signals): Promise<RunResult> {
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd: root,
    env: { ...process.env, NO_COLOR: '1', MIGRATE_API_KEY: 'k' },
  });
  onConnection = () => {
    onConnection = () => undefined;
    child.kill(signal);
  };
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  // A bound on the test only: a command that ignored the stop would otherwise hang it.
  const bound = setTimeout(() => child.kill('SIGKILL'), 120_000);
  return new Promise((resolve) =>
    child.on('close', (code, signalled) => {
      clearTimeout(bound);
      resolve({ code, signal: signalled, stdout, stderr });
    }),
  );
}

describe('a stop signal while status waits for the service', () => {
  it.each(['SIGTERM', 'SIGINT', 'SIGHUP'] as const)('%s: exit 130, saying status changed nothing', async (signal) => {
    // No ledger here (the default state directory): the service's view only, which never comes.
    const result = await stopWhileWaiting(['status', 'ACME', '--base-url', url], signal);
    expect(result.signal, result.stderr).toBeNull();
    expect(result.code, result.stderr).toBe(130);
    expect(result.stderr).toContain('interrupted by a stop signal; status changes nothing: run it again');
  });
});
