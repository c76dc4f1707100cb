import { spawnSync } from 'node:child_process';
import { appendFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.js';
import { writeE2eExport } from './export.js';
import { push, ROOT } from './helpers.js';

// Records for an account that exists nowhere (not in the export, no import process on the platform) are data errors:
// listed in fix-data.csv at their file and line, held back without a request on later runs, and sent once the account
// comes in an export (docs/reruns.md).

let root: string;
let sandbox: RunningSandbox;
beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'orphans-e2e-'));
  sandbox = await startSandbox({ processingMs: 20 });
});
afterAll(async () => {
  await sandbox.close();
  rmSync(root, { recursive: true, force: true });
});

function report(state: string, out: string): Array<Record<string, string>>[] {
  const run = spawnSync(process.execPath, [join(ROOT, 'bin', 'migrate.js'), 'report', '--state', state, '--out', out], {
    encoding: 'utf8',
  });
  expect(run.status, run.stderr).toBe(0);
  return ['fix-data.csv', 'retry.csv'].map(
    (name) => parse(readFileSync(join(out, name), 'utf8'), { columns: true }) as Array<Record<string, string>>,
  );
}

const lookups = (number: string): number =>
  sandbox.inspect.requests().filter((request) => request.path.includes(`/${number}`)).length;

describe('records of an account that exists nowhere', () => {
  it('are data errors at their lines, not retried, and sent once the account comes', async () => {
    const data = writeE2eExport(join(root, 'ghost'), 2, 'GH', 'spec', { clean: true });
    const state = join(root, 'ghost', 'state');
    // Sorted after the export's accounts (GH-... < GHOST-1): two notes and a transaction for an account in no file;
    // their import supplier is the configured one (--supplier).
    appendFileSync(
      join(data.dir, 'notes.csv'),
      'GHOST-1,first,2024-01-01T09:00:00Z\nGHOST-1,second,2024-01-02T09:00:00Z\n',
    );
    // Dated today: within the sandbox's open statement period (from the first of this month), as a transaction sent
    // after the extract is.
    const today = new Date().toISOString().slice(0, 10);
    appendFileSync(join(data.dir, 'transactions.csv'), `GHOST-1,GHOST-1-T1,${today},1.00,CHARGE,IMPORTED_CHARGE\n`);
    const first = await push(sandbox, data.dir, state, ['--supplier', 'ACME']);
    expect(first.code, first.stderr).toBe(5);
    expect(first.stdout).toContain('1 account needs data fixes (3 records wait for them; fix-data.csv)');
    expect(sandbox.inspect.account('ACME', 'GH-0001')?.status).toBe('PROCESSED');
    const [fixData, retry] = report(state, join(root, 'ghost', 'report'));
    const noteLines = readFileSync(join(data.dir, 'notes.csv'), 'utf8').split('\n');
    const transactionLines = readFileSync(join(data.dir, 'transactions.csv'), 'utf8').split('\n');
    expect(
      fixData?.map((row) => [row['external_account_number'], row['file'], row['line'], row['attr'], row['code']]),
    ).toEqual([
      [
        'GHOST-1',
        'notes.csv',
        String(noteLines.indexOf('GHOST-1,first,2024-01-01T09:00:00Z') + 1),
        'note',
        'account_not_found',
      ],
      [
        'GHOST-1',
        'notes.csv',
        String(noteLines.indexOf('GHOST-1,second,2024-01-02T09:00:00Z') + 1),
        'note',
        'account_not_found',
      ],
      [
        'GHOST-1',
        'transactions.csv',
        String(transactionLines.findIndex((line) => line.startsWith('GHOST-1,')) + 1),
        'transaction',
        'account_not_found',
      ],
    ]);
    expect(fixData?.[0]?.['found_by']).toBe('platform lookup (no such account)');
    expect(retry).toEqual([]);
    // A rerun asks nothing about it: nothing changed.
    const asked = lookups('GHOST-1');
    const again = await push(sandbox, data.dir, state, ['--supplier', 'ACME']);
    expect(again.code).toBe(5);
    expect(lookups('GHOST-1')).toBe(asked);
    // The account comes in the export: created, and its records sent.
    appendFileSync(
      join(data.dir, 'accounts.csv'),
      'GHOST-1,ACME,DOMESTIC,Ghost,ghost@example.org,1 High Street,York,YO1 7HH,GB,MONTHLY,1,false,ONLINE\n',
    );
    appendFileSync(join(data.dir, 'customers.csv'), 'GHOST-1,Gus,Ghost,gus@example.org,+447911123999\n');
    appendFileSync(join(data.dir, 'supply_addresses.csv'), 'GHOST-1,1 High Street,YO1 7HH,2024-01-01\n');
    const arrived = await push(sandbox, data.dir, state, ['--supplier', 'ACME']);
    expect(arrived.code, arrived.stderr).toBe(0);
    const ghost = sandbox.inspect.account('ACME', 'GHOST-1');
    expect(
      ghost?.notes
        .filter((note) => !note.bySandbox)
        .map((note) => note.body)
        .sort(),
    ).toEqual(['first', 'second']);
    expect(ghost?.transactions.map((transaction) => transaction.transactionId)).toEqual(['GHOST-1-T1']);
  });
});
