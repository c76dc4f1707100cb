import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { ROOT, type RunResult } from './helpers.js';
import { afterOriginLine } from '../run-origin-line.js';

// The real binary's push against any service URL (a proxy's, a TLS server's, one that does not exist), with the
// environment a test gives: the proxy variables, NODE_EXTRA_CA_CERTS, the API key. Proxy variables of the machine
// running the tests are dropped, so that only the test's own apply.

const BIN = join(ROOT, 'bin', 'migrate.js');
const PROXY_VARIABLES = ['http_proxy', 'HTTP_PROXY', 'https_proxy', 'HTTPS_PROXY', 'no_proxy', 'NO_PROXY'];

export const SAMPLE_EXPORT = join(ROOT, 'fixtures', 'sample');

export function runPush(
  baseUrl: string,
  stateDir: string,
  env: NodeJS.ProcessEnv,
  extra: string[] = [],
  killAfterMs?: number,
): Promise<RunResult> {
  return runMigrate(['push', SAMPLE_EXPORT, '--base-url', baseUrl, '--state', stateDir, ...extra], env, killAfterMs);
}

/**
 * Any command of the binary, with the test's environment (and none of the machine's proxy variables). `killAfterMs`:
 * a bound for a test whose old code hung (the child is killed, and the test fails on its exit code, not on vitest's
 * time-out with the child left running).
 */
export function runMigrate(
  args: string[],
  env: NodeJS.ProcessEnv = {},
  killAfterMs?: number,
  cwd = ROOT,
): Promise<RunResult> {
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([name]) => !PROXY_VARIABLES.includes(name)));
  const child = spawn(process.execPath, [BIN, ...args], { cwd, env: { ...inherited, NO_COLOR: '1', ...env } });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const bound = killAfterMs === undefined ? undefined : setTimeout(() => child.kill('SIGKILL'), killAfterMs);
  return new Promise((resolve) => {
    child.on('close', (code, signal) => {
      clearTimeout(bound);
      // What the command says after its first line (the run configuration and the service: run-origin-line.ts).
      resolve({ code, signal, stdout, stderr: afterOriginLine(stderr) });
    });
  });
}
