import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { parse } from 'csv-parse/sync';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.js';
import { writeE2eExport } from './export.js';
import { runMigrate } from './run-push.js';

// A service that contradicts itself or the ledger about an account: the account needs a person and is never counted
// as done; push, status and report name it (docs/operators-guide.md "Contradictions"). Through the real binary
// against the sandbox (NONUM-: v1 COMPLETED without a platform account number).

let root: string;
let sandbox: RunningSandbox | undefined;
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'contradictions-'));
});
afterEach(async () => {
  await sandbox?.close();
  sandbox = undefined;
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

const env = (running: RunningSandbox) => ({ MIGRATE_API_KEY: running.apiKey });

describe('the service contradicts itself', () => {
  it('COMPLETED without a platform account number: never done; push, status and the report name it', async () => {
    sandbox = await startSandbox({ processingMs: 0 });
    const data = writeE2eExport(join(root, 'nonum'), 3, 'NONUM', 'spec', { clean: true });
    const state = join(root, 'nonum-state');
    const run = await runMigrate(['push', data.dir, '--base-url', sandbox.url, '--state', state], env(sandbox));
    expect(run.code, run.stderr).toBe(5);
    expect(run.stdout).toContain('service_contradiction');
    // Nothing was added to accounts the service cannot name.
    expect(sandbox.inspect.requests().filter((entry) => entry.path.includes('/notes/create/'))).toHaveLength(0);

    const status = await runMigrate(['status', 'ACME', '--base-url', sandbox.url, '--state', state], env(sandbox));
    expect(status.code, status.stderr).toBe(5);
    expect(status.stdout).toContain('service_contradiction');
    expect(status.stdout).not.toMatch(/all 3 accounts done/);

    const out = join(root, 'nonum-report');
    expect((await runMigrate(['report', '--state', state, '--out', out, '--html'])).code).toBe(0);
    const rows = parse(readFileSync(join(out, 'accounts.csv'), 'utf8'), { columns: true }) as Array<
      Record<string, string>
    >;
    expect(rows).toHaveLength(3);
    for (const row of rows) {
      expect(row['state']).toBe('errored');
      expect(row['error_code']).toBe('service_contradiction');
      expect(row['error_detail']).toContain('COMPLETED with an empty platform_account_number');
    }
    expect(readFileSync(join(out, 'report.html'), 'utf8')).toContain('service_contradiction');
  });
});

describe('the service and the ledger hold different platform account numbers', () => {
  it('status compares them: every swapped number is a disagreement, with both numbers, and exit 5', async () => {
    sandbox = await startSandbox({ processingMs: 0 });
    const data = writeE2eExport(join(root, 'swap'), 4, 'SWAP', 'spec', { clean: true });
    const state = join(root, 'swap-state');
    const run = await runMigrate(['push', data.dir, '--base-url', sandbox.url, '--state', state], env(sandbox));
    expect(run.code, run.stderr).toBe(0);
    const before = await runMigrate(['status', 'ACME', '--base-url', sandbox.url, '--state', state], env(sandbox));
    expect(before.code, before.stdout).toBe(0);

    // Every number in the ledger moved to the next account (a ledger restored from the wrong copy, a tool's bug).
    const db = new Database(join(state, 'ledger.sqlite'));
    const accounts = db
      .prepare('SELECT id, platform_account_number AS number FROM accounts ORDER BY external_account_number')
      .all() as Array<{ id: number; number: string }>;
    const update = db.prepare('UPDATE accounts SET platform_account_number = ? WHERE id = ?');
    accounts.forEach((account, index) => update.run(accounts[(index + 1) % accounts.length]?.number, account.id));
    db.close();

    const after = await runMigrate(
      ['status', 'ACME', '--base-url', sandbox.url, '--state', state, '--json'],
      env(sandbox),
    );
    expect(after.code, after.stderr).toBe(5);
    const doc = JSON.parse(after.stdout) as {
      counts: { differs: number };
      differs: Array<{
        external_account_number: string;
        ledger_platform_account_number: string;
        platform_account_number: string;
      }>;
    };
    expect(doc.counts.differs).toBe(4);
    for (const row of doc.differs) {
      const truth = sandbox.inspect.account('ACME', row.external_account_number)?.platformAccountNumber;
      expect(row.platform_account_number).toBe(truth);
      expect(row.ledger_platform_account_number).not.toBe(truth);
    }
    const text = await runMigrate(['status', 'ACME', '--base-url', sandbox.url, '--state', state], env(sandbox));
    expect(text.stdout).toMatch(/both, disagreeing\s+4/);
    expect(text.stdout).toMatch(/SWAP-0001 {2}ledger: done, service: imported; platform account number: ledger A-/);
  });
});
