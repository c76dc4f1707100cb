import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.js';
import { writeE2eExport } from './export.js';
import { runMigrate } from './run-push.js';

// Redaction by construction (docs/api-client.md): an API key holding ", \, %, +, /, spaces and non-ASCII, echoed by a
// careless service in every encoding it may write (the sandbox's --echo-credentials: JSON-escaped inside a detail,
// Python's \u escapes, URL-encoded in either case, form-encoded, HTML-escaped, in Basic headers), appears in no form in
// what the real binary prints, logs, keeps in its ledger (the SQLite file's bytes) or writes in its reports.

const KEY = 'sk "live" \\ 100% +/ Zoë ключ';

/** The forms of a secret a service may write, computed here independently of the redactor. */
function formsOf(secret: string): string[] {
  const escaped = JSON.stringify(secret).slice(1, -1);
  return [
    secret,
    escaped,
    JSON.stringify(escaped).slice(1, -1),
    escaped.replace(/[\u007f-\uffff]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`),
    encodeURIComponent(secret),
    encodeURIComponent(secret).replace(/%[0-9A-F]{2}/g, (code) => code.toLowerCase()),
    encodeURIComponent(secret).replace(/%20/g, '+'),
    secret.replace(/&/g, '&amp;').replace(/"/g, '&quot;'),
    Buffer.from(`${secret}:`).toString('base64'),
    Buffer.from(`api:${secret}`).toString('base64url'),
    // Pieces that would give the key away on their own.
    'Zoë ключ',
    'Zo\\u00eb',
    '100% +/',
  ];
}

let root: string;
let sandbox: RunningSandbox | undefined;
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'service-secrets-'));
});
afterEach(async () => {
  await sandbox?.close();
  sandbox = undefined;
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** Every file under a directory, as bytes. */
function filesUnder(dir: string): Array<[string, Buffer]> {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .map((name) => join(dir, name))
    .filter((path) => statSync(path).isFile())
    .map((path) => [path, readFileSync(path)]);
}

describe('a key echoed in every encoding', () => {
  it('appears in no form in stdout, stderr, the NDJSON log, the ledger file or the reports', async () => {
    sandbox = await startSandbox({ apiKey: KEY, echoCredentials: true, processingMs: 0 });
    const data = writeE2eExport(join(root, 'export'), 20, 'SEC', 'spec');
    const state = join(root, 'state');
    const log = join(root, 'push.ndjson');
    const env = { MIGRATE_API_KEY: KEY };
    const base = ['--base-url', sandbox.url, '--state', state];
    const push = await runMigrate(['push', data.dir, ...base, '--log-file', log, '--concurrency', '4'], env);
    expect(push.code, push.stderr).toBe(5);
    const status = await runMigrate(['status', 'ACME', ...base, '--max-rows', '50'], env);
    const report = await runMigrate(['report', '--state', state, '--out', join(root, 'report'), '--html']);
    expect(report.code, report.stderr).toBe(0);
    // A key the service refuses, in a fresh state directory: the token mutation's error echoes it, the run stops.
    const refusedState = join(root, 'refused-state');
    const refused = await runMigrate(['push', data.dir, '--base-url', sandbox.url, '--state', refusedState], {
      MIGRATE_API_KEY: `${KEY}-wrong`,
    });
    expect(refused.code, refused.stderr).toBe(3);

    const outputs = [push, status, report, refused].flatMap((run) => [run.stdout, run.stderr]);
    const files = [
      ...filesUnder(state),
      ...filesUnder(refusedState),
      ...filesUnder(join(root, 'report')),
      [log, readFileSync(log)] as const,
    ];
    // The echo reached what is kept: ERRORED accounts' latest_error, refused payment instructions, the run's reason.
    const kept = Buffer.concat([...files.map(([, bytes]) => bytes), Buffer.from(outputs.join('\n'))]);
    expect(kept.includes(Buffer.from('[REDACTED]'))).toBe(true);
    expect(kept.includes(Buffer.from('[echo: Authorization'))).toBe(true);
    for (const form of formsOf(KEY)) {
      for (const [index, text] of outputs.entries())
        expect(text.includes(form), `output ${index}: ${form}`).toBe(false);
      for (const [path, bytes] of files) expect(bytes.includes(Buffer.from(form)), `${path}: ${form}`).toBe(false);
    }
  });
});
