import { spawn } from 'node:child_process';
import { readFileSync, watch, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './helpers.js';

// A push stopped while it reads the export, as an operator's Ctrl-C stops it: the SIGINT goes the moment the NDJSON
// log shows `staged` accounts staged (an event, never a sleep).

const BIN = join(ROOT, 'bin', 'migrate.js');

export interface StoppedPush {
  code: number | null;
  stdout: string;
  stderr: string;
}

export function pushStoppedWhileReading(input: {
  exportDir: string;
  stateDir: string;
  log: string;
  sandbox: { url: string; apiKey: string };
  staged: number;
}): Promise<StoppedPush> {
  const { log, sandbox } = input;
  writeFileSync(log, '', { mode: 0o600 });
  const args = ['push', input.exportDir, '--base-url', sandbox.url, '--state', input.stateDir, '--log-file', log];
  const child = spawn(process.execPath, [BIN, ...args], {
    env: { ...process.env, MIGRATE_API_KEY: sandbox.apiKey, NO_COLOR: '1' },
  });
  let [stdout, stderr, sent] = ['', '', false];
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const watcher = watch(log, () => {
    if (sent || !stagedAtLeast(readFileSync(log, 'utf8'), input.staged)) return;
    sent = true;
    child.kill('SIGINT');
  });
  return new Promise((resolve) =>
    child.on('close', (code) => {
      watcher.close();
      resolve({ code, stdout, stderr });
    }),
  );
}

/**
 * Whether the log shows `accounts` accounts staged: by then the byte count of the accounts file, started beside the
 * first staged batch, has long ended (it reads the file once, without parsing), as it has at an operator's Ctrl-C.
 */
function stagedAtLeast(log: string, accounts: number): boolean {
  return log
    .split('\n')
    .some(
      (line) => line.includes('"event":"staging"') && (JSON.parse(line) as { accounts: number }).accounts >= accounts,
    );
}
