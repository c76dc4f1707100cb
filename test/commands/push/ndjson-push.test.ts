import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createImportServiceClient } from '../../../src/api/index.js';
import { loadMigrateConfig } from '../../../src/config/index.js';
import { DEFAULT_ENGINE_SETTINGS, runPush, sourceOf } from '../../../src/engine/index.js';
import { Ledger } from '../../../src/ledger/index.js';
import { openExport } from '../../../src/intake/index.js';
import { createNdjsonLogSink } from '../../../src/commands/push/ndjson-log.js';
import { startSandbox, type RunningSandbox } from '../../../src/sandbox/index.js';
import { writeOpsExport, type OpsExport } from '../report/ops-export.js';

// The log sink fed by a real push (export reader, engine, client, sandbox over HTTP): until the
// push command wires --log-file, this is how its file is made. It must tell the run's story and
// hold no secret: not the API key, not a token, no personal data of the export.

let dir: string;
let sandbox: RunningSandbox;
let ops: OpsExport;
let logPath: string;
let runId: number;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'ndjson-push-'));
  // A distinctive key, so that any trace of it in the log is found.
  sandbox = await startSandbox({ processingMs: 20, apiKey: 'sk-live-VERY-SECRET-KEY-123' });
  ops = writeOpsExport(dir);
  const ledger = Ledger.open(join(dir, 'state'));
  const client = createImportServiceClient({ baseUrl: sandbox.url, credentials: { apiKey: sandbox.apiKey } });
  const config = await loadMigrateConfig({ cwd: dir, exportDir: ops.dir, env: {} });
  const reader = await openExport(ops.dir, config, { scratchDir: join(dir, 'state') });
  logPath = join(dir, 'push.ndjson');
  runId = ledger.startRun('push', {});
  const log = createNdjsonLogSink(logPath, {
    runId,
    accountNumberOf: (id) => ledger.accountById(id)?.externalAccountNumber,
  });
  let result: Awaited<ReturnType<typeof runPush>> | undefined;
  try {
    result = await runPush({
      ledger,
      client,
      settings: {
        ...DEFAULT_ENGINE_SETTINGS,
        pollSchedule: { ...DEFAULT_ENGINE_SETTINGS.pollSchedule, firstDelayMs: 20, maxDelayMs: 100 },
      },
      sink: log,
      source: sourceOf(reader.entries()),
    });
  } finally {
    log.close(result === undefined ? undefined : { outcome: result.reason, exitCode: result.exitCode });
    await reader.close();
    ledger.close();
    await client.close();
  }
});

afterAll(async () => {
  await sandbox?.close();
  rmSync(dir, { recursive: true, force: true });
});

const lines = (): Array<Record<string, unknown>> =>
  readFileSync(logPath, 'utf8')
    .trimEnd()
    .split('\n')
    .map((line) => JSON.parse(line) as Record<string, unknown>);

describe('the log of a real push', () => {
  it("tells each account's steps with run id and external account number", () => {
    const all = lines();
    expect(all.every((line) => line['run'] === runId && typeof line['time'] === 'string')).toBe(true);
    const errored = all.filter((line) => line['event'] === 'account' && line['outcome'] === 'errored');
    expect(errored.map((line) => line['account']).sort()).toEqual(ops.errored);
    expect(errored.every((line) => line['step'] === 'poll' && line['code'] === 'account_creation_failed')).toBe(true);
    const done = all
      .filter((line) => line['event'] === 'account' && line['outcome'] === 'done')
      .map((line) => line['account']);
    expect(done.sort()).toEqual([...ops.done, 'OPS-0005'].sort());
    const refused = all.find((line) => line['event'] === 'items' && line['outcome'] === 'failed');
    expect(refused).toMatchObject({ account: 'OPS-0005', step: 'payment_instruction', failed: 1 });
    expect(all[0]).toMatchObject({ event: 'log_opened' });
    expect(all.at(-1)).toMatchObject({ event: 'log_closed', outcome: 'finished', exit_code: 5 });
  });

  it('has one line per account found invalid while staging, with its first problem', () => {
    const invalid = lines().filter((line) => line['step'] === 'validate');
    expect(invalid.map((line) => line['account']).sort()).toEqual([...ops.invalid].sort());
    for (const line of invalid) {
      expect(line).toMatchObject({ event: 'account', outcome: 'invalid' });
      const planted = ops.planted.filter((error) => error.account === line['account'] && !error.byService);
      expect(planted.map((error) => `${error.file}:${error.line}`)).toContain(
        `${String(line['file'])}:${String(line['line'])}`,
      );
      expect(line['code']).toMatch(/^[a-z_]+$/);
      expect(line['issues']).toBeGreaterThanOrEqual(1);
    }
  });

  it('names a code on every failure line', () => {
    const failures = lines().filter(
      (line) =>
        (line['event'] === 'account' &&
          ['invalid', 'errored', 'staged'].includes(String(line['outcome'])) &&
          line['step'] !== 'stage') ||
        (line['event'] === 'items' && line['outcome'] !== 'done') ||
        line['event'] === 'retrying',
    );
    expect(failures.length).toBeGreaterThanOrEqual(ops.invalid.length + ops.errored.length + 1);
    for (const line of failures) expect(line['code'], JSON.stringify(line)).toMatch(/^[A-Za-z_]+$/);
    expect(lines().find((line) => line['event'] === 'items' && line['outcome'] === 'failed')).toMatchObject({
      code: expect.stringMatching(/./) as unknown,
    });
  });

  it('holds no secret and no personal data, and is 0600', () => {
    const text = readFileSync(logPath, 'utf8');
    expect(text).not.toContain(sandbox.apiKey);
    // The sandbox's access tokens are JWTs (eyJ...), its refresh tokens 48 hex digits.
    expect(text).not.toMatch(/eyJ[\w-]+\.[\w-]+/);
    expect(text).not.toMatch(/[0-9a-f]{40,}/);
    for (const personal of ops.personal) expect(text, personal).not.toContain(personal);
    expect(text).not.toContain('@');
    expect(statSync(logPath).mode & 0o777).toBe(0o600);
  });
});
