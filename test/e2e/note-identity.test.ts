import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.js';
import { writeE2eExport, type E2eExport } from './export.js';
import { runMigrate } from './run-push.js';

// The service keeps one note per body and created_at (spec "Create notes"): two rows of one account with the same
// body and created_at that differ otherwise (is_pinned) would lose one row's fields without a word; identical rows are
// one note. Through the real binary: validate and push name both lines of a conflict, and say how many identical rows
// they counted once.

let root: string;
let data: E2eExport;
let sandbox: RunningSandbox;
const at = '2026-01-01T09:00:00Z';

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'note-identity-'));
  data = writeE2eExport(root, 3, 'NOTE', 'spec', { clean: true, order: 'sorted' });
  writeFileSync(
    join(data.dir, 'notes.csv'),
    [
      'external_account_number,body,created_at,is_pinned',
      `NOTE-0001,Call before visiting,${at},true`,
      `NOTE-0001,Call before visiting,${at},false`,
      `NOTE-0002,Same note,${at},false`,
      `NOTE-0002,Same note,${at},false`,
      `NOTE-0003,Another note,${at},`,
    ].join('\n') + '\n',
  );
  sandbox = await startSandbox({ processingMs: 0 });
});
afterAll(async () => {
  await sandbox.close();
  rmSync(root, { recursive: true, force: true });
});

describe('notes with the same body and created_at', () => {
  it('validate: an error at both lines of the conflict; the identical rows counted once and said so', async () => {
    const run = await runMigrate(['validate', data.dir]);
    expect(run.code, run.stderr).toBe(5);
    expect(run.stdout).toMatch(/notes\.csv:2 is_pinned {2}conflicting_notes {2}account NOTE-0001: .*notes\.csv line 3/);
    expect(run.stdout).toMatch(/notes\.csv:3 is_pinned {2}conflicting_notes {2}account NOTE-0001: .*notes\.csv line 2/);
    expect(run.stdout).toContain('1 note row(s) identical to an earlier note of the same account');
    expect(run.stdout).toContain('3 account(s): 2 valid, 1 invalid');
    const json = await runMigrate(['validate', data.dir, '--json']);
    expect((JSON.parse(json.stdout) as { duplicate_notes: number }).duplicate_notes).toBe(1);
  });

  it('push: the account with the conflict is held back at both lines, the identical rows go as one note', async () => {
    const state = join(root, 'state');
    const run = await runMigrate(['push', data.dir, '--base-url', sandbox.url, '--state', state], {
      MIGRATE_API_KEY: sandbox.apiKey,
    });
    expect(run.code, run.stderr).toBe(5);
    expect(run.stdout).toContain('1 note row(s) identical to an earlier note of the same account');
    expect(sandbox.inspect.account('ACME', 'NOTE-0001')).toBeUndefined();
    expect(sandbox.inspect.account('ACME', 'NOTE-0002')?.status).toBe('PROCESSED');
    const sentNotes = sandbox.inspect
      .requests()
      .filter((entry) => entry.path === '/v1/data-import/notes/create/' && entry.status === 201);
    expect(sentNotes).toHaveLength(2);
    const out = join(root, 'report');
    expect((await runMigrate(['report', '--state', state, '--out', out])).code).toBe(0);
    const fixData = readFileSync(join(out, 'fix-data.csv'), 'utf8');
    expect(fixData).toMatch(/NOTE-0001,.*notes\.csv,2,.*conflicting_notes/);
    expect(fixData).toMatch(/NOTE-0001,.*notes\.csv,3,.*conflicting_notes/);
  });
});
