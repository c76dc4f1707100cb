import { existsSync, mkdirSync, mkdtempSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.js';
import { writeE2eExport } from './export.js';
import { expectExactState, push, writesReceived } from './helpers.js';

// Every entry of the export directory read, listed as not read, or refused, through the real binary against the
// sandbox (docs/export-format.md "Files"): a notes file reached through a symbolic link lands its notes; an entry
// named as an export file that is not a file stops the push before anything is sent.

let root: string;
let sandbox: RunningSandbox;
beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'entries-e2e-'));
  sandbox = await startSandbox({ processingMs: 20 });
});
afterAll(async () => {
  await sandbox.close();
  rmSync(root, { recursive: true, force: true });
});

describe('migrate push and the entries of the export directory', () => {
  it('reads a notes file through a symbolic link and says so; lists near misses, directories and links to nothing', async () => {
    const data = writeE2eExport(join(root, 'linked'), 4, 'LNK', 'spec', { clean: true });
    const kept = join(root, 'linked', 'notes-kept-elsewhere.csv');
    renameSync(join(data.dir, 'notes.csv'), kept);
    symlinkSync(kept, join(data.dir, 'notes.csv'));
    writeFileSync(join(data.dir, 'Notes.CSV '), 'external_account_number,body,created_at\n');
    writeFileSync(join(data.dir, 'transactions.csv.bak'), 'external_account_number\n');
    mkdirSync(join(data.dir, 'archive'));
    symlinkSync('statements-2023.csv', join(data.dir, 'old-statements'));
    const result = await push(sandbox, data.dir, join(root, 'linked', 'state'), ['--concurrency', '4']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toContain(`migrate: Read through symbolic links: notes.csv -> ${kept}.\n`);
    expect(result.stderr).toContain('migrate: Not read (not export files): 4 entries\n');
    expect(result.stderr).toContain(
      'migrate:   "Notes.CSV ": its name holds a space or an invisible character; if it is the notes file, ' +
        'rename it to "Notes.CSV"\n',
    );
    expect(result.stderr).toContain('migrate:   archive: a directory: subdirectories are not read\n');
    expect(result.stderr).toContain('migrate:   old-statements: a symbolic link that leads to "statements-2023.csv"');
    expect(result.stderr).toContain('migrate:   transactions.csv.bak: named like transactions.csv with ".bak"');
    expect(result.stdout).toContain(
      'not read (not export files): "Notes.CSV ", archive, old-statements, transactions.csv.bak',
    );
    // Every note of the linked file is on the platform.
    await expectExactState(sandbox, data, join(root, 'linked', 'state'), expect);
  });

  it('refuses a directory named notes.csv before the state directory is made, sending nothing', async () => {
    const data = writeE2eExport(join(root, 'directory'), 2, 'DIR', 'spec', { clean: true });
    rmSync(join(data.dir, 'notes.csv'));
    mkdirSync(join(data.dir, 'notes.csv'));
    const state = join(root, 'directory', 'state');
    const before = writesReceived(sandbox);
    const result = await push(sandbox, data.dir, state);
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(
      'migrate: notes.csv: is a directory, not a file; an export file must be a regular file (or a symbolic link ' +
        'to one): put the file in its place.\n',
    );
    expect(existsSync(state)).toBe(false);
    expect(writesReceived(sandbox)).toBe(before);
  });
});
