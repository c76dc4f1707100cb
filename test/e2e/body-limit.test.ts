import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.js';
import { writeE2eExport, type E2eExport } from './export.js';
import { runMigrate } from './run-push.js';

// A service behind a request body limit (nginx's client_max_body_size, 1 MiB by default): post-import requests are
// bounded by bytes as well as by count, a 413 splits a request down to one record, and a record still refused alone
// is that record's failure while the account's other records go on (docs/limits.md). Through the real binary.

const MIB = 1024 * 1024;
let root: string;
/** BODY-0001 with 1,100 notes of 1 KB. */
let many: E2eExport;
/** LONE-0002 with a note of 9,000 characters and a short one. */
let lone: E2eExport;
let sandbox: RunningSandbox | undefined;

function writeNotes(data: E2eExport, rows: string[]): void {
  writeFileSync(join(data.dir, 'notes.csv'), `${['external_account_number,body,created_at', ...rows].join('\n')}\n`);
}

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'body-limit-'));
  many = writeE2eExport(join(root, 'many'), 1, 'BODY', 'spec', { clean: true, order: 'sorted' });
  const filler = 'x'.repeat(1000);
  writeNotes(
    many,
    Array.from({ length: 1100 }, (_, n) => `BODY-0001,note ${n} ${filler},2026-01-01T09:00:00Z`),
  );
  lone = writeE2eExport(join(root, 'lone'), 2, 'LONE', 'spec', { clean: true, order: 'sorted' });
  writeNotes(lone, [
    `LONE-0002,${'y'.repeat(9000)},2026-01-01T09:00:00Z`,
    'LONE-0002,a short note,2026-01-01T09:00:00Z',
  ]);
});
afterEach(async () => {
  await sandbox?.close();
  sandbox = undefined;
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

function refusedNotes(running: RunningSandbox): number {
  return running.inspect
    .requests()
    .filter((entry) => entry.path === '/v1/data-import/notes/create/' && entry.status === 413).length;
}

function push(running: RunningSandbox, data: E2eExport, state: string, extra: string[] = []) {
  return runMigrate(['push', data.dir, '--base-url', running.url, '--state', state, ...extra], {
    MIGRATE_API_KEY: running.apiKey,
  });
}

describe('post-import requests behind a 1 MiB body limit', () => {
  it('are bounded by bytes: 1,100 notes of 1 KB go without a single 413', async () => {
    sandbox = await startSandbox({ processingMs: 0, maxBodyBytes: MIB });
    const run = await push(sandbox, many, join(root, 'bounded'));
    expect(run.code, run.stderr).toBe(0);
    expect(sandbox.inspect.account('ACME', 'BODY-0001')?.notes).toHaveLength(1100);
    expect(refusedNotes(sandbox)).toBe(0);
    // About 500 notes of 1 KB in 512 KiB: three requests, where one of 1,000 notes (about 1 MB) was refused.
    const requests = sandbox.inspect.requests().filter((entry) => entry.path === '/v1/data-import/notes/create/');
    expect(requests).toHaveLength(3);
  });

  it('a 413 splits the request and sends the halves (--batch-bytes above the limit)', async () => {
    sandbox = await startSandbox({ processingMs: 0, maxBodyBytes: MIB });
    const run = await push(sandbox, many, join(root, 'split'), ['--batch-bytes', String(8 * MIB)]);
    expect(run.code, run.stderr).toBe(0);
    expect(sandbox.inspect.account('ACME', 'BODY-0001')?.notes).toHaveLength(1100);
    expect(refusedNotes(sandbox)).toBe(1);
  });
});

describe('one record larger than the service takes', () => {
  it("is that record's failure with the service's words; the account's other records are not held behind it", async () => {
    sandbox = await startSandbox({ processingMs: 0, maxBodyBytes: 8 * 1024 });
    const state = join(root, 'lone-state');
    const run = await push(sandbox, lone, state);
    expect(run.code, run.stderr).toBe(5);
    expect(run.stdout).toContain('request_too_large');
    // The two notes together, then the large one alone.
    expect(refusedNotes(sandbox)).toBe(2);
    const account = sandbox.inspect.account('ACME', 'LONE-0002');
    expect(account?.notes.map((note) => note.body)).toEqual(['a short note']);
    expect(account?.transactions).toHaveLength(lone.transactions.get('LONE-0002')?.length ?? -1);
    expect(account?.historicalStatements).toHaveLength(lone.statements.get('LONE-0002')?.length ?? -1);
    const status = await runMigrate(['status', 'ACME', '--base-url', sandbox.url, '--state', state, '--json'], {
      MIGRATE_API_KEY: sandbox.apiKey,
    });
    const doc = JSON.parse(status.stdout) as { items_outstanding: unknown[] };
    expect(doc.items_outstanding).toEqual([
      expect.objectContaining({ external_account_number: 'LONE-0002', code: 'request_too_large', line: 2 }),
    ]);
    // Refused by the service: not sent again until its data changes.
    const rerun = await push(sandbox, lone, state);
    expect(rerun.code, rerun.stderr).toBe(5);
    expect(refusedNotes(sandbox)).toBe(2);
  });
});
